package store

import (
	"context"
	"fmt"

	"github.com/mailsvc/mailsvc/core"
)

// QueueDepthCap bounds each count QueueDepth makes.
const QueueDepthCap = 1_000_000

// QueueDepth counts logs by status like QueueStats, but each count reads
// at most QueueDepthCap entries of a status index (the claim index for
// queued and sending), so a scrape stays cheap on a log of millions of
// rows; a count equal to the cap means at least that many.
func (db *LogService) QueueDepth(ctx context.Context) (core.QueueStats, error) {
	var st core.QueueStats
	for _, s := range []struct {
		status string
		n      *int
	}{{core.StatusQueued, &st.Queued}, {core.StatusSending, &st.Sending}, {core.StatusFailed, &st.Failed}, {core.StatusDelivered, &st.Delivered}} {
		if err := db.cappedCount(ctx, s.status, s.n); err != nil {
			return st, err
		}
	}
	return st, nil
}

// PendingCounts counts the queued and sending logs (the other fields stay
// zero) from the claim index, each up to QueueDepthCap: what the dashboard
// shows of the queue, without reading the delivered and failed history.
func (db *LogService) PendingCounts(ctx context.Context) (core.QueueStats, error) {
	var st core.QueueStats
	for _, s := range []struct {
		status string
		n      *int
	}{{core.StatusQueued, &st.Queued}, {core.StatusSending, &st.Sending}} {
		if err := db.cappedCount(ctx, s.status, s.n); err != nil {
			return st, err
		}
	}
	return st, nil
}

// cappedCount counts the logs of one status, up to QueueDepthCap.
func (db *handle) cappedCount(ctx context.Context, status string, n *int) error {
	scope, scopeArgs := SiteCond(ctx, "site_id")
	args := append(append([]any{status}, scopeArgs...), QueueDepthCap)
	err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT COUNT(*) FROM
		(SELECT 1 AS one FROM {prefix}mailsvc_logs WHERE status = ?`+scope+` LIMIT ?) capped`), args...).Scan(n)
	if err != nil {
		return fmt.Errorf("queue depth (%s): %w", status, err)
	}
	return nil
}
