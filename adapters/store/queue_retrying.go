package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// RetryingCap bounds the count Retrying makes.
const RetryingCap = 100_000

// triedCond selects the logs tried already: with counted attempts, or
// rate-limited (the error of a resent log is cleared, so its old attempts
// do not count).
const triedCond = `(attempts > 0 OR (last_error <> '' AND EXISTS (SELECT 1 FROM {prefix}mailsvc_log_attempts a
	WHERE a.log_id = {prefix}mailsvc_logs.id AND a.outcome = 'rate_limited')))`

// Retrying counts the queued logs that were tried already and wait for
// their next attempt (attempts > 0, or a rate-limited attempt since it
// was last queued: a "slow down" answer, SMTP 421 or HTTP 429, does not
// count against the message's attempts but leaves its error; a message
// waiting for its site's quota was not tried and does not count), up to
// RetryingCap, and returns the
// earliest next attempt among them (nil when there is none). It reads the
// queued rows only (the claim index), never the delivered history.
func (db *LogService) Retrying(ctx context.Context) (int, *time.Time, error) {
	scope, scopeArgs := SiteCond(ctx, "site_id")
	var n int
	args := append(append([]any{core.StatusQueued}, scopeArgs...), RetryingCap)
	if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT COUNT(*) FROM
		(SELECT 1 AS one FROM {prefix}mailsvc_logs WHERE status = ? AND `+triedCond+scope+` LIMIT ?) capped`), args...).Scan(&n); err != nil {
		return 0, nil, fmt.Errorf("count retrying logs: %w", err)
	}
	if n == 0 {
		return 0, nil, nil
	}
	// ORDER BY rather than MIN(), as OldestQueuedAt: SQLite reads a bare
	// DATETIME column as a time, not an aggregate.
	var t time.Time
	err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT next_attempt_at FROM {prefix}mailsvc_logs
		WHERE status = ? AND `+triedCond+scope+` ORDER BY next_attempt_at LIMIT 1`), append([]any{core.StatusQueued}, scopeArgs...)...).Scan(&t)
	if errors.Is(err, sql.ErrNoRows) {
		return n, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("next retry: %w", err)
	}
	t = t.UTC()
	return n, &t, nil
}
