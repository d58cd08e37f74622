package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
	"github.com/mailsvc/mailsvc/core"
)

// The Pro analytics read the outcome roll-ups by connection (the
// service's own tables) and by source (source_rollup.go), summed over a
// range, and the log in keyset pages for the CSV export.

var (
	_ analytics.RollupReader = (*AnalyticsService)(nil)
	_ analytics.LogExporter  = (*AnalyticsService)(nil)
)

// SourceBuckets returns the roll-up counters of final outcomes by source
// whose bucket starts in [from, to), ordered by Start (then source and
// status). They count the same outcomes as OutcomeBuckets (from
// RecordOutcomes and ImportLogs alike) and, like them, are history that
// deleting logs never lowers.
func (svc *AnalyticsService) SourceBuckets(ctx context.Context, from, to time.Time) ([]analytics.SourceBucket, error) {
	db := svc.db
	if err := store.NetworkOnly(ctx, "Statistics by source"); err != nil {
		return nil, err
	}
	return store.ReadBuckets(ctx, db.base, "source buckets", "{prefix}mailsvc_source_buckets", "source", from, to,
		func(r store.RowScanner) (analytics.SourceBucket, error) {
			var b analytics.SourceBucket
			err := r.Scan(&b.Start, &b.Source, &b.Status, &b.Count)
			b.Start = b.Start.UTC()
			return b, err
		})
}

