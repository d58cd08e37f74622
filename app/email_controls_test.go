package app_test

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

func TestEmailControls(t *testing.T) {
	ctx := context.Background()
	counts := apptest.NewEmailControlCounter()
	svc := &app.EmailControls{Store: apptest.NewSettingsStore(), Counts: counts}
	for _, c := range []struct {
		kind, day string
	}{{"comment_moderation", "2026-01-01"}, {"comment_moderation", "2026-02-01"}, {"new_user_admin", "2026-02-01"}} {
		if err := counts.AddEmailControlCount(ctx, c.kind, c.day, 1); err != nil {
			t.Fatal(err)
		}
	}
	st, err := svc.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Controls) != len(core.EmailControlKinds) || st.Suppressed != 3 {
		t.Fatalf("got %d controls, %d suppressed", len(st.Controls), st.Suppressed)
	}
	for _, c := range st.Controls {
		if !c.Enabled {
			t.Errorf("%s is off by default", c.Kind)
		}
	}

	bad := []map[string]any{
		{"no_such_kind": false},
		{"comment_moderation": "off"},
		{"comment_moderation": false, "nope": true}, // nothing stored when one fails
	}
	for _, patch := range bad {
		if _, err := svc.Update(ctx, patch); core.ErrorCode(err) != core.EINVALID {
			t.Fatalf("Update(%v) = %v, want a validation error", patch, err)
		}
	}
	st, err = svc.Update(ctx, map[string]any{"comment_moderation": false, "auto_update_core": false})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]app.EmailControl{}
	for _, c := range st.Controls {
		got[c.Kind] = c
	}
	for kind, want := range map[string]app.EmailControl{
		"comment_moderation": {Enabled: false, Count: 2},
		"auto_update_core":   {Enabled: false},
		"new_user_admin":     {Enabled: true, Count: 1},
		"new_user_user":      {Enabled: true},
	} {
		if got[kind].Enabled != want.Enabled || got[kind].Count != want.Count {
			t.Errorf("%s = enabled %v count %d, want %v %d", kind, got[kind].Enabled, got[kind].Count, want.Enabled, want.Count)
		}
	}
	if st, _ = svc.Update(ctx, map[string]any{"comment_moderation": true}); st.Controls[6].Kind != "comment_moderation" || !st.Controls[6].Enabled {
		t.Fatalf("comment_moderation not switched back on: %+v", st.Controls[6])
	}
}
