package store

import (
	"context"
	"database/sql"
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

// sourceTables are the roll-ups by source.
var sourceTables = store.NewTallyTables("{prefix}mailsvc_source_buckets", "{prefix}mailsvc_source_rollups", "source", "source")

// sourceTally groups final outcomes by bucket, source and status.
type sourceTally store.Tally[string]

// add counts one message from source that reached status at t; a status
// that is not final is ignored.
func (s sourceTally) add(t time.Time, source, status string) {
	if status != core.StatusDelivered && status != core.StatusFailed {
		return
	}
	s[store.TallyKey[string]{Start: t.UTC().Truncate(core.OutcomeBucketSize), Key: source, Status: status}]++
}

// write adds the tally to the roll-ups by source, by 15 minutes, hour
// and UTC day (store.Tally.Write: in key order, on one random shard of
// store.RollupShards on MySQL).
func (s sourceTally) write(ctx context.Context, db *store.DB, tx *sql.Tx) error {
	return store.Tally[string](s).Write(ctx, db, tx, sourceTables)
}