// ExportLogs returns the next page of logs created in [p.From, p.To) in
// (CreatedAt, ID) order after the cursor (p.AfterCreatedAt, p.AfterID;
// a zero AfterID starts at the beginning), at most p.Limit of them (1–1000,
// default 500), without their bodies. The page is one range read of the
// created_at index from the cursor on, so paging through any range costs
// the same per row whatever its size.
func (svc *AnalyticsService) ExportLogs(ctx context.Context, p analytics.LogExportPage) ([]analytics.ExportedLog, error) {
	db := svc.db
	// Under a site scope the site's logs only, through the
	// (site_id, created_at) index.
	scope, scopeArgs := store.SiteCond(ctx, "site_id")
	limit := p.Limit
	if limit <= 0 || limit > 1000 {
		limit = 500
	}
	from, to := p.From.UTC().Truncate(time.Microsecond), p.To.UTC().Truncate(time.Microsecond)
	after := from
	if p.AfterID > 0 && p.AfterCreatedAt.After(from) {
		after = p.AfterCreatedAt.UTC().Truncate(time.Microsecond)
	}
	out := make([]analytics.ExportedLog, 0, limit)
	err := store.EachRow(ctx, db.base.SQL(), "export logs", db.base.Expand(`SELECT id, created_at, status,
		COALESCE(sent_connection_id, connection_id, 0), source, recipients, subject, last_error, provider_message_id
		FROM {prefix}mailsvc_logs
		WHERE created_at >= ? AND created_at < ? AND (created_at > ? OR id > ?)`+scope+`
		ORDER BY created_at, id LIMIT ?`), append(append([]any{after, to, after, p.AfterID}, scopeArgs...), limit), func(r store.RowScanner) error {
		var l analytics.ExportedLog
		if err := r.Scan(&l.ID, &l.CreatedAt, &l.Status, &l.ConnectionID, &l.Source, &l.Recipients,
			&l.Subject, &l.LastError, &l.ProviderMessageID); err != nil {
			return err
		}
		l.CreatedAt = l.CreatedAt.UTC()
		out = append(out, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// OutcomeTotals sums the outcome roll-ups (OutcomeBuckets) whose bucket
// starts in [from, to) per connection and status: one row per connection
// and status, Start set to from. The whole UTC days of the range are read
// from the day roll-ups, the whole hours at its edges from the hour ones
// and the rest from the 15-minute buckets (store.RollupSpans), all summed by the
// database in one query, so the answer is the same as summing
// OutcomeBuckets and its cost hardly grows with the range.
func (svc *AnalyticsService) OutcomeTotals(ctx context.Context, from, to time.Time) ([]core.OutcomeBucket, error) {
	db := svc.db
	return rollupTotals(ctx, db, "outcome totals", "{prefix}mailsvc_outcome_buckets", "{prefix}mailsvc_outcome_rollups", "connection_id",
		from, to, nil,
		func(k [2]string, n int64) (core.OutcomeBucket, error) {
			conn, err := strconv.ParseInt(k[0], 10, 64)
			if err != nil {
				return core.OutcomeBucket{}, fmt.Errorf("connection %q: %w", k[0], err)
			}
			return core.OutcomeBucket{Start: from.UTC(), ConnectionID: conn, Status: k[1], Count: n}, nil
		},
		func(r store.RowScanner) (core.OutcomeBucket, error) {
			b := core.OutcomeBucket{Start: from.UTC()}
			err := r.Scan(&b.ConnectionID, &b.Status, &b.Count)
			return b, err
		},
		func(a, b core.OutcomeBucket) int {
			if a.ConnectionID != b.ConnectionID {
				return int(min(max(a.ConnectionID-b.ConnectionID, -1), 1))
			}
			return strings.Compare(a.Status, b.Status)
		})
}

// SourceTotals sums the roll-ups by source (SourceBuckets) whose bucket
// starts in [from, to) per source and status: one row per source and
// status, Start set to from. Like OutcomeTotals it reads days, hours and
// quarter hours; under a site scope the site's roll-ups by site, whose
// partial deliveries are not the sources'.
func (svc *AnalyticsService) SourceTotals(ctx context.Context, from, to time.Time) ([]analytics.SourceBucket, error) {
	db := svc.db
	return rollupTotals(ctx, db, "source totals", "{prefix}mailsvc_source_buckets", "{prefix}mailsvc_source_rollups", "source",
		from, to, []string{core.StatusDelivered, core.StatusFailed},
		func(k [2]string, n int64) (analytics.SourceBucket, error) {
			return analytics.SourceBucket{Start: from.UTC(), Source: k[0], Status: k[1], Count: n}, nil
		},
		func(r store.RowScanner) (analytics.SourceBucket, error) {
			b := analytics.SourceBucket{Start: from.UTC()}
			err := r.Scan(&b.Source, &b.Status, &b.Count)
			return b, err
		},
		func(a, b analytics.SourceBucket) int {
			if c := strings.Compare(a.Source, b.Source); c != 0 {
				return c
			}
			return strings.Compare(a.Status, b.Status)
		})
}

// rollupTotals sums a roll-up by the column key over [from, to) per key
// and status, as tieredTotals reads quarter (its 15-minute table) and
// coarse (its hour and day table). Under a site scope it reads the
// site's roll-ups by site (siteTotals, the statuses it takes; nil for
// all), fromSite making a result of each key and status and compare
// ordering them; otherwise it returns the rows the database answers in
// order, scan reading each (key, status, count). what names the read in
// errors ("outcome totals").
func rollupTotals[B any](ctx context.Context, db *DB, what, quarter, coarse, key string, from, to time.Time, statuses []string,
	fromSite func(k [2]string, n int64) (B, error), scan func(r store.RowScanner) (B, error), compare func(a, b B) int) ([]B, error) {
	if site := core.SiteScope(ctx); site > 0 {
		// One site of a network: its roll-ups by site (site_rollup.go).
		sums, err := db.siteTotals(ctx, site, key, from, to, statuses, func(scan func(store.RowScanner) error) error {
			return db.tieredTotals(ctx, "network totals", quarter, coarse, key, from, to, scan)
		})
		if err != nil {
			return nil, fmt.Errorf("%s of site %d: %w", what, site, err)
		}
		out := make([]B, 0, len(sums))
		for k, n := range sums {
			b, err := fromSite(k, n)
			if err != nil {
				return nil, fmt.Errorf("%s of site %d: %w", what, site, err)
			}
			out = append(out, b)
		}
		slices.SortFunc(out, compare)
		return out, nil
	}
	out := []B{}
	if err := db.tieredTotals(ctx, what, quarter, coarse, key, from, to, store.AppendRows(&out, scan)); err != nil {
		return nil, err
	}
	return out, nil
}

// tieredTotals sums the messages of the buckets that start in [from, to)
// per key column and status, ordered by both: the quarter-hour spans of
// store.RollupSpans from quarters (a 15-minute table), the others from
// coarse (its hour and day roll-ups), in one statement. scan reads each
// row (key, status, sum); an error is wrapped with what.
func (db *DB) tieredTotals(ctx context.Context, what, quarters, coarse, key string, from, to time.Time, scan func(store.RowScanner) error) error {
	spans := store.RollupSpans(from, to)
	var parts []string
	var args []any
	if cond, a, ok := store.SpanWhere(spans, store.IsQuarter, false); ok {
		parts = append(parts, `SELECT `+key+`, status, messages FROM `+quarters+` WHERE `+cond)
		args = append(args, a...)
	}
	if cond, a, ok := store.SpanWhere(spans, store.IsCoarse, true); ok {
		parts = append(parts, `SELECT `+key+`, status, messages FROM `+coarse+` WHERE `+cond)
		args = append(args, a...)
	}
	if len(parts) == 0 {
		// An empty range: the same (empty) answer, still from the table.
		parts = append(parts, `SELECT `+key+`, status, messages FROM `+quarters+` WHERE 1 = 0`)
	}
	return store.EachRow(ctx, db.base.SQL(), what, db.base.Expand(`SELECT `+key+`, status, SUM(messages) FROM (`+
		strings.Join(parts, " UNION ALL ")+`) r GROUP BY `+key+`, status ORDER BY `+key+`, status`), args, scan)
}
