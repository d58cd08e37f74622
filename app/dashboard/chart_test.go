package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/core"
)

func TestChartBuckets(t *testing.T) {
	paris := mustLoad(t, "Europe/Paris")
	kolkata := time.FixedZone("UTC+5:30", 19800)
	type point struct {
		label             string
		delivered, failed int64
	}
	tests := []struct {
		name     string
		loc      *time.Location
		now      string
		q        dashboard.ChartQuery
		outcomes func(o *outcomes)
		points   int
		wantFrom string
		wantTo   string
		want     []point // the points that must have counts (all others 0)
	}{
		{
			name: "half-hour offset: days start at local midnight",
			loc:  kolkata, now: "2024-03-10T12:00:00Z",
			q: dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{Days: "2"}, Bucket: "day"},
			outcomes: func(o *outcomes) {
				o.add(at(t, "2024-03-08T18:15:00Z"), 1, core.StatusDelivered, 5) // Mar 8 23:45 local: outside
				o.add(at(t, "2024-03-08T18:30:00Z"), 1, core.StatusDelivered, 1) // Mar 9 00:00 local
				o.add(at(t, "2024-03-09T18:15:00Z"), 1, core.StatusFailed, 2)    // Mar 9 23:45 local
				o.add(at(t, "2024-03-09T18:30:00Z"), 2, core.StatusDelivered, 3) // Mar 10 00:00 local
				o.add(at(t, "2024-03-10T18:30:00Z"), 2, core.StatusDelivered, 7) // Mar 11 local: outside
			},
			points: 2, wantFrom: "2024-03-09T00:00:00+05:30", wantTo: "2024-03-11T00:00:00+05:30",
			want: []point{{"2024-03-09", 1, 2}, {"2024-03-10", 3, 0}},
		},
		{
			name: "half-hour offset: hours are local hours",
			loc:  kolkata, now: "2024-03-10T12:00:00Z",
			q: dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{From: "2024-03-10", To: "2024-03-10"}, Bucket: "hour"},
			outcomes: func(o *outcomes) {
				o.add(at(t, "2024-03-10T03:15:00Z"), 1, core.StatusDelivered, 1) // 08:45 local
				o.add(at(t, "2024-03-10T03:30:00Z"), 1, core.StatusDelivered, 4) // 09:00 local
				o.add(at(t, "2024-03-10T04:15:00Z"), 1, core.StatusFailed, 1)    // 09:45 local
			},
			points: 24, wantFrom: "2024-03-10T00:00:00+05:30", wantTo: "2024-03-11T00:00:00+05:30",
			want: []point{{"2024-03-10T08:00:00+05:30", 1, 0}, {"2024-03-10T09:00:00+05:30", 4, 1}},
		},
		{
			name: "DST starts: the day has 23 hours and no 02:00",
			loc:  paris, now: "2024-04-02T12:00:00Z",
			q: dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{From: "2024-03-31", To: "2024-03-31"}, Bucket: "hour"},
			outcomes: func(o *outcomes) {
				o.add(at(t, "2024-03-31T00:45:00Z"), 1, core.StatusDelivered, 1) // 01:45 CET
				o.add(at(t, "2024-03-31T01:00:00Z"), 1, core.StatusDelivered, 2) // 03:00 CEST
				o.add(at(t, "2024-03-31T21:45:00Z"), 1, core.StatusFailed, 3)    // 23:45 CEST
				o.add(at(t, "2024-03-31T22:00:00Z"), 1, core.StatusFailed, 9)    // next day
			},
			points: 23, wantFrom: "2024-03-31T00:00:00+01:00", wantTo: "2024-04-01T00:00:00+02:00",
			want: []point{{"2024-03-31T01:00:00+01:00", 1, 0}, {"2024-03-31T03:00:00+02:00", 2, 0}, {"2024-03-31T23:00:00+02:00", 0, 3}},
		},
		{
			name: "DST ends: the day has 25 hours, 02:00 twice",
			loc:  paris, now: "2024-10-28T12:00:00Z",
			q: dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{From: "2024-10-27", To: "2024-10-27"}, Bucket: "hour"},
			outcomes: func(o *outcomes) {
				o.add(at(t, "2024-10-27T00:30:00Z"), 1, core.StatusDelivered, 1) // 02:30 CEST
				o.add(at(t, "2024-10-27T01:30:00Z"), 1, core.StatusDelivered, 2) // 02:30 CET
			},
			points: 25, wantFrom: "2024-10-27T00:00:00+02:00", wantTo: "2024-10-28T00:00:00+01:00",
			want: []point{{"2024-10-27T02:00:00+02:00", 1, 0}, {"2024-10-27T02:00:00+01:00", 2, 0}},
		},
		{
			name: "DST day in day buckets: 23 hours counted as one day",
			loc:  paris, now: "2024-04-01T12:00:00Z",
			q: dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{Days: "3"}, Bucket: "day"},
			outcomes: func(o *outcomes) {
				o.add(at(t, "2024-03-30T22:45:00Z"), 1, core.StatusDelivered, 1) // Mar 30 23:45 CET
				o.add(at(t, "2024-03-30T23:00:00Z"), 1, core.StatusDelivered, 2) // Mar 31 00:00 CET
				o.add(at(t, "2024-03-31T21:45:00Z"), 1, core.StatusDelivered, 4) // Mar 31 23:45 CEST
				o.add(at(t, "2024-03-31T22:00:00Z"), 1, core.StatusFailed, 8)    // Apr 1 00:00 CEST
			},
			points: 3, wantFrom: "2024-03-30T00:00:00+01:00", wantTo: "2024-04-02T00:00:00+02:00",
			want: []point{{"2024-03-30", 1, 0}, {"2024-03-31", 6, 0}, {"2024-04-01", 0, 8}},
		},
		{
			name: "default: 30 days by day, gaps filled with zero",
			loc:  time.UTC, now: "2024-06-30T10:00:00Z",
			q: dashboard.ChartQuery{},
			outcomes: func(o *outcomes) {
				o.add(at(t, "2024-06-01T00:00:00Z"), 1, core.StatusDelivered, 1)
				o.add(at(t, "2024-06-30T09:45:00Z"), 1, core.StatusFailed, 1)
				o.add(at(t, "2024-05-31T23:45:00Z"), 1, core.StatusFailed, 50) // before the range
			},
			points: 30, wantFrom: "2024-06-01T00:00:00Z", wantTo: "2024-07-01T00:00:00Z",
			want: []point{{"2024-06-01", 1, 0}, {"2024-06-30", 0, 1}},
		},
		{
			name: "RFC 3339 bounds widen to whole hours",
			loc:  time.UTC, now: "2024-06-30T10:00:00Z",
			q: dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{From: "2024-06-10T10:20:00Z", To: "2024-06-10T12:05:00+00:00"}, Bucket: "hour"},
			outcomes: func(o *outcomes) {
				o.add(at(t, "2024-06-10T10:00:00Z"), 1, core.StatusDelivered, 1)
				o.add(at(t, "2024-06-10T12:00:00Z"), 1, core.StatusDelivered, 2)
			},
			points: 3, wantFrom: "2024-06-10T10:00:00Z", wantTo: "2024-06-10T13:00:00Z",
			want: []point{{"2024-06-10T10:00:00Z", 1, 0}, {"2024-06-10T12:00:00Z", 2, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &outcomes{}
			tt.outcomes(o)
			now := at(t, tt.now)
			s := &dashboard.Service{Outcomes: o, Site: site{loc: tt.loc}, Now: func() time.Time { return now }}
			c, err := s.Chart(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if o.calls != 1 {
				t.Errorf("%d roll-up reads, want 1", o.calls)
			}
			if len(c.Points) != tt.points {
				t.Fatalf("%d points, want %d", len(c.Points), tt.points)
			}
			if got := c.From.Format(time.RFC3339); got != tt.wantFrom {
				t.Errorf("from %s, want %s", got, tt.wantFrom)
			}
			if got := c.To.Format(time.RFC3339); got != tt.wantTo {
				t.Errorf("to %s, want %s", got, tt.wantTo)
			}
			want := map[string]point{}
			var wd, wf int64
			for _, p := range tt.want {
				want[p.label] = p
				wd, wf = wd+p.delivered, wf+p.failed
			}
			labels := map[string]bool{}
			for i, p := range c.Points {
				if labels[p.Label] {
					t.Errorf("label %s twice", p.Label)
				}
				labels[p.Label] = true
				if i > 0 && !p.Start.After(c.Points[i-1].Start) {
					t.Errorf("point %d does not follow %d", i, i-1)
				}
				w := want[p.Label]
				if p.Delivered != w.delivered || p.Failed != w.failed || p.Total != w.delivered+w.failed {
					t.Errorf("%s: %d delivered %d failed (total %d), want %d %d", p.Label, p.Delivered, p.Failed, p.Total, w.delivered, w.failed)
				}
				delete(want, p.Label)
			}
			if len(want) > 0 {
				t.Errorf("missing points %v", want)
			}
			if c.Totals.Delivered != wd || c.Totals.Failed != wf {
				t.Errorf("totals %+v, want %d %d", c.Totals, wd, wf)
			}
		})
	}
}

