package storetest

import (
	"context"
	"maps"
	"sync"
	"testing"
)

// emailControlTests returns the contract tests of the email control
// counts.
func (s *suite) emailControlTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"EmailControlCounts", s.testEmailControlCounts},
	}
}

// testEmailControlCounts adds counts concurrently and reads them back
// over open and closed day ranges.
func (s *suite) testEmailControlCounts(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if err := db.EmailControls().AddEmailControlCount(ctx, "new_user_admin", "2026-03-02", 1); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, c := range []struct {
		kind, day string
		n         int64
	}{{"new_user_admin", "2026-03-01", 2}, {"comment_moderation", "2026-03-03", 5}} {
		if err := db.EmailControls().AddEmailControlCount(ctx, c.kind, c.day, c.n); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		from, to string
		want     map[string]int64
	}{
		{"", "", map[string]int64{"new_user_admin": 12, "comment_moderation": 5}},
		{"2026-03-02", "", map[string]int64{"new_user_admin": 10, "comment_moderation": 5}},
		{"2026-03-01", "2026-03-02", map[string]int64{"new_user_admin": 12}},
		{"2026-03-04", "", map[string]int64{}},
	} {
		got, err := db.EmailControls().EmailControlCounts(ctx, tt.from, tt.to)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, tt.want) {
			t.Errorf("counts %q..%q = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
	for _, bad := range [][2]string{{"", "2026-03-01"}, {"x", "2026-3-1"}} {
		if err := db.EmailControls().AddEmailControlCount(ctx, bad[0], bad[1], 1); err == nil {
			t.Errorf("AddEmailControlCount(%q, %q) succeeded", bad[0], bad[1])
		}
	}
}
