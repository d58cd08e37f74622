package report

import (
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestCompletedAndPrevious(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	sydney := mustZone(t, "Australia/Sydney")
	kolkata := mustZone(t, "Asia/Kolkata")
	at := func(loc *time.Location, y int, m time.Month, d, h, min int) time.Time {
		return time.Date(y, m, d, h, min, 0, 0, loc)
	}
	tests := []struct {
		name     string
		freq     string
		loc      *time.Location
		now      time.Time
		from, to time.Time
		hours    float64 // length of the period
		prevFrom time.Time
	}{
		{"daily: the day of spring forward is 23 hours", core.ReportDaily, berlin, at(berlin, 2026, 3, 30, 0, 10),
			at(berlin, 2026, 3, 29, 0, 0), at(berlin, 2026, 3, 30, 0, 0), 23, at(berlin, 2026, 3, 28, 0, 0)},
		{"daily: the day of fall back is 25 hours", core.ReportDaily, berlin, at(berlin, 2026, 10, 26, 9, 0),
			at(berlin, 2026, 10, 25, 0, 0), at(berlin, 2026, 10, 26, 0, 0), 25, at(berlin, 2026, 10, 24, 0, 0)},
		{"daily: just before midnight is still the day before", core.ReportDaily, berlin, at(berlin, 2026, 3, 29, 23, 59),
			at(berlin, 2026, 3, 28, 0, 0), at(berlin, 2026, 3, 29, 0, 0), 24, at(berlin, 2026, 3, 27, 0, 0)},
		{"daily: a UTC instant read in the site's zone", core.ReportDaily, berlin, time.Date(2026, 6, 1, 22, 30, 0, 0, time.UTC),
			at(berlin, 2026, 6, 1, 0, 0), at(berlin, 2026, 6, 2, 0, 0), 24, at(berlin, 2026, 5, 31, 0, 0)},
		{"weekly: the week holding spring forward", core.ReportWeekly, berlin, at(berlin, 2026, 3, 30, 0, 0),
			at(berlin, 2026, 3, 23, 0, 0), at(berlin, 2026, 3, 30, 0, 0), 167, at(berlin, 2026, 3, 16, 0, 0)},
		{"weekly: on a Sunday the last week ended last Monday", core.ReportWeekly, berlin, at(berlin, 2026, 11, 1, 12, 0),
			at(berlin, 2026, 10, 19, 0, 0), at(berlin, 2026, 10, 26, 0, 0), 169, at(berlin, 2026, 10, 12, 0, 0)},
		{"weekly: across a year end", core.ReportWeekly, berlin, at(berlin, 2027, 1, 6, 8, 0),
			at(berlin, 2026, 12, 28, 0, 0), at(berlin, 2027, 1, 4, 0, 0), 168, at(berlin, 2026, 12, 21, 0, 0)},
		{"monthly: February of a leap year", core.ReportMonthly, berlin, at(berlin, 2028, 3, 1, 0, 0),
			at(berlin, 2028, 2, 1, 0, 0), at(berlin, 2028, 3, 1, 0, 0), 29 * 24, at(berlin, 2028, 1, 1, 0, 0)},
		{"monthly: March loses an hour", core.ReportMonthly, berlin, at(berlin, 2026, 4, 30, 23, 0),
			at(berlin, 2026, 3, 1, 0, 0), at(berlin, 2026, 4, 1, 0, 0), 31*24 - 1, at(berlin, 2026, 2, 1, 0, 0)},
		{"monthly: across a year end", core.ReportMonthly, berlin, at(berlin, 2027, 1, 1, 0, 0),
			at(berlin, 2026, 12, 1, 0, 0), at(berlin, 2027, 1, 1, 0, 0), 31 * 24, at(berlin, 2026, 11, 1, 0, 0)},
		{"monthly: southern hemisphere, April gains an hour", core.ReportMonthly, sydney, at(sydney, 2026, 5, 3, 0, 0),
			at(sydney, 2026, 4, 1, 0, 0), at(sydney, 2026, 5, 1, 0, 0), 30*24 + 1, at(sydney, 2026, 3, 1, 0, 0)},
		{"daily: a half-hour offset", core.ReportDaily, kolkata, time.Date(2026, 6, 1, 18, 45, 0, 0, time.UTC),
			at(kolkata, 2026, 6, 1, 0, 0), at(kolkata, 2026, 6, 2, 0, 0), 24, at(kolkata, 2026, 5, 31, 0, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Completed(tt.freq, tt.now, tt.loc, time.Monday)
			if !p.From.Equal(tt.from) || !p.To.Equal(tt.to) {
				t.Fatalf("Completed(%s, %s) = [%s, %s), want [%s, %s)", tt.freq, tt.now, p.From, p.To, tt.from, tt.to)
			}
			if h := p.To.Sub(p.From).Hours(); h != tt.hours {
				t.Errorf("the period lasts %v hours, want %v", h, tt.hours)
			}
			if p.To.After(tt.now) {
				t.Errorf("the period ends after now")
			}
			prev := p.Previous()
			if !prev.From.Equal(tt.prevFrom) || !prev.To.Equal(p.From) {
				t.Errorf("Previous = [%s, %s), want [%s, %s)", prev.From, prev.To, tt.prevFrom, p.From)
			}
			if p.From.Location() != tt.loc {
				t.Errorf("the period is in %s, want %s", p.From.Location(), tt.loc)
			}
		})
	}
}

func TestEnding(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	at := func(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, berlin) }
	tests := []struct {
		name     string
		freq     string
		now      time.Time
		from     time.Time
		prevFrom time.Time
	}{
		{"weekly across spring forward: 7 days of wall clock", core.ReportWeekly, at(2026, 3, 31, 12), at(2026, 3, 24, 12), at(2026, 3, 17, 12)},
		{"daily across fall back: 25 hours", core.ReportDaily, at(2026, 10, 25, 12), at(2026, 10, 24, 12), at(2026, 10, 23, 12)},
		{"monthly from the 31st: clamped to the end of February", core.ReportMonthly, at(2026, 3, 31, 9), at(2026, 2, 28, 9), at(2026, 1, 28, 9)},
		{"monthly from 31 May: 30 April, then 30 March", core.ReportMonthly, at(2026, 5, 31, 9), at(2026, 4, 30, 9), at(2026, 3, 30, 9)},
		{"monthly in a leap year", core.ReportMonthly, at(2028, 3, 30, 9), at(2028, 2, 29, 9), at(2028, 1, 29, 9)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Ending(tt.freq, tt.now, berlin)
			if !p.From.Equal(tt.from) || !p.To.Equal(tt.now) {
				t.Fatalf("Ending = [%s, %s), want [%s, %s)", p.From, p.To, tt.from, tt.now)
			}
			if prev := p.Previous(); !prev.From.Equal(tt.prevFrom) || !prev.To.Equal(p.From) {
				t.Errorf("Previous = [%s, %s), want [%s, %s)", prev.From, prev.To, tt.prevFrom, p.From)
			}
		})
	}
}

