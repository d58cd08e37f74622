package store

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// SiteCond returns the condition (" AND column = ?", or "") and its
// argument limiting a query to the site ctx is scoped to
// (core.WithSiteScope).
func SiteCond(ctx context.Context, column string) (string, []any) {
	if s := core.SiteScope(ctx); s > 0 {
		return " AND " + column + " = ?", []any{s}
	}
	return "", nil
}

// logSiteID is the site a new log is written for: its own SiteID, else
// the site ctx names, else the main site.
func logSiteID(ctx context.Context, l *core.Log) int64 {
	if l.SiteID > 0 {
		return l.SiteID
	}
	if s, ok := core.SiteFrom(ctx); ok && s > 0 {
		l.SiteID = s
		return s
	}
	l.SiteID = core.MainSiteID
	return l.SiteID
}

// NetworkOnly refuses a read that has no per-site form under a site scope
// (the roll-ups count the whole network): a site's administrator gets
// "not available" rather than the other sites' figures.
func NetworkOnly(ctx context.Context, what string) error {
	if core.SiteScope(ctx) > 0 {
		return core.Errorf(core.EUNAVAILABLE, "%s are kept for the whole network only; ask a network administrator.", what)
	}
	return nil
}

// siteOutcomeBuckets is OutcomeBuckets for one site of a network, counted
// from its final logs (by the time of their outcome) through the
// (site_id, created_at) index, since the roll-ups count the whole
// network. Delivered logs that the keep-delivered setting removed are not
// counted.
func (db *handle) siteOutcomeBuckets(ctx context.Context, site int64, from, to time.Time) ([]core.OutcomeBucket, error) {
	type key struct {
		start  time.Time
		conn   int64
		status string
	}
	counts := map[key]int64{}
	err := EachRow(ctx, db.sqlDB, fmt.Sprintf("outcome buckets of site %d", site), db.expand(`SELECT updated_at, COALESCE(sent_connection_id, 0), status
		FROM {prefix}mailsvc_logs WHERE site_id = ? AND status IN (?, ?) AND updated_at >= ? AND updated_at < ?
		AND created_at < ?`),
		[]any{site, core.StatusDelivered, core.StatusFailed, from.UTC().Truncate(time.Microsecond), to.UTC().Truncate(time.Microsecond),
			to.UTC().Truncate(time.Microsecond)}, func(r RowScanner) error {
			var at time.Time
			var k key
			if err := r.Scan(&at, &k.conn, &k.status); err != nil {
				return err
			}
			k.start = at.UTC().Truncate(15 * time.Minute)
			counts[k]++
			return nil
		})
	if err != nil {
		return nil, err
	}
	out := make([]core.OutcomeBucket, 0, len(counts))
	for k, n := range counts {
		out = append(out, core.OutcomeBucket{Start: k.start, ConnectionID: k.conn, Status: k.status, Count: n})
	}
	core.SortOutcomeBuckets(out)
	return out, nil
}
