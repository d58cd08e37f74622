package store

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// CountFailedLogs returns how many logs failed for good (status failed)
// with their last change after from and at or before to: the failures an
// alert threshold counts. Every replica sharing the database counts the
// same rows.
func (db *DB) CountFailedLogs(ctx context.Context, from, to time.Time) (int, error) {
	var n int64
	err := db.gdb.WithContext(ctx).Table(db.TableName("logs")).
		Where("status = ? AND updated_at > ? AND updated_at <= ?", core.StatusFailed, from.UTC(), to.UTC()).
		Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count failed logs: %w", err)
	}
	return int(n), nil
}

// ClaimNotificationThreshold records at as channel id's last threshold
// alert when the previous one (if any) is at or before at-quiet, in one
// statement, and reports whether it did: of replicas claiming at once,
// one wins.
func (db *DB) ClaimNotificationThreshold(ctx context.Context, id int64, at time.Time, quiet time.Duration) (bool, error) {
	at = at.UTC().Truncate(time.Microsecond)
	res := db.notifications(ctx).
		Where("id = ? AND (threshold_alerted_at IS NULL OR threshold_alerted_at <= ?)", id, at.Add(-quiet)).
		Update("threshold_alerted_at", at)
	if res.Error != nil {
		return false, fmt.Errorf("claim the threshold alert of notification channel %d: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}
