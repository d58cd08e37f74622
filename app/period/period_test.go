package period_test

import (
	"context"
	"errors"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/mailsvc/mailsvc/app/period"
)

// Zones of the tests (time/tzdata makes them available everywhere).
var (
	newYork = mustLoad("America/New_York")
	london  = mustLoad("Europe/London")
	berlin  = mustLoad("Europe/Berlin")
)

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// The rules each caller reads its ranges with.
var (
	dashboardRules = period.Rules{MaxDays: 365, DefaultDays: 30, CalendarMax: true}
	analyticsRules = period.Rules{MaxDays: 366, DefaultDays: 30, LimitYears: true}
	reportRules    = period.Rules{MaxDays: 366, ToNow: true}
)

const badBound = "Must be a date (YYYY-MM-DD) or an RFC 3339 time."

func TestResolve(t *testing.T) {
	kolkata := time.FixedZone("UTC+5:30", 19800)
	now := time.Date(2024, 6, 30, 20, 0, 0, 0, time.UTC) // 01:30 on 1 July in Kolkata
	cases := []struct {
		name     string
		rules    period.Rules
		loc      *time.Location
		from, to string
		want     [2]string         // from and to in RFC 3339
		fields   map[string]string // the validation errors instead
	}{
		{name: "dates include the to day", rules: analyticsRules, loc: kolkata, from: "2024-06-10", to: "2024-06-12",
			want: [2]string{"2024-06-10T00:00:00+05:30", "2024-06-13T00:00:00+05:30"}},
		{name: "one date", rules: dashboardRules, loc: kolkata, from: "2024-06-10", to: "2024-06-10",
			want: [2]string{"2024-06-10T00:00:00+05:30", "2024-06-11T00:00:00+05:30"}},
		{name: "spaces around a date", rules: dashboardRules, loc: kolkata, from: " 2024-06-10 ", to: "2024-06-10\t",
			want: [2]string{"2024-06-10T00:00:00+05:30", "2024-06-11T00:00:00+05:30"}},
		{name: "rfc 3339 times shown in the zone", rules: analyticsRules, loc: kolkata, from: "2024-06-10T00:00:00Z", to: "2024-06-11T00:00:00Z",
			want: [2]string{"2024-06-10T05:30:00+05:30", "2024-06-11T05:30:00+05:30"}},
		{name: "from alone runs to the end of today", rules: analyticsRules, loc: kolkata, from: "2024-06-25",
			want: [2]string{"2024-06-25T00:00:00+05:30", "2024-07-02T00:00:00+05:30"}},
		{name: "from alone runs to now", rules: reportRules, loc: kolkata, from: "2024-06-25",
			want: [2]string{"2024-06-25T00:00:00+05:30", "2024-07-01T01:30:00+05:30"}},
		{name: "to alone starts the default days before", rules: dashboardRules, loc: kolkata, to: "2024-06-10T12:00:00+05:30",
			want: [2]string{"2024-05-11T12:00:00+05:30", "2024-06-10T12:00:00+05:30"}},
		{name: "to alone needs from", rules: reportRules, loc: kolkata, to: "2024-06-10",
			fields: map[string]string{"from": "Required with to."}},
		{name: "to alone needs from, bad to", rules: reportRules, loc: kolkata, to: "soon",
			fields: map[string]string{"from": "Required with to.", "to": badBound}},
		{name: "to alone across spring forward keeps the wall clock", rules: dashboardRules, loc: newYork, to: "2024-03-20T12:00:00-04:00",
			want: [2]string{"2024-02-19T12:00:00-05:00", "2024-03-20T12:00:00-04:00"}},
		{name: "a day of spring forward is 23 hours", rules: dashboardRules, loc: newYork, from: "2024-03-10", to: "2024-03-10",
			want: [2]string{"2024-03-10T00:00:00-05:00", "2024-03-11T00:00:00-04:00"}},
		{name: "a day of fall back is 25 hours", rules: analyticsRules, loc: newYork, from: "2024-11-03", to: "2024-11-03",
			want: [2]string{"2024-11-03T00:00:00-04:00", "2024-11-04T00:00:00-05:00"}},
		{name: "366 days of dates", rules: analyticsRules, loc: kolkata, from: "2023-07-01", to: "2024-06-30",
			want: [2]string{"2023-07-01T00:00:00+05:30", "2024-07-01T00:00:00+05:30"}},
		{name: "367 days", rules: analyticsRules, loc: kolkata, from: "2023-06-30", to: "2024-06-30",
			fields: map[string]string{"to": "The range may cover at most 366 days."}},
		{name: "367 days for the report", rules: reportRules, loc: kolkata, from: "2023-06-30", to: "2024-06-30",
			fields: map[string]string{"to": "The range may cover at most 366 days."}},
		{name: "calendar bound: to the 365th day after from's, whole", rules: dashboardRules, loc: kolkata, from: "2023-06-30", to: "2024-06-29",
			want: [2]string{"2023-06-30T00:00:00+05:30", "2024-06-30T00:00:00+05:30"}},
		{name: "calendar bound: from at noon may reach that midnight", rules: dashboardRules, loc: kolkata, from: "2023-06-30T12:00:00+05:30", to: "2024-06-30T00:00:00+05:30",
			want: [2]string{"2023-06-30T12:00:00+05:30", "2024-06-30T00:00:00+05:30"}},
		{name: "calendar bound: a day more", rules: dashboardRules, loc: kolkata, from: "2023-06-30", to: "2024-06-30",
			fields: map[string]string{"to": "The range may cover at most 365 days."}},
		{name: "wall-clock bound: from at noon ends at noon", rules: analyticsRules, loc: kolkata, from: "2023-06-30T12:00:00+05:30", to: "2024-06-30T12:00:01+05:30",
			fields: map[string]string{"to": "The range may cover at most 366 days."}},
		{name: "reversed", rules: dashboardRules, loc: kolkata, from: "2024-06-12", to: "2024-06-10",
			fields: map[string]string{"to": "Must be after from."}},
		{name: "empty rfc range", rules: reportRules, loc: kolkata, from: "2024-06-10T00:00:00Z", to: "2024-06-10T00:00:00Z",
			fields: map[string]string{"to": "Must be after from."}},
		{name: "bad from and to", rules: analyticsRules, loc: kolkata, from: "yesterday", to: "2024-13-01",
			fields: map[string]string{"from": badBound, "to": badBound}},
		{name: "only spaces", rules: dashboardRules, loc: kolkata, from: " ",
			fields: map[string]string{"from": badBound}},
		{name: "year 1 refused with limits", rules: analyticsRules, loc: kolkata, from: "0001-01-01", to: "0001-01-02",
			fields: map[string]string{"from": badBound, "to": badBound}},
		{name: "year 9999 refused with limits", rules: analyticsRules, loc: time.UTC, from: "9999-01-01T00:00:00Z", to: "9999-01-02",
			fields: map[string]string{"from": badBound, "to": badBound}},
		{name: "year 1 read without limits", rules: dashboardRules, loc: time.UTC, from: "0001-01-01", to: "0001-01-02",
			want: [2]string{"0001-01-01T00:00:00Z", "0001-01-03T00:00:00Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, fields := c.rules.Resolve(c.from, c.to, now, c.loc)
			if c.fields != nil {
				if len(fields) != len(c.fields) {
					t.Fatalf("fields %v, want %v", fields, c.fields)
				}
				for k, v := range c.fields {
					if fields[k] != v {
						t.Errorf("field %s: %q, want %q", k, fields[k], v)
					}
				}
				if !p.From.IsZero() || !p.To.IsZero() {
					t.Errorf("period %v with errors", p)
				}
				return
			}
			if len(fields) > 0 {
				t.Fatalf("fields %v", fields)
			}
			got := [2]string{p.From.Format(time.RFC3339), p.To.Format(time.RFC3339)}
			if got != c.want {
				t.Errorf("period %v, want %v", got, c.want)
			}
			if p.From.Location() != c.loc || p.To.Location() != c.loc {
				t.Errorf("period in %v and %v, want %v", p.From.Location(), p.To.Location(), c.loc)
			}
		})
	}
}

