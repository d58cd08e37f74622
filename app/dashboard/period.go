package dashboard

import (
	"time"

	"github.com/mailsvc/mailsvc/app/period"
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
type Period = period.Period

// resolve turns q into a period in loc, or a validation error naming each
// bad parameter. A from/to range may end anywhere in the 365th day after
// from's.
func (q RangeQuery) resolve(now time.Time, loc *time.Location, defaultDays int) (Period, map[string]string) {
	given := 0
	for _, v := range []string{q.Range, q.Days, q.From + q.To} {
		if v != "" {
			given++
		}
	}
	if given > 1 {
		return Period{}, map[string]string{"range": "Give range, days or from/to, not more than one of them."}
	}
	rules := period.Rules{MaxDays: MaxDays, DefaultDays: defaultDays, CalendarMax: true}
	switch {
	case q.Range != "":
		n, ok := namedRanges[q.Range]
		if !ok {
			return Period{}, map[string]string{"range": "Must be one of: today, 7d, 30d, 90d, 365d."}
		}
		return period.LastDays(now, loc, n), nil
	case q.Days != "":
		return rules.Days(q.Days, now, loc)
	case q.From == "" && q.To == "":
		return period.LastDays(now, loc, defaultDays), nil
	}
	return rules.Resolve(q.From, q.To, now, loc)
}
