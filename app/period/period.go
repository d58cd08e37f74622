package period

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Period is a half-open time range [From, To), shown in the site's time
// zone.
type Period struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// Contains reports whether t is in p.
func (p Period) Contains(t time.Time) bool { return !t.Before(p.From) && t.Before(p.To) }

// Previous returns the period of the same duration that ends where p
// starts.
func (p Period) Previous() Period {
	return Period{From: p.From.Add(-p.To.Sub(p.From)), To: p.From}
}

// Aligned returns p widened to the roll-ups' 15-minute UTC buckets (which
// every time zone's hours and days fall on), in loc.
func (p Period) Aligned(loc *time.Location) Period {
	return Period{From: FloorBucket(p.From).In(loc), To: CeilBucket(p.To).In(loc)}
}

// Midnight returns the start of t's day in loc, moved by days. A day that
// starts in a time-zone transition starts at the first instant that
// exists (time.Date's rule).
func Midnight(t time.Time, loc *time.Location, days int) time.Time {
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day()+days, 0, 0, 0, 0, loc)
}

// LastDays returns the n calendar days in loc up to today included.
func LastDays(now time.Time, loc *time.Location, n int) Period {
	return Period{From: Midnight(now, loc, -(n - 1)), To: Midnight(now, loc, 1)}
}

// FloorBucket returns the start of the roll-up bucket (core.OutcomeBucket,
// 15 minutes from a UTC multiple) holding t.
func FloorBucket(t time.Time) time.Time { return t.Truncate(core.OutcomeBucketSize) }

// CeilBucket returns t when it starts a roll-up bucket, else the start of
// the next one.
func CeilBucket(t time.Time) time.Time {
	f := FloorBucket(t)
	if f.Equal(t) {
		return t
	}
	return f.Add(core.OutcomeBucketSize)
}

// TimeZoner reads the site's time zone (as wp_timezone() does).
type TimeZoner interface {
	TimeZone(ctx context.Context) (*time.Location, error)
}

// ZoneFunc is a function that reads the site's time zone; nil reads
// none.
type ZoneFunc func(ctx context.Context) (*time.Location, error)

// TimeZone calls f, or reads no zone when f is nil.
func (f ZoneFunc) TimeZone(ctx context.Context) (*time.Location, error) {
	if f == nil {
		return nil, nil
	}
	return f(ctx)
}

// Zone returns the site's time zone as site reads it: UTC when site is
// nil or reads no zone, its error wrapped.
func Zone(ctx context.Context, site TimeZoner) (*time.Location, error) {
	if site == nil {
		return time.UTC, nil
	}
	loc, err := site.TimeZone(ctx)
	if err != nil {
		return nil, fmt.Errorf("site time zone: %w", err)
	}
	if loc == nil {
		return time.UTC, nil
	}
	return loc, nil
}
