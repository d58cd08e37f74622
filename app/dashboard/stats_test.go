package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/core"
)

func rate(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

func TestStats(t *testing.T) {
	ctx := context.Background()
	conns := apptest.NewConnectionStore()
	for _, name := range []string{"primary", "backup", "idle"} {
		if err := conns.CreateConnection(ctx, &core.Connection{Name: name, Driver: "smtp", Settings: core.Settings{}}); err != nil {
			t.Fatal(err)
		}
	}
	// The site is in UTC+5:30; now is 2024-06-30 15:30 local.
	loc := time.FixedZone("UTC+5:30", 19800)
	now := at(t, "2024-06-30T10:00:00Z")
	o := &outcomes{}
	o.add(at(t, "2024-06-29T18:30:00Z"), 1, core.StatusDelivered, 8) // today 00:00 local
	o.add(at(t, "2024-06-30T09:45:00Z"), 1, core.StatusFailed, 2)    // today
	o.add(at(t, "2024-06-29T18:15:00Z"), 2, core.StatusDelivered, 5) // yesterday 23:45 local
	o.add(at(t, "2024-06-24T00:00:00Z"), 2, core.StatusFailed, 5)    // 7th day back
	o.add(at(t, "2024-06-23T18:15:00Z"), 9, core.StatusDelivered, 3) // 8th day back, deleted connection 9
	o.add(at(t, "2024-06-01T00:00:00Z"), 0, core.StatusFailed, 1)    // 30th day back, no connection
	o.add(at(t, "2024-05-31T18:15:00Z"), 1, core.StatusDelivered, 100)

	tests := []struct {
		name                       string
		q                          dashboard.RangeQuery
		today, week, month, rangeC dashboard.Counts
		todayRate                  float64
		conns                      map[int64]dashboard.Counts
	}{
		{
			name:  "default range is the last 30 days",
			today: dashboard.Counts{Delivered: 8, Failed: 2}, week: dashboard.Counts{Delivered: 13, Failed: 7},
			month: dashboard.Counts{Delivered: 16, Failed: 8}, rangeC: dashboard.Counts{Delivered: 16, Failed: 8},
			todayRate: 80,
			conns:     map[int64]dashboard.Counts{0: {Failed: 1}, 1: {Delivered: 8, Failed: 2}, 2: {Delivered: 5, Failed: 5}, 3: {}, 9: {Delivered: 3}},
		},
		{
			name: "range today", q: dashboard.RangeQuery{Range: "today"},
			today: dashboard.Counts{Delivered: 8, Failed: 2}, week: dashboard.Counts{Delivered: 13, Failed: 7},
			month: dashboard.Counts{Delivered: 16, Failed: 8}, rangeC: dashboard.Counts{Delivered: 8, Failed: 2},
			todayRate: 80,
			conns:     map[int64]dashboard.Counts{1: {Delivered: 8, Failed: 2}, 2: {}, 3: {}},
		},
		{
			name: "from/to older than 30 days", q: dashboard.RangeQuery{From: "2024-05-01", To: "2024-06-01"},
			today: dashboard.Counts{Delivered: 8, Failed: 2}, week: dashboard.Counts{Delivered: 13, Failed: 7},
			month: dashboard.Counts{Delivered: 16, Failed: 8}, rangeC: dashboard.Counts{Delivered: 100, Failed: 1},
			todayRate: 80,
			conns:     map[int64]dashboard.Counts{0: {Failed: 1}, 1: {Delivered: 100}, 2: {}, 3: {}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o.calls = 0
			s := &dashboard.Service{Outcomes: o, Queue: queue{Queued: 4, Sending: 1, Delivered: 999, Failed: 999},
				Connections: conns, Site: site{loc: loc}, Now: func() time.Time { return now }}
			st, err := s.Stats(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if o.calls != 1 {
				t.Errorf("%d roll-up reads, want 1", o.calls)
			}
			if st.TimeZone != "UTC+5:30" || st.Totals.Queued != 4 || st.Totals.Sending != 1 {
				t.Errorf("zone %q, queue %+v", st.TimeZone, st.Totals)
			}
			for _, c := range []struct {
				name string
				got  dashboard.PeriodStats
				want dashboard.Counts
			}{{"today", st.Today, tt.today}, {"7 days", st.Last7Days, tt.week}, {"30 days", st.Last30Days, tt.month}, {"range", st.Range, tt.rangeC}} {
				if c.got.Counts != c.want || c.got.Total != c.want.Delivered+c.want.Failed {
					t.Errorf("%s: %+v, want %+v", c.name, c.got.Counts, c.want)
				}
			}
			if st.Totals.Delivered != tt.rangeC.Delivered || st.Totals.Failed != tt.rangeC.Failed {
				t.Errorf("totals %+v, want the range's %+v", st.Totals, tt.rangeC)
			}
			if got := rate(st.Today.SuccessRate); got != tt.todayRate {
				t.Errorf("today's success rate %v, want %v", got, tt.todayRate)
			}
			if got := st.Today.From.Format(time.RFC3339); got != "2024-06-30T00:00:00+05:30" {
				t.Errorf("today starts %s", got)
			}
			if got := st.Last7Days.From.Format(time.RFC3339); got != "2024-06-24T00:00:00+05:30" {
				t.Errorf("7 days start %s", got)
			}
			got := map[int64]dashboard.Counts{}
			for _, c := range st.Connections {
				got[c.ID] = dashboard.Counts{Delivered: c.Delivered, Failed: c.Failed}
				if c.ID == 1 && (c.Name != "primary" || c.Driver != "smtp") {
					t.Errorf("connection 1 named %q %q", c.Name, c.Driver)
				}
				if (c.Delivered+c.Failed == 0) != (c.SuccessRate == nil) {
					t.Errorf("connection %d: rate %v for %d/%d", c.ID, c.SuccessRate, c.Delivered, c.Failed)
				}
			}
			if len(got) != len(tt.conns) {
				t.Errorf("connections %v, want %v", got, tt.conns)
			}
			for id, w := range tt.conns {
				if got[id] != w {
					t.Errorf("connection %d: %+v, want %+v", id, got[id], w)
				}
			}
		})
	}
}

func TestSuccessRate(t *testing.T) {
	tests := []struct {
		c    dashboard.Counts
		want float64 // -1: null
	}{
		{dashboard.Counts{}, -1},
		{dashboard.Counts{Delivered: 3}, 100},
		{dashboard.Counts{Failed: 3}, 0},
		{dashboard.Counts{Delivered: 2, Failed: 1}, 66.67},
		{dashboard.Counts{Delivered: 999999, Failed: 1}, 100},
		{dashboard.Counts{Delivered: 1, Failed: 7}, 12.5},
	}
	for _, tt := range tests {
		if got := rate(tt.c.SuccessRate()); got != tt.want {
			t.Errorf("%+v: %v, want %v", tt.c, got, tt.want)
		}
	}
}

func TestStatsRejectsBadRanges(t *testing.T) {
	now := at(t, "2024-06-30T10:00:00Z")
	for _, tt := range []struct {
		q     dashboard.RangeQuery
		field string
	}{
		{dashboard.RangeQuery{Range: "1y"}, "range"},
		{dashboard.RangeQuery{Range: "7d", Days: "7"}, "range"},
		{dashboard.RangeQuery{From: "2024-06-10", To: "2024-06-09"}, "to"},
		{dashboard.RangeQuery{To: "not-a-date"}, "to"},
		{dashboard.RangeQuery{Days: "-1"}, "days"},
	} {
		o := &outcomes{}
		s := &dashboard.Service{Outcomes: o, Queue: queue{}, Now: func() time.Time { return now }}
		_, err := s.Stats(context.Background(), tt.q)
		if f := fields(err); f[tt.field] == "" {
			t.Errorf("%+v: err = %v, want a validation error on %s", tt.q, err, tt.field)
		}
		if o.calls != 0 {
			t.Errorf("%+v: the roll-up was read", tt.q)
		}
	}
}

func TestStatsWithoutRollupIsUnavailable(t *testing.T) {
	s := &dashboard.Service{Queue: queue{}}
	_, err := s.Stats(context.Background(), dashboard.RangeQuery{})
	if core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Fatalf("err = %v, want unavailable", err)
	}
}

type captureState core.CaptureState

func (c captureState) State(context.Context) (core.CaptureState, error) {
	return core.CaptureState(c), nil
}

// TestStatsShowCapture: the stats carry the staging guard's state and
// count the captured messages apart from the queue.
func TestStatsShowCapture(t *testing.T) {
	now := at(t, "2024-06-30T10:00:00Z")
	s := &dashboard.Service{Outcomes: &outcomes{}, Queue: queue{Queued: 2}, Now: func() time.Time { return now },
		Capture: captureState{Mode: core.CaptureModeCapture, Reason: core.CaptureReasonCopy, Message: "This looks like a copy of https://live.example. Mail is being held.", Captured: 5}}
	st, err := s.Stats(context.Background(), dashboard.RangeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Capture == nil || st.Capture.Reason != core.CaptureReasonCopy || st.Totals.Captured != 5 || st.Totals.Queued != 2 {
		t.Fatalf("stats: totals %+v capture %+v", st.Totals, st.Capture)
	}
	s.Capture = nil
	if st, _ := s.Stats(context.Background(), dashboard.RangeQuery{}); st.Capture != nil || st.Totals.Captured != 0 {
		t.Fatalf("stats without a guard: %+v", st.Totals)
	}
}
