package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// bucketKey is one row of {prefix}mailsvc_outcome_buckets.
type bucketKey struct {
	Start        time.Time
	ConnectionID int64
	Status       string
}

// outcomeTally groups final outcomes by bucket, connection and status.
type outcomeTally map[bucketKey]int64

// add counts one message that reached status (delivered or failed; other
// statuses are not final and are ignored) through conn at t.
func (o outcomeTally) add(t time.Time, conn *int64, status string) {
	if status != core.StatusDelivered && status != core.StatusFailed {
		return
	}
	k := bucketKey{Start: t.UTC().Truncate(core.OutcomeBucketSize), Status: status}
	if conn != nil {
		k.ConnectionID = *conn
	}
	o[k]++
}

// rollupShards is how many rows share one counter on MySQL: each batch
// adds to one of them at random, so concurrent RecordOutcomes
// transactions (which hold the row lock until they commit) seldom wait
// for each other. OutcomeBuckets sums the shards. SQLite has one writer
// at a time and uses shard 0 only.
const rollupShards = 8

// write adds the tally to the roll-up table: one multi-row upsert, its
// keys in a fixed order so concurrent writers lock them in the same order.
func (o outcomeTally) write(ctx context.Context, db *DB, tx *sql.Tx) error {
	if len(o) == 0 {
		return nil
	}
	shard := 0
	if db.dialect == DialectMySQL {
		shard = rand.IntN(rollupShards)
	}
	keys := make([]bucketKey, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b bucketKey) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		if a.ConnectionID != b.ConnectionID {
			return int(min(max(a.ConnectionID-b.ConnectionID, -1), 1))
		}
		return strings.Compare(a.Status, b.Status)
	})
	var b strings.Builder
	b.WriteString(`INSERT INTO {prefix}mailsvc_outcome_buckets (bucket_start, connection_id, status, shard, messages) VALUES `)
	args := make([]any, 0, 5*len(keys))
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("(?,?,?,?,?)")
		args = append(args, k.Start, k.ConnectionID, k.Status, shard, o[k])
	}
	if db.dialect == DialectMySQL {
		b.WriteString(" ON DUPLICATE KEY UPDATE messages = messages + VALUES(messages)")
	} else {
		b.WriteString(" ON CONFLICT (bucket_start, connection_id, status, shard) DO UPDATE SET messages = messages + excluded.messages")
	}
	if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
		return fmt.Errorf("add outcome roll-ups: %w", err)
	}
	return nil
}

// OutcomeBuckets returns the roll-up counters of final outcomes whose
// bucket starts in [from, to), ordered by Start (then connection and
// status): one row per bucket, connection and status that counted at
// least one message. The counters are history: they grow in the same
// transaction as RecordOutcomes (and ImportLogs) and deleting logs
// (retention, DELETE /logs) never lowers them.
func (db *DB) OutcomeBuckets(ctx context.Context, from, to time.Time) ([]core.OutcomeBucket, error) {
	rows, err := db.sqlDB.QueryContext(ctx, db.expand(`SELECT bucket_start, connection_id, status, SUM(messages)
		FROM {prefix}mailsvc_outcome_buckets WHERE bucket_start >= ? AND bucket_start < ?
		GROUP BY bucket_start, connection_id, status
		ORDER BY bucket_start, connection_id, status`),
		from.UTC().Truncate(time.Microsecond), to.UTC().Truncate(time.Microsecond))
	if err != nil {
		return nil, fmt.Errorf("outcome buckets: %w", err)
	}
	defer rows.Close()
	out := []core.OutcomeBucket{}
	for rows.Next() {
		var b core.OutcomeBucket
		if err := rows.Scan(&b.Start, &b.ConnectionID, &b.Status, &b.Count); err != nil {
			return nil, fmt.Errorf("scan outcome bucket: %w", err)
		}
		b.Start = b.Start.UTC()
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outcome buckets: %w", err)
	}
	return out, nil
}