func TestDays(t *testing.T) {
	loc := time.FixedZone("UTC+5:30", 19800)
	now := time.Date(2024, 6, 30, 20, 0, 0, 0, time.UTC)
	cases := []struct {
		rules period.Rules
		v     string
		from  string
		msg   string
	}{
		{rules: analyticsRules, v: "1", from: "2024-07-01T00:00:00+05:30"},
		{rules: analyticsRules, v: "366", from: "2023-07-02T00:00:00+05:30"},
		{rules: dashboardRules, v: "365", from: "2023-07-03T00:00:00+05:30"},
		{rules: dashboardRules, v: "366", msg: "Must be a whole number between 1 and 365."},
		{rules: analyticsRules, v: "367", msg: "Must be a whole number between 1 and 366."},
		{rules: analyticsRules, v: "0", msg: "Must be a whole number between 1 and 366."},
		{rules: dashboardRules, v: "-1", msg: "Must be a whole number between 1 and 365."},
		{rules: dashboardRules, v: "7d", msg: "Must be a whole number between 1 and 365."},
		{rules: dashboardRules, v: " 7", msg: "Must be a whole number between 1 and 365."},
	}
	for _, c := range cases {
		p, fields := c.rules.Days(c.v, now, loc)
		if c.msg != "" {
			if len(fields) != 1 || fields["days"] != c.msg {
				t.Errorf("days %q: fields %v, want days %q", c.v, fields, c.msg)
			}
			continue
		}
		if len(fields) > 0 {
			t.Fatalf("days %q: fields %v", c.v, fields)
		}
		if got := p.From.Format(time.RFC3339); got != c.from || p.To.Format(time.RFC3339) != "2024-07-02T00:00:00+05:30" {
			t.Errorf("days %q: %v – %v, want from %s to the end of today", c.v, got, p.To, c.from)
		}
	}
}

