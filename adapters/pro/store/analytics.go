package store

import (
	"context"
	"database/sql"
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
	_ analytics.RollupReader = (*DB)(nil)
	_ analytics.LogExporter  = (*DB)(nil)
)

// SourceBuckets returns the roll-up counters of final outcomes by source
// whose bucket starts in [from, to), ordered by Start (then source and
// status). They count the same outcomes as OutcomeBuckets (from
// RecordOutcomes and ImportLogs alike) and, like them, are history that
// deleting logs never lowers.
func (db *DB) SourceBuckets(ctx context.Context, from, to time.Time) ([]analytics.SourceBucket, error) {
	if err := store.NetworkOnly(ctx, "Statistics by source"); err != nil {
		return nil, err
	}
	rows, err := db.SQL().QueryContext(ctx, db.Expand(`SELECT bucket_start, source, status, SUM(messages)
		FROM {prefix}mailsvc_source_buckets WHERE bucket_start >= ? AND bucket_start < ?
		GROUP BY bucket_start, source, status
		ORDER BY bucket_start, source, status`),
		from.UTC().Truncate(time.Microsecond), to.UTC().Truncate(time.Microsecond))
	if err != nil {
		return nil, fmt.Errorf("source buckets: %w", err)
	}
	defer rows.Close()
	out := []analytics.SourceBucket{}
	for rows.Next() {
		var b analytics.SourceBucket
		if err := rows.Scan(&b.Start, &b.Source, &b.Status, &b.Count); err != nil {
			return nil, fmt.Errorf("scan source bucket: %w", err)
		}
		b.Start = b.Start.UTC()
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("source buckets: %w", err)
	}
	return out, nil
}

