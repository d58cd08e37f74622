package store

import (
	"context"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/analytics"
)

// The provider event roll-ups are still the service's store's
// (adapters/store/event_rollup.go), which answers in core's types; these
// two methods hand its answers over in the analytics' own types. They go
// when those roll-ups move to this package.

var _ analytics.EventReader = (*DB)(nil)

// EventCounts implements analytics.EventReader over the service store's
// EventCounts.
func (db *DB) EventCounts(ctx context.Context, from, to time.Time) ([]analytics.EventCount, error) {
	counts, err := db.DB.EventCounts(ctx, from, to)
	if err != nil {
		return nil, err
	}
	out := make([]analytics.EventCount, len(counts))
	for i, c := range counts {
		out[i] = analytics.EventCount(c)
	}
	return out, nil
}

// LogEventTallies implements analytics.EventReader over the service
// store's LogEventTallies.
func (db *DB) LogEventTallies(ctx context.Context, from, to time.Time, events []string) ([]analytics.LogEventTally, error) {
	tallies, err := db.DB.LogEventTallies(ctx, from, to, events)
	if err != nil {
		return nil, err
	}
	out := make([]analytics.LogEventTally, len(tallies))
	for i, t := range tallies {
		out[i] = analytics.LogEventTally(t)
	}
	return out, nil
}
