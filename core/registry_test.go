package core_test

import (
	"slices"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

func TestMovedDestinations(t *testing.T) {
	d := &core.Driver{Fields: []core.Field{
		{Key: "host", Type: core.FieldString, Destination: true},
		{Key: "port", Type: core.FieldInteger, Default: int64(587), Destination: true},
		{Key: "base_url", Type: core.FieldURL, Destination: true},
		{Key: "from_name", Type: core.FieldString},
	}}
	base := core.Settings{"host": "a.example", "port": int64(587)}
	tests := []struct {
		name  string
		after core.Settings
		want  []string
	}{
		{"same", core.Settings{"host": "a.example", "port": int64(587)}, nil},
		{"JSON number for the same port", core.Settings{"host": "a.example", "port": float64(587)}, nil},
		{"port left to its default", core.Settings{"host": "a.example"}, nil},
		{"empty base_url is no base_url", core.Settings{"host": "a.example", "base_url": ""}, nil},
		{"another field", core.Settings{"host": "a.example", "from_name": "Shop"}, nil},
		{"host", core.Settings{"host": "b.example"}, []string{"host"}},
		{"port", core.Settings{"host": "a.example", "port": float64(2525)}, []string{"port"}},
		{"base_url and an invalid port", core.Settings{"host": "a.example", "port": "x", "base_url": "https://b.example"}, []string{"port", "base_url"}},
	}
	for _, tt := range tests {
		if got := d.MovedDestinations(base, tt.after); !slices.Equal(got, tt.want) {
			t.Errorf("%s: moved %v, want %v", tt.name, got, tt.want)
		}
	}
}
