package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// The roll-up counters ({prefix}mailsvc_outcome_buckets and
// {prefix}mailsvc_source_buckets) are written on MySQL to one of
// rollupShards rows per key, so concurrent writers seldom wait on one row
// lock. With modest traffic nearly every batch then makes a row of its
// own and the tables grow almost as large as the log, which the range
// reads of the dashboard and the analytics pay for. Once a bucket is no
// longer written (outcomes are counted in the bucket of the moment they
// are recorded), CompactRollups folds the shards of each of its keys into
// shard 0.

// RollupCompactAge is how old a bucket's end must be before
// CompactRollups folds its shards: outcomes are counted in the current
// bucket, so an hour leaves ample room for a transaction that read the
// clock just before a bucket ended.
const RollupCompactAge = time.Hour

// rollupCompactBatch is about how many keys one compaction transaction
// folds (a batch takes whole buckets, so it may take a few more), which
// keeps its locks few and short.
const rollupCompactBatch = 500

// errShardRace reports a shard row written into a bucket while it was
// being folded; the fold rolls back and runs again.
var errShardRace = errors.New("a shard row appeared while folding")

// rollupTable names a roll-up table and the column that, with
// bucket_start and status, makes its key.
type rollupTable struct {
	name, key string
}

// rollupTables are the sharded roll-up tables CompactRollups folds.
var rollupTables = []rollupTable{
	{"{prefix}mailsvc_outcome_buckets", "connection_id"},
	{"{prefix}mailsvc_source_buckets", "source"},
}

// RollupCompaction says what one CompactRollups run did.
type RollupCompaction struct {
	// Keys counts the counters (bucket, connection or source, status)
	// whose shards were folded into shard 0.
	Keys int64
	// RowsRemoved counts the shard rows deleted once folded.
	RowsRemoved int64
}

// CompactRollups folds, in both roll-up tables, every shard of each
// counter whose bucket ended more than RollupCompactAge ago into its
// shard 0 and deletes the other shards, so the range reads
// (OutcomeBuckets, OutcomeTotals, SourceBuckets, SourceTotals) read one
// row per counter. Every sum stays the same. It works in small
// transactions of about rollupCompactBatch counters, whole buckets at a
// time, each locking only the rows it folds, so it never holds the
// delivery path (which writes the current bucket) and an import adding
// to an old bucket waits at most one batch. It is idempotent and safe
// to run from several replicas at once: a batch that finds its rows
// already folded does nothing.
func (db *DB) CompactRollups(ctx context.Context) (RollupCompaction, error) {
	// A bucket starting before cutoff ended by now - RollupCompactAge.
	cutoff := now().Add(-RollupCompactAge).Truncate(core.OutcomeBucketSize)
	var out RollupCompaction
	for _, tbl := range rollupTables {
		var after *time.Time
		for {
			first, last, ok, err := db.nextShardedBuckets(ctx, tbl, after, cutoff)
			if err != nil {
				return out, err
			}
			if !ok {
				break
			}
			var got RollupCompaction
			for attempt := 0; ; attempt++ {
				err = retryDeadlock(func() error {
					var err error
					got, err = db.foldBuckets(ctx, tbl, first, last)
					return err
				})
				if !errors.Is(err, errShardRace) || attempt == 3 {
					break
				}
			}
			if err != nil {
				return out, err
			}
			out.Keys += got.Keys
			out.RowsRemoved += got.RowsRemoved
			after = &last
		}
	}
	return out, nil
}

