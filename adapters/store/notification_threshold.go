package store

import (
	"context"
	"fmt"
	"time"
)

// ClaimNotificationThreshold records at as channel id's last threshold
// alert when the previous one (if any) is at or before at-quiet, in one
// statement, and reports whether it did: of replicas claiming at once,
// one wins. (The failures a threshold counts: failure_marks.go.)
func (db *NotificationService) ClaimNotificationThreshold(ctx context.Context, id int64, at time.Time, quiet time.Duration) (bool, error) {
	at = at.UTC().Truncate(time.Microsecond)
	res := db.notifications(ctx).
		Where("id = ? AND (threshold_alerted_at IS NULL OR threshold_alerted_at <= ?)", id, at.Add(-quiet)).
		Update("threshold_alerted_at", at)
	if res.Error != nil {
		return false, fmt.Errorf("claim the threshold alert of notification channel %d: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}