func TestChartRejectsBadInput(t *testing.T) {
	now := at(t, "2024-06-30T10:00:00Z")
	tests := []struct {
		name  string
		q     dashboard.ChartQuery
		field string
	}{
		{"bucket week", dashboard.ChartQuery{Bucket: "week"}, "bucket"},
		{"to before from", dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{From: "2024-06-10", To: "2024-06-01"}}, "to"},
		{"empty instant range", dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{From: "2024-06-10T10:00:00Z", To: "2024-06-10T10:00:00Z"}}, "to"},
		{"bad from", dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{From: "yesterday"}}, "from"},
		{"bad to", dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{From: "2024-06-01", To: "2024-13-01"}}, "to"},
		{"days 0", dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{Days: "0"}}, "days"},
		{"days 366", dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{Days: "366"}}, "days"},
		{"days not a number", dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{Days: "7d"}}, "days"},
		{"range over a year", dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{From: "2022-01-01", To: "2024-01-01"}}, "to"},
		{"days and from", dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{Days: "7", From: "2024-06-01"}}, "range"},
		{"unknown range", dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{Range: "week"}}, "range"},
		{"too many hours", dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{Days: "32"}, Bucket: "hour"}, "bucket"},
		{"too many hours from/to", dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{From: "2024-01-01", To: "2024-03-01"}, Bucket: "hour"}, "bucket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &outcomes{}
			s := &dashboard.Service{Outcomes: o, Now: func() time.Time { return now }}
			_, err := s.Chart(context.Background(), tt.q)
			if f := fields(err); f[tt.field] == "" {
				t.Fatalf("err = %v (fields %v), want a validation error on %s", err, f, tt.field)
			}
			if o.calls != 0 {
				t.Errorf("the roll-up was read for bad input")
			}
		})
	}
	// The largest hourly range passes: 31 days.
	s := &dashboard.Service{Outcomes: &outcomes{}, Now: func() time.Time { return now }}
	c, err := s.Chart(context.Background(), dashboard.ChartQuery{RangeQuery: dashboard.RangeQuery{Days: "31"}, Bucket: "hour"})
	if err != nil || len(c.Points) != 31*24 {
		t.Fatalf("31 days of hours: %v", err)
	}
}