func TestLastDaysAcrossDST(t *testing.T) {
	now := time.Date(2024, 3, 31, 12, 0, 0, 0, time.UTC) // the day clocks go forward
	p := period.LastDays(now, london, 2)
	if p.From.Format(time.RFC3339) != "2024-03-30T00:00:00Z" || p.To.Format(time.RFC3339) != "2024-04-01T00:00:00+01:00" {
		t.Fatalf("last 2 days %v – %v", p.From, p.To)
	}
	if got := p.To.Sub(p.From); got != 47*time.Hour {
		t.Errorf("two days across spring forward last %v, want 47h", got)
	}
}

func TestPeriodArithmetic(t *testing.T) {
	kolkata := time.FixedZone("UTC+5:30", 19800)
	p := period.Period{From: time.Date(2024, 6, 10, 10, 20, 0, 0, time.UTC), To: time.Date(2024, 6, 10, 12, 5, 0, 0, time.UTC)}
	a := p.Aligned(kolkata)
	if !a.From.Equal(time.Date(2024, 6, 10, 10, 15, 0, 0, time.UTC)) || !a.To.Equal(time.Date(2024, 6, 10, 12, 15, 0, 0, time.UTC)) {
		t.Errorf("aligned %v – %v", a.From, a.To)
	}
	if a.From.Location() != kolkata {
		t.Errorf("aligned in %v", a.From.Location())
	}
	if on := p.Aligned(time.UTC); on != (period.Period{From: p.From.Truncate(15 * time.Minute), To: p.To.Add(10 * time.Minute)}) {
		t.Errorf("aligned %v", on)
	}
	exact := period.Period{From: a.From, To: a.To}
	if exact.Aligned(kolkata) != exact {
		t.Errorf("aligned bounds moved: %v", exact.Aligned(kolkata))
	}
	prev := p.Previous()
	if !prev.To.Equal(p.From) || prev.To.Sub(prev.From) != p.To.Sub(p.From) {
		t.Errorf("previous %v – %v", prev.From, prev.To)
	}
	for _, c := range []struct {
		at   time.Time
		want bool
	}{{p.From, true}, {p.To.Add(-time.Nanosecond), true}, {p.To, false}, {p.From.Add(-time.Nanosecond), false}} {
		if p.Contains(c.at) != c.want {
			t.Errorf("contains %v: %v", c.at, !c.want)
		}
	}
}

func TestZone(t *testing.T) {
	boom := errors.New("no options table")
	cases := []struct {
		name string
		tz   period.TimeZoner
		want *time.Location
		err  error
	}{
		{name: "no site", want: time.UTC},
		{name: "no function", tz: period.ZoneFunc(nil), want: time.UTC},
		{name: "no zone", tz: period.ZoneFunc(func(context.Context) (*time.Location, error) { return nil, nil }), want: time.UTC},
		{name: "site zone", tz: period.ZoneFunc(func(context.Context) (*time.Location, error) { return berlin, nil }), want: berlin},
		{name: "error", tz: period.ZoneFunc(func(context.Context) (*time.Location, error) { return nil, boom }), err: boom},
	}
	for _, c := range cases {
		loc, err := period.Zone(context.Background(), c.tz)
		if c.err != nil {
			if !errors.Is(err, c.err) || err.Error() != "site time zone: no options table" {
				t.Errorf("%s: err %v", c.name, err)
			}
			continue
		}
		if err != nil || loc != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, loc, err, c.want)
		}
	}
}
