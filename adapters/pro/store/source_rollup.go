package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// The outcome roll-ups by source ({prefix}mailsvc_source_buckets, by 15
// minutes, and {prefix}mailsvc_source_rollups, by hour and UTC day) and
// by site ({prefix}mailsvc_site_rollups, site_rollup.go) are grown by
// countOutcomes, the outcome counter this package registers with the
// service's store: it runs in the transaction that records the outcomes
// (RecordOutcomes, the record-and-claim of a group write) and imports
// logs (ImportLogs), so they count exactly what the service's own
// roll-ups by connection count. CompactRollups folds their shards.

func init() {
	store.RegisterOutcomeCounter(countOutcomes)
	store.RegisterRollupTables(
		store.RollupTable{Name: "{prefix}mailsvc_source_buckets", Keys: []string{"source", "status"}, Counters: []string{"messages"}},
		store.RollupTable{Name: "{prefix}mailsvc_source_rollups", Width: true, Keys: []string{"source", "status"}, Counters: []string{"messages"},
			Widths: store.CoarseWidths},
		store.RollupTable{Name: "{prefix}mailsvc_site_rollups", Width: true, Keys: []string{"site_id", "connection_id", "source", "status"},
			Counters: []string{"messages"}, Widths: allWidths},
	)
}

// countOutcomes is the Pro analytics' store.OutcomeCounter: it adds the
// outcomes to the roll-ups by site, then by source, in tx.
func countOutcomes(ctx context.Context, db *store.DB, tx *sql.Tx, outcomes []store.OutcomeCount) error {
	sources := sourceTally{}
	bySite := siteTally{}
	for _, o := range outcomes {
		sources.add(o.At, o.Source, o.Status)
		bySite.add(o.At, o.SiteID, o.ConnectionID, o.Source, o.Status)
		if o.Partial {
			bySite.add(o.At, o.SiteID, o.ConnectionID, o.Source, core.OutcomeCountPartial)
		}
	}
	if err := bySite.write(ctx, db, tx); err != nil {
		return err
	}
	return sources.write(ctx, db, tx)
}

// sourceKey is one row of {prefix}mailsvc_source_buckets.
type sourceKey struct {
	Start  time.Time
	Source string
	Status string
}

// sourceTally groups final outcomes by bucket, source and status.
type sourceTally map[sourceKey]int64

// add counts one message from source that reached status at t; a status
// that is not final is ignored.
func (s sourceTally) add(t time.Time, source, status string) {
	if status != core.StatusDelivered && status != core.StatusFailed {
		return
	}
	s[sourceKey{Start: t.UTC().Truncate(core.OutcomeBucketSize), Source: source, Status: status}]++
}

// write adds the tally to the roll-up table in one multi-row upsert, its
// keys in a fixed order (and, on MySQL, on a random shard of
// store.RollupShards) so concurrent writers seldom wait for each other
// and never deadlock on it; then to the hour and day roll-ups
// (writeCoarse), on the same shard.
func (s sourceTally) write(ctx context.Context, db *store.DB, tx *sql.Tx) error {
	if len(s) == 0 {
		return nil
	}
	shard := 0
	if db.Dialect() == store.DialectMySQL {
		shard = rand.IntN(store.RollupShards)
	}
	keys := make([]sourceKey, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b sourceKey) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		if c := strings.Compare(a.Source, b.Source); c != 0 {
			return c
		}
		return strings.Compare(a.Status, b.Status)
	})
	var b strings.Builder
	b.WriteString(`INSERT INTO {prefix}mailsvc_source_buckets (bucket_start, source, status, shard, messages) VALUES `)
	args := make([]any, 0, 5*len(keys))
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("(?,?,?,?,?)")
		args = append(args, k.Start, k.Source, k.Status, shard, s[k])
	}
	if db.Dialect() == store.DialectMySQL {
		b.WriteString(" ON DUPLICATE KEY UPDATE messages = messages + VALUES(messages)")
	} else {
		b.WriteString(" ON CONFLICT (bucket_start, source, status, shard) DO UPDATE SET messages = messages + excluded.messages")
	}
	if _, err := tx.ExecContext(ctx, db.Expand(b.String()), args...); err != nil {
		return fmt.Errorf("add source roll-ups: %w", err)
	}
	return s.writeCoarse(ctx, db, tx, keys, shard)
}

// writeCoarse adds the tally, already sorted as keys, to the hour and day
// roll-ups by source, on shard.
func (s sourceTally) writeCoarse(ctx context.Context, db *store.DB, tx *sql.Tx, keys []sourceKey, shard int) error {
	type coarseKey struct {
		minutes int
		key     sourceKey
	}
	sums := map[coarseKey]int64{}
	var order []coarseKey
	for _, w := range store.CoarseWidths {
		for _, k := range keys {
			ck := coarseKey{w, sourceKey{Start: store.WidthStart(k.Start, w), Source: k.Source, Status: k.Status}}
			if _, seen := sums[ck]; !seen {
				order = append(order, ck)
			}
			sums[ck] += s[k]
		}
	}
	slices.SortFunc(order, func(a, b coarseKey) int {
		if a.minutes != b.minutes {
			return a.minutes - b.minutes
		}
		if c := a.key.Start.Compare(b.key.Start); c != 0 {
			return c
		}
		if c := strings.Compare(a.key.Source, b.key.Source); c != 0 {
			return c
		}
		return strings.Compare(a.key.Status, b.key.Status)
	})
	rows := make([]store.CounterRow, 0, len(order))
	for _, k := range order {
		rows = append(rows, store.CounterRow{k.minutes, k.key.Start, k.key.Source, k.key.Status, shard, sums[k]})
	}
	return db.UpsertCounters(ctx, tx, "{prefix}mailsvc_source_rollups",
		[]string{"width_minutes", "bucket_start", "source", "status", "shard"}, []string{"messages"}, rows)
}
