package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/core"
)

// TestStatsEmailControls: the stopped core emails are counted over the
// range's calendar days in the site's time zone.
func TestStatsEmailControls(t *testing.T) {
	ctx := context.Background()
	loc := time.FixedZone("UTC+5:30", 19800)
	now := at(t, "2024-06-30T10:00:00Z") // 15:30 local
	counts := apptest.NewEmailControlCounter()
	for _, c := range []struct {
		kind, day string
		n         int64
	}{
		{"comment_moderation", "2024-06-30", 2}, // today
		{"new_user_admin", "2024-06-29", 1},
		{"comment_moderation", "2024-06-01", 1}, // 30th day back
		{"comment_moderation", "2024-05-31", 3}, // 31st
	} {
		if err := counts.AddEmailControlCount(ctx, c.kind, c.day, c.n); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name       string
		q          dashboard.RangeQuery
		suppressed int64
		byKind     map[string]int64
	}{
		{"default range", dashboard.RangeQuery{}, 4, map[string]int64{"comment_moderation": 3, "new_user_admin": 1}},
		{"today", dashboard.RangeQuery{Range: "today"}, 2, map[string]int64{"comment_moderation": 2}},
		{"from/to", dashboard.RangeQuery{From: "2024-05-31", To: "2024-05-31"}, 3, map[string]int64{"comment_moderation": 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &dashboard.Service{Outcomes: &outcomes{}, Queue: queue{}, Site: site{loc: loc},
				EmailControls: counts, Now: func() time.Time { return now }}
			st, err := s.Stats(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			ec := st.EmailControls
			if ec == nil || ec.Suppressed != tt.suppressed || len(ec.ByKind) != len(core.EmailControlKinds) {
				t.Fatalf("email controls %+v, want %d suppressed over every kind", ec, tt.suppressed)
			}
			for _, k := range core.EmailControlKinds {
				if ec.ByKind[k.Kind] != tt.byKind[k.Kind] {
					t.Errorf("%s: %d, want %d", k.Kind, ec.ByKind[k.Kind], tt.byKind[k.Kind])
				}
			}
		})
	}
	s := &dashboard.Service{Outcomes: &outcomes{}, Queue: queue{}, Now: func() time.Time { return now }}
	if st, err := s.Stats(ctx, dashboard.RangeQuery{}); err != nil || st.EmailControls != nil {
		t.Fatalf("without a counter: %+v, %v", st, err)
	}
}
