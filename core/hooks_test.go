package core

import (
	"reflect"
	"testing"
)

// TestHooksRunInOrder: filters run in the order added on their own name
// only, actions likewise; a name with nothing added passes the value
// through and has no action.
func TestHooksRunInOrder(t *testing.T) {
	var h Hooks
	h.AddFilter("subject", func(v any, _ ...any) any { return v.(string) + " a" })
	h.AddFilter("subject", func(v any, _ ...any) any { return v.(string) + " b" })
	h.AddFilter("other", func(v any, _ ...any) any { return "other" })
	var ran []string
	h.AddAction("sent", func(args ...any) { ran = append(ran, "first") })
	h.AddAction("sent", func(args ...any) { ran = append(ran, "second") })
	tests := []struct {
		name       string
		filter     string
		wantValue  any
		wantAction bool
	}{
		{"subject", "subject", "s a b", false},
		{"sent", "sent", "s", true},
		{"nothing added", "none", "s", false},
	}
	for _, tc := range tests {
		if got := h.ApplyFilters(tc.filter, "s"); got != tc.wantValue {
			t.Errorf("%s: ApplyFilters = %v, want %v", tc.name, got, tc.wantValue)
		}
		if got := h.HasAction(tc.filter); got != tc.wantAction {
			t.Errorf("%s: HasAction = %v, want %v", tc.name, got, tc.wantAction)
		}
	}
	h.DoAction("sent")
	if want := []string{"first", "second"}; !reflect.DeepEqual(ran, want) {
		t.Errorf("actions ran %v, want %v", ran, want)
	}
}
