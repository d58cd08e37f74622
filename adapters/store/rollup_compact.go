package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// The roll-up counters ({prefix}mailsvc_outcome_buckets, its hour and day
// roll-ups {prefix}mailsvc_outcome_rollups, and the tables modules
// register with RegisterRollupTables, such as the Pro roll-ups by source
// and by site and the provider event roll-ups) are written
// on MySQL to one of
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

// RollupTable names a sharded roll-up table CompactRollups folds: the
// columns that, with bucket_start (and width_minutes when Width is set),
// make its key, its counters, and the bucket widths (in minutes) it
// holds.
type RollupTable struct {
	Name     string // {prefix}mailsvc_...
	Width    bool   // the table has a width_minutes column
	Keys     []string
	Counters []string
	// Widths are the widths it holds; a table without a width column
	// holds quarter hours only.
	Widths []int
}

// rollupTables are the sharded roll-up tables CompactRollups folds: the
// service's own, then those modules registered (RegisterRollupTables).
var rollupTables = []RollupTable{
	{"{prefix}mailsvc_outcome_buckets", false, []string{"connection_id", "status"}, []string{"messages"}, nil},
	{"{prefix}mailsvc_outcome_rollups", true, []string{"connection_id", "status"}, []string{"messages"}, CoarseWidths},
}

// RegisterRollupTables adds a module's sharded roll-up tables to those
// CompactRollups folds. Call it from an init(), as RegisterMigrations.
func RegisterRollupTables(tables ...RollupTable) {
	moduleMu.Lock()
	defer moduleMu.Unlock()
	rollupTables = append(rollupTables, tables...)
}

// RollupTables returns the sharded roll-up tables CompactRollups folds:
// the service's own, then those modules registered.
func RollupTables() []RollupTable {
	moduleMu.RLock()
	defer moduleMu.RUnlock()
	return slices.Clone(rollupTables)
}

// widths returns the bucket widths (in minutes) tbl holds.
func (tbl RollupTable) widths() []int {
	if !tbl.Width || len(tbl.Widths) == 0 {
		return []int{QuarterMinutes}
	}
	return tbl.Widths
}

// where returns the condition on the width column (empty without one)
// and its argument.
func (tbl RollupTable) where(minutes int) (string, []any) {
	if !tbl.Width {
		return "", nil
	}
	return "width_minutes = ? AND ", []any{minutes}
}

// keyList returns the key columns after bucket_start, comma separated.
func (tbl RollupTable) keyList() string { return strings.Join(tbl.Keys, ", ") }

// RollupCompaction says what one CompactRollups run did.
type RollupCompaction struct {
	// Keys counts the counters (bucket, connection or source, status)
	// whose shards were folded into shard 0.
	Keys int64
	// RowsRemoved counts the shard rows deleted once folded.
	RowsRemoved int64
}

