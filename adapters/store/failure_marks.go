package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// {prefix}mailsvc_failure_marks holds one row (failed_at, log_id) per log
// that failed for good, written by RecordOutcomes in the transaction that
// records the failure (recordOutcomes): the final failures an alert
// threshold counts, the same on every replica sharing the database. The
// marks are written only on failure, so delivered messages cost nothing,
// and no index on the logs table (whose every status change would rewrite
// it) is needed. A log's later changes (a resend, a provider's bounce, an
// edit), imported logs and deleted logs leave the marks as they are.
// PruneFailureMarks deletes those older than the longest threshold window.

// FailureMarkRetention is how long a failure mark is kept: the longest
// threshold window (core.MaxThresholdMinutes), and an hour for the prune
// job's period.
const FailureMarkRetention = core.MaxThresholdMinutes*time.Minute + time.Hour

// insertFailureMarks records that the logs ids failed for good at t, in
// multi-row INSERTs inside tx.
func (db *handle) insertFailureMarks(ctx context.Context, tx *sql.Tx, t time.Time, ids []int64) error {
	for part := range slices.Chunk(ids, idChunk) {
		var b strings.Builder
		b.WriteString(`INSERT INTO {prefix}mailsvc_failure_marks (failed_at, log_id) VALUES `)
		args := make([]any, 0, 2*len(part))
		for i, id := range part {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("(?,?)")
			args = append(args, t, id)
		}
		if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
			return fmt.Errorf("mark failed logs: %w", err)
		}
	}
	return nil
}

// CountFailedLogs returns how many logs failed for good (their failure
// recorded as a delivery outcome) after from, at or before to: the
// failures an alert threshold counts. Every replica sharing the database
// counts the same marks; a range read of the marks' primary key.
func (db *LogService) CountFailedLogs(ctx context.Context, from, to time.Time) (int, error) {
	var n int
	err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT COUNT(*) FROM {prefix}mailsvc_failure_marks
		WHERE failed_at > ? AND failed_at <= ?`),
		from.UTC().Truncate(time.Microsecond), to.UTC().Truncate(time.Microsecond)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count failed logs: %w", err)
	}
	return n, nil
}

// PruneFailureMarks deletes the failure marks older than before (see
// FailureMarkRetention) and returns how many it deleted.
func (db *LogService) PruneFailureMarks(ctx context.Context, before time.Time) (int, error) {
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_failure_marks WHERE failed_at < ?`),
		before.UTC().Truncate(time.Microsecond))
	if err != nil {
		return 0, fmt.Errorf("prune failure marks: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