func TestCustomPreviousAndLabel(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	p := Period{From: time.Date(2026, 3, 2, 0, 0, 0, 0, berlin), To: time.Date(2026, 3, 9, 0, 0, 0, 0, berlin)}
	prev := p.Previous()
	if want := time.Date(2026, 2, 23, 0, 0, 0, 0, berlin); !prev.From.Equal(want) || !prev.To.Equal(p.From) {
		t.Errorf("Previous of a custom week = [%s, %s)", prev.From, prev.To)
	}
	for _, tt := range []struct {
		p    Period
		want string
	}{
		{p, "Mon 2 Mar – Sun 8 Mar 2026"},
		{Period{From: p.From, To: p.From.AddDate(0, 0, 1)}, "Mon 2 Mar 2026"},
		{Period{From: time.Date(2026, 12, 28, 0, 0, 0, 0, berlin), To: time.Date(2027, 1, 4, 0, 0, 0, 0, berlin)}, "Mon 28 Dec 2026 – Sun 3 Jan 2027"},
		{Period{From: time.Date(2026, 3, 2, 9, 30, 0, 0, berlin), To: time.Date(2026, 3, 3, 9, 30, 0, 0, berlin)}, "Mon 2 Mar 2026 09:30 – Tue 3 Mar 2026 09:30 CET"},
	} {
		if got := tt.p.Label(); got != tt.want {
			t.Errorf("Label = %q, want %q", got, tt.want)
		}
	}
	if got := Completed(core.ReportWeekly, time.Date(2026, 3, 11, 0, 0, 0, 0, berlin), berlin, time.Monday).Key(); got != "weekly:2026-03-02" {
		t.Errorf("Key = %q", got)
	}
}

