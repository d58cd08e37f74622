package analytics

import (
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/period"
)

// Bounds of the analytics ranges.
const (
	// DefaultDays is the range when none is given: the last 30 calendar
	// days in the site's time zone, today included.
	DefaultDays = 30
	// MaxDays bounds days and a from/to range (a leap year).
	MaxDays = 366
)

// rules read the analytics ranges: at most MaxDays days of wall clock,
// years 1970 to 9998.
var rules = period.Rules{MaxDays: MaxDays, DefaultDays: DefaultDays, LimitYears: true}

// RangeQuery is a requested range as the query string gives it: Days
// (1–366 calendar days up to today included), or From and To. From and
// To are dates (YYYY-MM-DD, in the site's time zone; a date To includes
// that whole day) or RFC 3339 times (To excluded). From alone runs to the
// end of today; To alone starts DefaultDays before it. All empty means the
// last DefaultDays days.
type RangeQuery struct {
	Days string
	From string
	To   string
}

// Period is a half-open time range [From, To), shown in the site's time
// zone.
type Period = period.Period

// resolve turns q into a period in loc, or the validation errors of each
// bad parameter.
func (q RangeQuery) resolve(now time.Time, loc *time.Location) (Period, map[string]string) {
	q.Days, q.From, q.To = strings.TrimSpace(q.Days), strings.TrimSpace(q.From), strings.TrimSpace(q.To)
	switch {
	case q.Days != "" && q.From+q.To != "":
		return Period{}, map[string]string{"days": "Give days or from/to, not both."}
	case q.Days != "":
		return rules.Days(q.Days, now, loc)
	case q.From+q.To == "":
		return period.LastDays(now, loc, DefaultDays), nil
	}
	return rules.Resolve(q.From, q.To, now, loc)
}
