package dashboard

import (
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Bounds of the dashboard's ranges.
const (
	// DefaultDays is the range of the statistics and the chart when none
	// is given: the last 30 days, today included.
	DefaultDays = 30
	// MaxDays bounds days and a from/to range.
	MaxDays = 365
	// MaxHourlyDays bounds a range shown in hourly buckets.
	MaxHourlyDays = 31
)

// namedRanges are the values of the range parameter: calendar days up to
// today included.
var namedRanges = map[string]int{"today": 1, "7d": 7, "30d": 30, "90d": 90, "365d": 365}

// RangeQuery is a requested time range as the query string gives it:
// either Range (today, 7d, 30d, 90d or 365d), or Days (1–365 calendar days
// up to today included), or From and To. From and To are dates
// (YYYY-MM-DD, read in the site's time zone; a date To includes that
// whole day) or RFC 3339 times (To excluded). All empty means the default
// range of the route.
type RangeQuery struct {
	Range string
	Days  string
	From  string
	To    string
}

// Period is a half-open time range [From, To), shown in the site's time
// zone.
type Period struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// contains reports whether t is in p.
func (p Period) contains(t time.Time) bool { return !t.Before(p.From) && t.Before(p.To) }

// midnight returns the start of t's day in loc, moved by days.
func midnight(t time.Time, loc *time.Location, days int) time.Time {
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day()+days, 0, 0, 0, 0, loc)
}

// lastDays returns the n calendar days up to today included.
func lastDays(now time.Time, loc *time.Location, n int) Period {
	return Period{From: midnight(now, loc, -(n - 1)), To: midnight(now, loc, 1)}
}

// resolve turns q into a period in loc, or a validation error naming each
// bad parameter.
func (q RangeQuery) resolve(now time.Time, loc *time.Location, defaultDays int) (Period, map[string]string) {
	fields := map[string]string{}
	given := 0
	for _, v := range []string{q.Range, q.Days, q.From + q.To} {
		if v != "" {
			given++
		}
	}
	if given > 1 {
		fields["range"] = "Give range, days or from/to, not more than one of them."
		return Period{}, fields
	}
	switch {
	case q.Range != "":
		n, ok := namedRanges[q.Range]
		if !ok {
			fields["range"] = "Must be one of: today, 7d, 30d, 90d, 365d."
			return Period{}, fields
		}
		return lastDays(now, loc, n), nil
	case q.Days != "":
		n, err := strconv.Atoi(q.Days)
		if err != nil || n < 1 || n > MaxDays {
			fields["days"] = "Must be a whole number between 1 and 365."
			return Period{}, fields
		}
		return lastDays(now, loc, n), nil
	case q.From == "" && q.To == "":
		return lastDays(now, loc, defaultDays), nil
	}
	var p Period
	var fromOK, toOK bool
	if q.From != "" {
		p.From, fromOK = parseBound(q.From, loc, false)
		if !fromOK {
			fields["from"] = "Must be a date (YYYY-MM-DD) or an RFC 3339 time."
		}
	}
	if q.To != "" {
		p.To, toOK = parseBound(q.To, loc, true)
		if !toOK {
			fields["to"] = "Must be a date (YYYY-MM-DD) or an RFC 3339 time."
		}
	}
	if len(fields) > 0 {
		return Period{}, fields
	}
	switch {
	case q.To == "":
		p.To = midnight(now, loc, 1)
	case q.From == "":
		t := p.To.In(loc)
		p.From = time.Date(t.Year(), t.Month(), t.Day()-defaultDays, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
	}
	p.From, p.To = p.From.In(loc), p.To.In(loc)
	switch {
	case !p.To.After(p.From):
		fields["to"] = "Must be after from."
	case p.To.After(midnight(p.From, loc, MaxDays+1)):
		fields["to"] = "The range may cover at most 365 days."
	}
	if len(fields) > 0 {
		return Period{}, fields
	}
	return p, nil
}

// parseBound reads a from or to value: a date is its local midnight (for
// to, the next one, so that the day is included); an RFC 3339 time is
// taken as it is.
func parseBound(v string, loc *time.Location, end bool) (time.Time, bool) {
	v = strings.TrimSpace(v)
	if d, err := time.ParseInLocation(time.DateOnly, v, loc); err == nil {
		if end {
			return midnight(d, loc, 1), true
		}
		return d, true
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, false
	}
	return t.In(loc), true
}

// floorBucket and ceilBucket align t to the roll-up's 15-minute buckets
// (UTC multiples, which every time zone's hours and days fall on).
func floorBucket(t time.Time) time.Time { return t.Truncate(core.OutcomeBucketSize) }

func ceilBucket(t time.Time) time.Time {
	f := floorBucket(t)
	if f.Equal(t) {
		return t
	}
	return f.Add(core.OutcomeBucketSize)
}