// nextShardedBuckets finds the next buckets of tbl (after after, nil for
// the first, and starting before cutoff) that hold a shard other than 0:
// the first and last bucket start of about rollupCompactBatch such keys,
// ok false when there are none left. It reads the primary key in order,
// without locks.
func (db *DB) nextShardedBuckets(ctx context.Context, tbl rollupTable, after *time.Time, cutoff time.Time) (first, last time.Time, ok bool, err error) {
	where, args := "bucket_start < ?", []any{cutoff}
	if after != nil {
		where, args = "bucket_start > ? AND bucket_start < ?", []any{*after, cutoff}
	}
	args = append(args, rollupCompactBatch)
	rows, err := db.sqlDB.QueryContext(ctx, db.expand(`SELECT bucket_start FROM `+tbl.name+`
		WHERE `+where+` AND shard > 0
		GROUP BY bucket_start, `+tbl.key+`, status
		ORDER BY bucket_start, `+tbl.key+`, status LIMIT ?`), args...)
	if err != nil {
		return first, last, false, fmt.Errorf("find sharded roll-ups: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t time.Time
		if err := rows.Scan(&t); err != nil {
			return first, last, false, fmt.Errorf("find sharded roll-ups: %w", err)
		}
		if !ok {
			first, ok = t, true
		}
		last = t
	}
	if err := rows.Err(); err != nil {
		return first, last, false, fmt.Errorf("find sharded roll-ups: %w", err)
	}
	return first, last, ok, nil
}

// foldBuckets folds the shards of every counter of tbl whose bucket
// starts in [first, last] into shard 0, in one transaction: it reads and
// locks the rows (their shard rows, which concurrent writers then wait
// for), adds what shards 1+ hold to shard 0 and deletes them. Should a
// shard row appear meanwhile (MySQL's READ COMMITTED takes no gap lock),
// the DELETE removes more rows than were read and the transaction rolls
// back with errShardRace, for CompactRollups to run it again.
func (db *DB) foldBuckets(ctx context.Context, tbl rollupTable, first, last time.Time) (RollupCompaction, error) {
	type key struct {
		start       time.Time
		key, status string
	}
	var out RollupCompaction
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		out = RollupCompaction{}
		sel := `SELECT bucket_start, ` + tbl.key + `, status, messages FROM ` + tbl.name + `
			WHERE bucket_start >= ? AND bucket_start <= ? AND shard > 0
			ORDER BY bucket_start, ` + tbl.key + `, status, shard`
		if db.dialect == DialectMySQL {
			sel += " FOR UPDATE"
		}
		rows, err := tx.QueryContext(ctx, db.expand(sel), first, last)
		if err != nil {
			return fmt.Errorf("read sharded roll-ups: %w", err)
		}
		var keys []key
		sums := map[key]int64{}
		var read int64
		for rows.Next() {
			var k key
			var n int64
			if err := rows.Scan(&k.start, &k.key, &k.status, &n); err != nil {
				rows.Close()
				return fmt.Errorf("read sharded roll-ups: %w", err)
			}
			if _, seen := sums[k]; !seen {
				keys = append(keys, k)
			}
			sums[k] += n
			read++
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("read sharded roll-ups: %w", err)
		}
		if read == 0 {
			return nil // folded meanwhile (another replica)
		}
		// Shard 0 first, in key order as the writers lock, then the
		// shards it now counts.
		for start := 0; start < len(keys); start += rollupCompactBatch {
			part := keys[start:min(start+rollupCompactBatch, len(keys))]
			var b strings.Builder
			b.WriteString(`INSERT INTO ` + tbl.name + ` (bucket_start, ` + tbl.key + `, status, shard, messages) VALUES `)
			args := make([]any, 0, 4*len(part))
			for i, k := range part {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString("(?,?,?,0,?)")
				args = append(args, k.start, k.key, k.status, sums[k])
			}
			if db.dialect == DialectMySQL {
				b.WriteString(" ON DUPLICATE KEY UPDATE messages = messages + VALUES(messages)")
			} else {
				b.WriteString(" ON CONFLICT (bucket_start, " + tbl.key + ", status, shard) DO UPDATE SET messages = messages + excluded.messages")
			}
			if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
				return fmt.Errorf("fold roll-up shards: %w", err)
			}
		}
		res, err := tx.ExecContext(ctx, db.expand(`DELETE FROM `+tbl.name+`
			WHERE bucket_start >= ? AND bucket_start <= ? AND shard > 0`), first, last)
		if err != nil {
			return fmt.Errorf("delete folded roll-up shards: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("delete folded roll-up shards: %w", err)
		}
		if n != read {
			return fmt.Errorf("delete folded roll-up shards: %d rows, %d read: %w", n, read, errShardRace)
		}
		out = RollupCompaction{Keys: int64(len(keys)), RowsRemoved: n}
		return nil
	})
	return out, err
}
