package store

import (
	"context"
	"fmt"
	"time"
)

// ReplicaHeartbeat records that the process owner is alive until now+ttl,
// forgets replicas whose heartbeat has expired, and returns how many
// replicas are alive (at least 1: this one). The delivery engine splits
// each connection's rate limit by this count.
func (db *LeaseService) ReplicaHeartbeat(ctx context.Context, owner string, ttl time.Duration) (int, error) {
	t := now()
	until := t.Add(ttl).UTC().Truncate(time.Microsecond)
	upsert := `INSERT INTO {prefix}mailsvc_replicas (owner, expires_at) VALUES (?, ?)
		ON DUPLICATE KEY UPDATE expires_at = VALUES(expires_at)`
	if db.dialect == DialectSQLite {
		upsert = `INSERT INTO {prefix}mailsvc_replicas (owner, expires_at) VALUES (?, ?)
			ON CONFLICT (owner) DO UPDATE SET expires_at = excluded.expires_at`
	}
	if _, err := db.sqlDB.ExecContext(ctx, db.expand(upsert), owner, until); err != nil {
		return 0, fmt.Errorf("replica heartbeat: %w", err)
	}
	if _, err := db.sqlDB.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_replicas WHERE expires_at < ?`), t); err != nil {
		return 0, fmt.Errorf("forget expired replicas: %w", err)
	}
	var n int
	if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT COUNT(*) FROM {prefix}mailsvc_replicas WHERE expires_at >= ?`), t).Scan(&n); err != nil {
		return 0, fmt.Errorf("count live replicas: %w", err)
	}
	return max(n, 1), nil
}

// ReplicaLeave forgets the process owner at once (a clean shutdown), so
// the others take its share of the rate limits at their next heartbeat.
func (db *LeaseService) ReplicaLeave(ctx context.Context, owner string) error {
	if _, err := db.sqlDB.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_replicas WHERE owner = ?`), owner); err != nil {
		return fmt.Errorf("replica leave: %w", err)
	}
	return nil
}