// CompactRollups folds, in every roll-up table (rollupTables) and for
// each bucket width, every shard of each counter whose bucket ended more
// than RollupCompactAge ago into its shard 0 and deletes the other
// shards, so the range reads (OutcomeBuckets, EventCounts,
// LogEventTallies, and the modules' over their registered tables: the Pro
// store's OutcomeTotals, SourceBuckets, SourceTotals) read one row per
// counter. Every sum stays the same. It works in small
// transactions of about rollupCompactBatch counters, whole buckets at a
// time, each locking only the rows it folds, so it never holds the
// delivery path (which writes the current bucket) and an import adding
// to an old bucket waits at most one batch. It is idempotent and safe
// to run from several replicas at once: a batch that finds its rows
// already folded does nothing.
func (db *RollupService) CompactRollups(ctx context.Context) (RollupCompaction, error) {
	var out RollupCompaction
	moduleMu.Lock()
	tables := slices.Clone(rollupTables)
	moduleMu.Unlock()
	for _, tbl := range tables {
		for _, minutes := range tbl.widths() {
			// A bucket starting before cutoff ended by now - RollupCompactAge.
			width := time.Duration(minutes) * time.Minute
			cutoff := now().Add(-RollupCompactAge).Truncate(core.OutcomeBucketSize).Add(core.OutcomeBucketSize - width)
			var after *time.Time
			for {
				first, last, ok, err := db.nextShardedBuckets(ctx, tbl, minutes, after, cutoff)
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
						got, err = db.foldBuckets(ctx, tbl, minutes, first, last)
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
	}
	return out, nil
}

// nextShardedBuckets finds the next buckets of tbl (after after, nil for
// the first, and starting before cutoff) that hold a shard other than 0:
// the first and last bucket start of about rollupCompactBatch such keys,
// ok false when there are none left. It reads the primary key in order,
// without locks.
func (db *RollupService) nextShardedBuckets(ctx context.Context, tbl RollupTable, minutes int, after *time.Time, cutoff time.Time) (first, last time.Time, ok bool, err error) {
	where, args := tbl.where(minutes)
	if after != nil {
		where += "bucket_start > ? AND "
		args = append(args, *after)
	}
	args = append(args, cutoff, rollupCompactBatch)
	err = EachRow(ctx, db.sqlDB, "find sharded roll-ups", db.expand(`SELECT bucket_start FROM `+tbl.Name+`
		WHERE `+where+`bucket_start < ? AND shard > 0
		GROUP BY bucket_start, `+tbl.keyList()+`
		ORDER BY bucket_start, `+tbl.keyList()+` LIMIT ?`), args, func(r RowScanner) error {
		var t time.Time
		if err := r.Scan(&t); err != nil {
			return err
		}
		if !ok {
			first, ok = t, true
		}
		last = t
		return nil
	})
	if err != nil {
		return first, last, false, err
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
func (db *RollupService) foldBuckets(ctx context.Context, tbl RollupTable, minutes int, first, last time.Time) (RollupCompaction, error) {
	type key struct {
		start time.Time
		keys  string // the key columns' values, NUL-separated
	}
	width, widthArgs := tbl.where(minutes)
	var out RollupCompaction
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		out = RollupCompaction{}
		sel := `SELECT bucket_start, ` + tbl.keyList() + `, ` + strings.Join(tbl.Counters, ", ") + ` FROM ` + tbl.Name + `
			WHERE ` + width + `bucket_start >= ? AND bucket_start <= ? AND shard > 0
			ORDER BY bucket_start, ` + tbl.keyList() + `, shard`
		if db.dialect == DialectMySQL {
			sel += " FOR UPDATE"
		}
		rows, err := tx.QueryContext(ctx, db.expand(sel), append(slices.Clone(widthArgs), first, last)...)
		if err != nil {
			return fmt.Errorf("read sharded roll-ups: %w", err)
		}
		var keys []key
		sums := map[key][]int64{}
		var read int64
		for rows.Next() {
			var k key
			vals := make([]string, len(tbl.Keys))
			nums := make([]int64, len(tbl.Counters))
			dest := []any{&k.start}
			for i := range vals {
				dest = append(dest, &vals[i])
			}
			for i := range nums {
				dest = append(dest, &nums[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return fmt.Errorf("read sharded roll-ups: %w", err)
			}
			k.keys = strings.Join(vals, "\x00")
			if _, seen := sums[k]; !seen {
				keys = append(keys, k)
				sums[k] = make([]int64, len(tbl.Counters))
			}
			for i, n := range nums {
				sums[k][i] += n
			}
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
		keyCols := []string{"bucket_start"}
		if tbl.Width {
			keyCols = []string{"width_minutes", "bucket_start"}
		}
		keyCols = append(append(keyCols, tbl.Keys...), "shard")
		upserts := make([]CounterRow, 0, len(keys))
		for _, k := range keys {
			r := CounterRow{}
			if tbl.Width {
				r = append(r, minutes)
			}
			r = append(r, k.start)
			for _, v := range strings.Split(k.keys, "\x00") {
				r = append(r, v)
			}
			r = append(r, 0)
			for _, n := range sums[k] {
				r = append(r, n)
			}
			upserts = append(upserts, r)
		}
		if err := db.upsertCounters(ctx, tx, tbl.Name, keyCols, tbl.Counters, upserts); err != nil {
			return fmt.Errorf("fold roll-up shards: %w", err)
		}
		res, err := tx.ExecContext(ctx, db.expand(`DELETE FROM `+tbl.Name+`
			WHERE `+width+`bucket_start >= ? AND bucket_start <= ? AND shard > 0`), append(slices.Clone(widthArgs), first, last)...)
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
