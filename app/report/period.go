package report

import (
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/period"
	"github.com/mailsvc/mailsvc/core"
)

// Period is the half-open range [From, To) a report covers, in the site's
// time zone. Step is the frequency whose previous period Previous gives
// (core.ReportDaily, ReportWeekly or ReportMonthly), "" for a custom range.
type Period struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	Step string    `json:"-"`
}

// addMonths moves t by months keeping its wall clock, the day clamped to
// the end of a shorter month (31 March less one month is 28 or 29
// February, not 3 March).
func addMonths(t time.Time, months int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(months), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
	last := first.AddDate(0, 1, -1).Day()
	return time.Date(first.Year(), first.Month(), min(d, last), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

// back moves t back by one step of freq on the wall clock of its zone: a
// day, seven days or a month (clamped), so that a day across a daylight
// saving change is 23 or 25 hours long.
func back(t time.Time, freq string) time.Time {
	switch freq {
	case core.ReportDaily:
		return t.AddDate(0, 0, -1)
	case core.ReportWeekly:
		return t.AddDate(0, 0, -7)
	case core.ReportMonthly:
		return addMonths(t, -1)
	}
	return t
}

// Completed returns the last whole calendar period of freq that ended at
// or before now, in loc: yesterday (daily), the last week (weekly), the
// last month (monthly). A period starts at local midnight; a week starts
// on weekStart (WordPress's start_of_week; Monday standalone).
func Completed(freq string, now time.Time, loc *time.Location, weekStart time.Weekday) Period {
	today := period.Midnight(now, loc, 0)
	var end time.Time
	switch freq {
	case core.ReportWeekly:
		// The days since the week began: 0 on weekStart itself.
		since := (int(today.Weekday()) - int(weekStart)%7 + 7) % 7
		end = period.Midnight(today, loc, -since)
	case core.ReportMonthly:
		end = time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, loc)
	default:
		freq = core.ReportDaily
		end = today
	}
	return Period{From: startBefore(end, freq, loc), To: end, Step: freq}
}

// startBefore returns the start of the calendar period of freq that ends
// at end (a local midnight).
func startBefore(end time.Time, freq string, loc *time.Location) time.Time {
	switch freq {
	case core.ReportWeekly:
		return period.Midnight(end, loc, -7)
	case core.ReportMonthly:
		return time.Date(end.Year(), end.Month()-1, 1, 0, 0, 0, 0, loc)
	}
	return period.Midnight(end, loc, -1)
}

// Ending returns the period of freq that ends at now: the last 24 hours
// of wall clock (daily), the last 7 days (weekly) or the last month
// (monthly), in loc.
func Ending(freq string, now time.Time, loc *time.Location) Period {
	now = now.In(loc)
	if freq != core.ReportWeekly && freq != core.ReportMonthly {
		freq = core.ReportDaily
	}
	return Period{From: back(now, freq), To: now, Step: freq}
}

// Previous returns the period just before p, of the same length on the
// wall clock: the previous day, week or month, or for a custom range the
// same duration before it.
func (p Period) Previous() Period {
	if p.Step == "" {
		prev := period.Period{From: p.From, To: p.To}.Previous()
		return Period{From: prev.From, To: prev.To}
	}
	if isMidnight(p.From) && isMidnight(p.To) {
		// A calendar period: the one before it is calendar too.
		return Period{From: startBefore(p.From, p.Step, p.From.Location()), To: p.From, Step: p.Step}
	}
	return Period{From: back(p.From, p.Step), To: p.From, Step: p.Step}
}

// Key names a scheduled period for the once-per-period record: the
// frequency and the local date of its start.
func (p Period) Key() string {
	return p.Step + ":" + p.From.Format(time.DateOnly)
}

// Label is the period in words, in its time zone: "Mon 2 Mar 2026" for a
// day, "Mon 2 Mar – Sun 8 Mar 2026" for days, or times for a range that
// does not start and end at midnight.
func (p Period) Label() string {
	from, to := p.From, p.To
	if isMidnight(from) && isMidnight(to) {
		last := to.AddDate(0, 0, -1)
		if last.Equal(from) || last.Before(from) {
			return from.Format("Mon 2 Jan 2006")
		}
		if from.Year() == last.Year() {
			return from.Format("Mon 2 Jan") + " – " + last.Format("Mon 2 Jan 2006")
		}
		return from.Format("Mon 2 Jan 2006") + " – " + last.Format("Mon 2 Jan 2006")
	}
	const layout = "Mon 2 Jan 2006 15:04"
	return strings.TrimSpace(from.Format(layout) + " – " + to.Format(layout) + " " + to.Format("MST"))
}

func isMidnight(t time.Time) bool {
	h, m, s := t.Clock()
	return h == 0 && m == 0 && s == 0 && t.Nanosecond() == 0
}
