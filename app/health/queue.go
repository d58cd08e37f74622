package health

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// DefaultStalledAfter is MAILSVC_QUEUE_STALLED_MINUTES's default.
const DefaultStalledAfter = 15 * time.Minute

// OldestQueued finds the oldest queued message (core.LogStore).
type OldestQueued interface {
	OldestQueuedAt(ctx context.Context) (*time.Time, error)
}

// QueueWatch raises core.EventQueueStalled while the oldest queued message
// has waited longer than After (the scheduler's queue_stalled job, every
// minute). It raises on every check while the queue stays stalled; the
// alerter folds the repeats inside its window.
type QueueWatch struct {
	Logs   OldestQueued
	Alerts core.Alerter
	// After is MAILSVC_QUEUE_STALLED_MINUTES (DefaultStalledAfter).
	After time.Duration
	// Site names the site in alerts.
	Site string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Check looks at the oldest queued message and raises the alert when it
// is too old. It reports whether the queue is stalled.
func (w *QueueWatch) Check(ctx context.Context) (bool, error) {
	oldest, err := w.Logs.OldestQueuedAt(ctx)
	if err != nil {
		return false, fmt.Errorf("queue stalled watch: %w", err)
	}
	if oldest == nil {
		return false, nil
	}
	now := time.Now().UTC()
	if w.Now != nil {
		now = w.Now().UTC()
	}
	after := w.After
	if after <= 0 {
		after = DefaultStalledAfter
	}
	waited := now.Sub(*oldest)
	if waited <= after {
		return false, nil
	}
	if w.Alerts != nil {
		w.Alerts.Raise(context.WithoutCancel(ctx), core.Alert{
			Event: core.EventQueueStalled,
			Title: "Mail queue stalled",
			Message: fmt.Sprintf("The oldest queued message has waited %d minutes (more than %d); queued at %s.",
				int(waited.Minutes()), int(after.Minutes()), oldest.Format(time.RFC3339)),
			Site: w.Site,
			At:   now,
		})
	}
	return true, nil
}

// Run is Check as a scheduler job body.
func (w *QueueWatch) Run(ctx context.Context) error {
	_, err := w.Check(ctx)
	return err
}
