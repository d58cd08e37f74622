package period

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// badBound is the validation message of a from or to that does not parse.
const badBound = "Must be a date (YYYY-MM-DD) or an RFC 3339 time."

// Rules are how a caller reads a requested range: its bounds, and what a
// from or to given alone means. From and To are dates (YYYY-MM-DD, read in
// the site's time zone; a date To includes that whole day) or RFC 3339
// times (To excluded).
type Rules struct {
	// MaxDays bounds a number of days (Days) and the length of a from/to
	// range.
	MaxDays int
	// DefaultDays is how far before To a range given To alone starts
	// (that many days of wall clock). 0 means From is required with To.
	DefaultDays int
	// ToNow makes a range given From alone run to now; otherwise it runs
	// to the end of today.
	ToNow bool
	// CalendarMax counts MaxDays in calendar days from the start of From's
	// day, the last one whole: To may reach the midnight MaxDays+1 days
	// after From's. Otherwise To may be at most MaxDays days of wall clock
	// after From.
	CalendarMax bool
	// LimitYears refuses a from or to before 1970 or after 9998 (no log is
	// that old, and the databases' date types end there).
	LimitYears bool
}

// Days reads v as a number of calendar days (1 to MaxDays) up to today
// included, in loc, or returns the validation error of the days field.
func (r Rules) Days(v string, now time.Time, loc *time.Location) (Period, map[string]string) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > r.MaxDays {
		return Period{}, map[string]string{"days": fmt.Sprintf("Must be a whole number between 1 and %d.", r.MaxDays)}
	}
	return LastDays(now, loc, n), nil
}

// Resolve reads a from/to range (at least one of them given) in loc, or
// returns the validation errors of each bad field (from, to).
func (r Rules) Resolve(from, to string, now time.Time, loc *time.Location) (Period, map[string]string) {
	fields := map[string]string{}
	var p Period
	var ok bool
	if from == "" {
		if r.DefaultDays == 0 {
			fields["from"] = "Required with to."
		}
	} else if p.From, ok = r.parseBound(from, loc, false); !ok {
		fields["from"] = badBound
	}
	if to != "" {
		if p.To, ok = r.parseBound(to, loc, true); !ok {
			fields["to"] = badBound
		}
	}
	if len(fields) > 0 {
		return Period{}, fields
	}
	switch {
	case to == "" && r.ToNow:
		p.To = now
	case to == "":
		p.To = Midnight(now, loc, 1)
	case from == "":
		t := p.To.In(loc)
		p.From = time.Date(t.Year(), t.Month(), t.Day()-r.DefaultDays, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
	}
	p.From, p.To = p.From.In(loc), p.To.In(loc)
	limit := p.From.AddDate(0, 0, r.MaxDays)
	if r.CalendarMax {
		limit = Midnight(p.From, loc, r.MaxDays+1)
	}
	switch {
	case !p.To.After(p.From):
		fields["to"] = "Must be after from."
	case p.To.After(limit):
		fields["to"] = fmt.Sprintf("The range may cover at most %d days.", r.MaxDays)
	}
	if len(fields) > 0 {
		return Period{}, fields
	}
	return p, nil
}

// parseBound reads a from or to value: a date is its local midnight (for
// to, the next one, so that the day is included); an RFC 3339 time is
// taken as it is.
func (r Rules) parseBound(v string, loc *time.Location, end bool) (time.Time, bool) {
	v = strings.TrimSpace(v)
	t, err := time.ParseInLocation(time.DateOnly, v, loc)
	switch {
	case err == nil && end:
		t = Midnight(t, loc, 1)
	case err != nil:
		if t, err = time.Parse(time.RFC3339, v); err != nil {
			return time.Time{}, false
		}
	}
	if y := t.UTC().Year(); r.LimitYears && (y < 1970 || y > 9998) {
		return time.Time{}, false
	}
	return t.In(loc), true
}
