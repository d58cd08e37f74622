package store

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// The roll-ups by site ({prefix}mailsvc_site_rollups for the final
// outcomes, this package's migration 4, created by the service's own
// migration 24 before; {prefix}mailsvc_site_event_buckets for the
// provider events, the service's migration 24) count, for each site of a network other than the main
// one, what the network's roll-ups count, by bucket (15 minutes, hour,
// UTC day), connection, source and status, in the same transaction. The
// main site's figures are the network's less the other sites': a single
// site writes no row here, and every roll-up counted before the tables
// existed is the main site's.

// siteRollupKey is one row of {prefix}mailsvc_site_rollups, width and
// shard aside.
type siteRollupKey struct {
	Start        time.Time
	Site         int64
	ConnectionID int64
	Source       string
	Status       string
}

// siteTally groups the final outcomes of the sites other than the main
// one by bucket, site, connection, source and status.
type siteTally map[siteRollupKey]int64

// add counts one outcome (as the service's roll-ups by connection:
// delivered, failed or core.OutcomeCountPartial) of a message of site from source through
// conn at t; the main site's are not counted here.
func (s siteTally) add(t time.Time, site int64, conn *int64, source, status string) {
	if site <= core.MainSiteID {
		return
	}
	if status != core.StatusDelivered && status != core.StatusFailed && status != core.OutcomeCountPartial {
		return
	}
	k := siteRollupKey{Start: t.UTC().Truncate(core.OutcomeBucketSize), Site: site, Source: source, Status: status}
	if conn != nil {
		k.ConnectionID = *conn
	}
	s[k]++
}

// write adds the tally to the roll-ups by site at every width, in key
// order, on one random shard (MySQL).
func (s siteTally) write(ctx context.Context, db *store.DB, tx *sql.Tx) error {
	if len(s) == 0 {
		return nil
	}
	shard := 0
	if db.Dialect() == store.DialectMySQL {
		shard = rand.IntN(store.RollupShards)
	}
	type widthKey struct {
		minutes int
		key     siteRollupKey
	}
	sums := map[widthKey]int64{}
	var order []widthKey
	for _, w := range allWidths {
		for k, n := range s {
			wk := widthKey{w, k}
			wk.key.Start = store.WidthStart(k.Start, w)
			if _, seen := sums[wk]; !seen {
				order = append(order, wk)
			}
			sums[wk] += n
		}
	}
	slices.SortFunc(order, func(a, b widthKey) int {
		if a.minutes != b.minutes {
			return a.minutes - b.minutes
		}
		if c := a.key.Start.Compare(b.key.Start); c != 0 {
			return c
		}
		if a.key.Site != b.key.Site {
			return int(min(max(a.key.Site-b.key.Site, -1), 1))
		}
		if a.key.ConnectionID != b.key.ConnectionID {
			return int(min(max(a.key.ConnectionID-b.key.ConnectionID, -1), 1))
		}
		if c := strings.Compare(a.key.Source, b.key.Source); c != 0 {
			return c
		}
		return strings.Compare(a.key.Status, b.key.Status)
	})
	rows := make([]store.CounterRow, 0, len(order))
	for _, k := range order {
		rows = append(rows, store.CounterRow{k.minutes, k.key.Start, k.key.Site, k.key.ConnectionID, k.key.Source, k.key.Status, shard, sums[k]})
	}
	return db.Rollups().UpsertCounters(ctx, tx, "{prefix}mailsvc_site_rollups",
		[]string{"width_minutes", "bucket_start", "site_id", "connection_id", "source", "status", "shard"}, []string{"messages"}, rows)
}

// siteTotals sums the outcomes of one site whose bucket starts in
// [from, to) per key (connection_id or source) and status, for
// OutcomeTotals and SourceTotals under a site scope: a site other than
// the main one from its roll-ups by site, the main site as the network's
// totals (network, which runs the caller's tiered read with scan for
// each row) less every other site's. statuses limits the statuses read
// (nil for all).
func (db *DB) siteTotals(ctx context.Context, site int64, key string, from, to time.Time, statuses []string,
	network func(scan func(store.RowScanner) error) error) (map[[2]string]int64, error) {
	sums := map[[2]string]int64{}
	read := func(sign int64) func(store.RowScanner) error {
		return func(r store.RowScanner) error {
			var k [2]string
			var n int64
			if err := r.Scan(&k[0], &k[1], &n); err != nil {
				return err
			}
			sums[k] += sign * n
			return nil
		}
	}
	if site == core.MainSiteID {
		if err := network(read(1)); err != nil {
			return nil, err
		}
	}
	cond, args, ok := store.SpanWhere(store.RollupSpans(from, to), func(int) bool { return true }, true)
	if ok {
		siteCond := " AND site_id = ?"
		if site == core.MainSiteID {
			siteCond = " AND site_id <> ?"
		}
		args = append(args, site)
		if statuses != nil {
			siteCond += " AND status IN (" + strings.TrimSuffix(strings.Repeat("?,", len(statuses)), ",") + ")"
			for _, s := range statuses {
				args = append(args, s)
			}
		}
		sign := int64(1)
		if site == core.MainSiteID {
			sign = -1
		}
		if err := store.EachRow(ctx, db.base.SQL(), "site totals", db.base.Expand(`SELECT `+key+`, status, SUM(messages) FROM {prefix}mailsvc_site_rollups
			WHERE `+cond+siteCond+` GROUP BY `+key+`, status`), args, read(sign)); err != nil {
			return nil, err
		}
	}
	for k, n := range sums {
		if n <= 0 {
			delete(sums, k)
		}
	}
	return sums, nil
}
