package core

import (
	"context"
	"time"
)

// AlertCount counts the alerts of one event about one connection (0: none)
// raised over a time range, and when the last one was.
type AlertCount struct {
	Event          string
	ConnectionID   int64
	ConnectionName string
	Count          int64
	Last           time.Time
}

// AlertHistoryStore keeps the alerts that were raised (after folding), so
// that reports can tell what happened over a period. Writes are best
// effort: an alert is sent whether or not it could be recorded.
type AlertHistoryStore interface {
	// RecordAlert appends a (its At is the time of record; zero means
	// now). Not idempotent: a retry after an unknown outcome may record
	// it twice.
	RecordAlert(ctx context.Context, a Alert) error
	// CountAlerts counts the recorded alerts whose At is in [from, to),
	// by event and connection, most frequent first.
	CountAlerts(ctx context.Context, from, to time.Time) ([]AlertCount, error)
	// PruneAlerts deletes the alerts recorded before before and returns
	// how many. Safe to retry.
	PruneAlerts(ctx context.Context, before time.Time) (int, error)
}