// TestCompletedWeekStart checks that a weekly period starts on the site's
// first day of the week: Sunday (as WordPress's start_of_week 0 says),
// Saturday, or Monday; on that day itself the week that just ended is
// the last whole one.
func TestCompletedWeekStart(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	at := func(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, ny) }
	tests := []struct {
		name     string
		start    time.Weekday
		now      time.Time
		from, to time.Time
		prevFrom time.Time
		label    string
	}{
		{"Sunday start, on a Wednesday", time.Sunday, at(2026, 3, 11, 9), at(2026, 3, 1, 0), at(2026, 3, 8, 0), at(2026, 2, 22, 0), "Sun 1 Mar – Sat 7 Mar 2026"},
		{"Sunday start, on the Sunday itself", time.Sunday, at(2026, 3, 8, 0), at(2026, 3, 1, 0), at(2026, 3, 8, 0), at(2026, 2, 22, 0), "Sun 1 Mar – Sat 7 Mar 2026"},
		{"Sunday start, on Saturday night", time.Sunday, at(2026, 3, 7, 23), at(2026, 2, 22, 0), at(2026, 3, 1, 0), at(2026, 2, 15, 0), "Sun 22 Feb – Sat 28 Feb 2026"},
		{"Sunday start, across a year end", time.Sunday, at(2027, 1, 2, 12), at(2026, 12, 20, 0), at(2026, 12, 27, 0), at(2026, 12, 13, 0), "Sun 20 Dec – Sat 26 Dec 2026"},
		{"Saturday start", time.Saturday, at(2026, 3, 11, 9), at(2026, 2, 28, 0), at(2026, 3, 7, 0), at(2026, 2, 21, 0), "Sat 28 Feb – Fri 6 Mar 2026"},
		{"Monday start", time.Monday, at(2026, 3, 11, 9), at(2026, 3, 2, 0), at(2026, 3, 9, 0), at(2026, 2, 23, 0), "Mon 2 Mar – Sun 8 Mar 2026"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Completed(core.ReportWeekly, tt.now, ny, tt.start)
			if !p.From.Equal(tt.from) || !p.To.Equal(tt.to) {
				t.Fatalf("Completed = [%s, %s), want [%s, %s)", p.From, p.To, tt.from, tt.to)
			}
			if p.From.Weekday() != tt.start {
				t.Errorf("the week starts on %s, want %s", p.From.Weekday(), tt.start)
			}
			if prev := p.Previous(); !prev.From.Equal(tt.prevFrom) || !prev.To.Equal(tt.from) {
				t.Errorf("Previous = [%s, %s), want [%s, %s)", prev.From, prev.To, tt.prevFrom, tt.from)
			}
			if got := p.Label(); got != tt.label {
				t.Errorf("Label = %q, want %q", got, tt.label)
			}
			if got, want := p.Key(), "weekly:"+tt.from.Format(time.DateOnly); got != want {
				t.Errorf("Key = %q, want %q", got, want)
			}
		})
	}
}
