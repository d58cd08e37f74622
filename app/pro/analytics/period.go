package analytics

import (
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Bounds of the analytics ranges.
const (
	// DefaultDays is the range when none is given: the last 30 calendar
	// days in the site's time zone, today included.
	DefaultDays = 30
	// MaxDays bounds days and a from/to range (a leap year).
	MaxDays = 366
)

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
type Period struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// previous returns the period of the same length that ends where p
// starts.
func (p Period) previous() Period {
	return Period{From: p.From.Add(-p.To.Sub(p.From)), To: p.From}
}

// aligned returns p widened to the roll-ups' 15-minute UTC buckets (which
// every time zone's hours and days fall on), in loc.
func (p Period) aligned(loc *time.Location) Period {
	from := p.From.Truncate(core.OutcomeBucketSize)
	to := p.To.Truncate(core.OutcomeBucketSize)
	if !to.Equal(p.To) {
		to = to.Add(core.OutcomeBucketSize)
	}
	return Period{From: from.In(loc), To: to.In(loc)}
}

// midnight returns the start of t's day in loc, moved by days.
func midnight(t time.Time, loc *time.Location, days int) time.Time {
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day()+days, 0, 0, 0, 0, loc)
}

// resolve turns q into a period in loc, or the validation errors of each
// bad parameter.
func (q RangeQuery) resolve(now time.Time, loc *time.Location) (Period, map[string]string) {
	fields := map[string]string{}
	q.Days, q.From, q.To = strings.TrimSpace(q.Days), strings.TrimSpace(q.From), strings.TrimSpace(q.To)
	if q.Days != "" && q.From+q.To != "" {
		fields["days"] = "Give days or from/to, not both."
		return Period{}, fields
	}
	if q.Days != "" || q.From+q.To == "" {
		n := DefaultDays
		if q.Days != "" {
			var err error
			n, err = strconv.Atoi(q.Days)
			if err != nil || n < 1 || n > MaxDays {
				fields["days"] = "Must be a whole number between 1 and 366."
				return Period{}, fields
			}
		}
		return Period{From: midnight(now, loc, -(n - 1)), To: midnight(now, loc, 1)}, nil
	}
	var p Period
	var ok bool
	if q.From != "" {
		if p.From, ok = parseBound(q.From, loc, false); !ok {
			fields["from"] = "Must be a date (YYYY-MM-DD) or an RFC 3339 time."
		}
	}
	if q.To != "" {
		if p.To, ok = parseBound(q.To, loc, true); !ok {
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
		p.From = time.Date(t.Year(), t.Month(), t.Day()-DefaultDays, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
	}
	p.From, p.To = p.From.In(loc), p.To.In(loc)
	switch {
	case !p.To.After(p.From):
		fields["to"] = "Must be after from."
	case p.To.After(p.From.AddDate(0, 0, MaxDays)):
		fields["to"] = "The range may cover at most 366 days."
	}
	if len(fields) > 0 {
		return Period{}, fields
	}
	return p, nil
}

// parseBound reads a from or to value: a date is its local midnight (for
// to, the next one, so that the day is included); an RFC 3339 time is
// taken as it is. Years before 1970 or after 9998 are refused (no log is
// that old, and the databases' date types end there).
func parseBound(v string, loc *time.Location, end bool) (time.Time, bool) {
	t, err := time.ParseInLocation(time.DateOnly, v, loc)
	if err == nil && end {
		t = midnight(t, loc, 1)
	} else if err != nil {
		if t, err = time.Parse(time.RFC3339, v); err != nil {
			return time.Time{}, false
		}
	}
	if y := t.UTC().Year(); y < 1970 || y > 9998 {
		return time.Time{}, false
	}
	return t.In(loc), true
}