// ExportLogs returns the next page of logs created in [p.From, p.To) in
// (CreatedAt, ID) order after the cursor (p.AfterCreatedAt, p.AfterID;
// a zero AfterID starts at the beginning), at most p.Limit of them (1–1000,
// default 500), without their bodies. The page is one range read of the
// created_at index from the cursor on, so paging through any range costs
// the same per row whatever its size.
func (db *DB) ExportLogs(ctx context.Context, p analytics.LogExportPage) ([]analytics.ExportedLog, error) {
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
	rows, err := db.SQL().QueryContext(ctx, db.Expand(`SELECT id, created_at, status,
		COALESCE(sent_connection_id, connection_id, 0), source, recipients, subject, last_error, provider_message_id
		FROM {prefix}mailsvc_logs
		WHERE created_at >= ? AND created_at < ? AND (created_at > ? OR id > ?)`+scope+`
		ORDER BY created_at, id LIMIT ?`), append(append([]any{after, to, after, p.AfterID}, scopeArgs...), limit)...)
	if err != nil {
		return nil, fmt.Errorf("export logs: %w", err)
	}
	defer rows.Close()
	out := make([]analytics.ExportedLog, 0, limit)
	for rows.Next() {
		var l analytics.ExportedLog
		if err := rows.Scan(&l.ID, &l.CreatedAt, &l.Status, &l.ConnectionID, &l.Source, &l.Recipients,
			&l.Subject, &l.LastError, &l.ProviderMessageID); err != nil {
			return nil, fmt.Errorf("export logs: %w", err)
		}
		l.CreatedAt = l.CreatedAt.UTC()
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("export logs: %w", err)
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
func (db *DB) OutcomeTotals(ctx context.Context, from, to time.Time) ([]core.OutcomeBucket, error) {
	if site := core.SiteScope(ctx); site > 0 {
		// One site of a network: its roll-ups by site (site_rollup.go).
		sums, err := db.siteTotals(ctx, site, "connection_id", from, to, nil, func() (*sql.Rows, error) {
			return db.tieredTotals(ctx, "{prefix}mailsvc_outcome_buckets", "{prefix}mailsvc_outcome_rollups", "connection_id", from, to)
		})
		if err != nil {
			return nil, fmt.Errorf("outcome totals of site %d: %w", site, err)
		}
		out := make([]core.OutcomeBucket, 0, len(sums))
		for k, n := range sums {
			conn, err := strconv.ParseInt(k[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("outcome totals of site %d: connection %q: %w", site, k[0], err)
			}
			out = append(out, core.OutcomeBucket{Start: from.UTC(), ConnectionID: conn, Status: k[1], Count: n})
		}
		slices.SortFunc(out, func(a, b core.OutcomeBucket) int {
			if a.ConnectionID != b.ConnectionID {
				return int(min(max(a.ConnectionID-b.ConnectionID, -1), 1))
			}
			return strings.Compare(a.Status, b.Status)
		})
		return out, nil
	}
	rows, err := db.tieredTotals(ctx, "{prefix}mailsvc_outcome_buckets", "{prefix}mailsvc_outcome_rollups", "connection_id", from, to)
	if err != nil {
		return nil, fmt.Errorf("outcome totals: %w", err)
	}
	defer rows.Close()
	out := []core.OutcomeBucket{}
	for rows.Next() {
		b := core.OutcomeBucket{Start: from.UTC()}
		if err := rows.Scan(&b.ConnectionID, &b.Status, &b.Count); err != nil {
			return nil, fmt.Errorf("outcome totals: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outcome totals: %w", err)
	}
	return out, nil
}

// SourceTotals sums the roll-ups by source (SourceBuckets) whose bucket
// starts in [from, to) per source and status: one row per source and
// status, Start set to from. Like OutcomeTotals it reads days, hours and
// quarter hours.
func (db *DB) SourceTotals(ctx context.Context, from, to time.Time) ([]analytics.SourceBucket, error) {
	if site := core.SiteScope(ctx); site > 0 {
		// One site of a network: its roll-ups by site (site_rollup.go),
		// whose partial deliveries are not the sources'.
		sums, err := db.siteTotals(ctx, site, "source", from, to, []string{core.StatusDelivered, core.StatusFailed}, func() (*sql.Rows, error) {
			return db.tieredTotals(ctx, "{prefix}mailsvc_source_buckets", "{prefix}mailsvc_source_rollups", "source", from, to)
		})
		if err != nil {
			return nil, fmt.Errorf("source totals of site %d: %w", site, err)
		}
		out := make([]analytics.SourceBucket, 0, len(sums))
		for k, n := range sums {
			out = append(out, analytics.SourceBucket{Start: from.UTC(), Source: k[0], Status: k[1], Count: n})
		}
		slices.SortFunc(out, func(a, b analytics.SourceBucket) int {
			if c := strings.Compare(a.Source, b.Source); c != 0 {
				return c
			}
			return strings.Compare(a.Status, b.Status)
		})
		return out, nil
	}
	rows, err := db.tieredTotals(ctx, "{prefix}mailsvc_source_buckets", "{prefix}mailsvc_source_rollups", "source", from, to)
	if err != nil {
		return nil, fmt.Errorf("source totals: %w", err)
	}
	defer rows.Close()
	out := []analytics.SourceBucket{}
	for rows.Next() {
		b := analytics.SourceBucket{Start: from.UTC()}
		if err := rows.Scan(&b.Source, &b.Status, &b.Count); err != nil {
			return nil, fmt.Errorf("source totals: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("source totals: %w", err)
	}
	return out, nil
}

// tieredTotals sums the messages of the buckets that start in [from, to)
// per key column and status, ordered by both: the quarter-hour spans of
// store.RollupSpans from quarters (a 15-minute table), the others from coarse
// (its hour and day roll-ups), in one statement.
func (db *DB) tieredTotals(ctx context.Context, quarters, coarse, key string, from, to time.Time) (*sql.Rows, error) {
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
	return db.SQL().QueryContext(ctx, db.Expand(`SELECT `+key+`, status, SUM(messages) FROM (`+
		strings.Join(parts, " UNION ALL ")+`) r GROUP BY `+key+`, status ORDER BY `+key+`, status`), args...)
}
