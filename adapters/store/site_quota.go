package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.SiteQuotaStore = (*SiteService)(nil)

// ReserveSiteQuota implements core.SiteQuotaStore. Each period's row is
// counted up by one UPDATE that checks the limit in its WHERE clause, so
// two replicas reserving at once are serialised on the row lock and never
// both take the last place.
func (db *SiteService) ReserveSiteQuota(ctx context.Context, site int64, day, month string, dayLimit, monthLimit int64) (core.QuotaReservation, error) {
	r := core.QuotaReservation{DayPeriod: day, MonthPeriod: month, ReservedAt: now()}
	ins := `INSERT IGNORE INTO {prefix}mailsvc_site_quota_usage (site_id, period, used, updated_at) VALUES (?, ?, 0, ?)`
	if db.dialect == DialectSQLite {
		ins = `INSERT OR IGNORE INTO {prefix}mailsvc_site_quota_usage (site_id, period, used, updated_at) VALUES (?, ?, 0, ?)`
	}
	// The rows exist before the transaction, which then only locks the
	// day's row and the month's, always in that order: reservations
	// queue on the locks and never deadlock.
	for _, p := range []string{day, month} {
		if _, err := db.sqlDB.ExecContext(ctx, db.expand(ins), site, p, r.ReservedAt); err != nil {
			return r, fmt.Errorf("reserve quota of site %d: %w", site, err)
		}
	}
	err := retryDeadlock(func() error {
		r.OK, r.DayFull, r.MonthFull = false, false, false
		return db.inTx(ctx, func(tx *sql.Tx) error {
			take := func(period string, limit int64) (bool, error) {
				res, err := tx.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_site_quota_usage
					SET used = used + 1, updated_at = ? WHERE site_id = ? AND period = ? AND (? = 0 OR used < ?)`),
					r.ReservedAt, site, period, limit, limit)
				if err != nil {
					return false, err
				}
				n, err := res.RowsAffected()
				return n == 1, err
			}
			ok, err := take(day, dayLimit)
			if err != nil {
				return err
			}
			if !ok {
				r.DayFull = true
			} else if ok, err = take(month, monthLimit); err != nil {
				return err
			} else if !ok {
				r.MonthFull = true
			}
			if r.DayFull || r.MonthFull {
				// Roll the day's count back with the transaction.
				return errQuotaFull
			}
			r.OK = true
			return nil
		})
	})
	if err != nil && !errors.Is(err, errQuotaFull) {
		return r, fmt.Errorf("reserve quota of site %d: %w", site, err)
	}
	for _, p := range []struct {
		period string
		dst    *int64
	}{{day, &r.DayUsed}, {month, &r.MonthUsed}} {
		if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT used FROM {prefix}mailsvc_site_quota_usage WHERE site_id = ? AND period = ?`),
			site, p.period).Scan(p.dst); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return r, fmt.Errorf("read quota of site %d: %w", site, err)
		}
	}
	return r, nil
}

// errQuotaFull rolls back a reservation that does not fit.
var errQuotaFull = errors.New("quota full")

// ReleaseSiteQuota implements core.SiteQuotaStore.
func (db *SiteService) ReleaseSiteQuota(ctx context.Context, site int64, day, month string) error {
	_, err := db.sqlDB.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_site_quota_usage
		SET used = used - 1, updated_at = ? WHERE site_id = ? AND period IN (?, ?) AND used > 0`), now(), site, day, month)
	if err != nil {
		return fmt.Errorf("release quota of site %d: %w", site, err)
	}
	return nil
}

// MarkQuotaAlert implements core.SiteQuotaStore: one UPDATE that only a
// row whose flag is still clear matches, so one replica alone sends it.
func (db *SiteService) MarkQuotaAlert(ctx context.Context, site int64, period string, percent int) (bool, error) {
	col := "alerted_80"
	if percent >= 100 {
		col = "alerted_100"
	}
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_site_quota_usage SET `+col+` = 1
		WHERE site_id = ? AND period = ? AND `+col+` = 0`), site, period)
	if err != nil {
		return false, fmt.Errorf("mark quota alert of site %d: %w", site, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// SiteQuotaUsage implements core.SiteQuotaStore.
func (db *SiteService) SiteQuotaUsage(ctx context.Context, period string) (map[int64]int64, error) {
	out := map[int64]int64{}
	err := EachRow(ctx, db.sqlDB, "read quota usage", db.expand(`SELECT site_id, used FROM {prefix}mailsvc_site_quota_usage WHERE period = ?`),
		[]any{period}, func(r RowScanner) error {
			var site, used int64
			if err := r.Scan(&site, &used); err != nil {
				return err
			}
			out[site] = used
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SiteLogCounts counts each site's logs created since from, and the
// failed ones among them, by the (site_id, created_at) index.
func (db *SiteService) SiteLogCounts(ctx context.Context, from time.Time) (map[int64]core.SiteLogCount, error) {
	out := map[int64]core.SiteLogCount{}
	err := EachRow(ctx, db.sqlDB, "count logs by site", db.expand(`SELECT site_id, COUNT(*), SUM(CASE WHEN status = ? THEN 1 ELSE 0 END)
		FROM {prefix}mailsvc_logs WHERE created_at >= ? GROUP BY site_id`), []any{core.StatusFailed, from}, func(r RowScanner) error {
		var site int64
		var c core.SiteLogCount
		var failed sql.NullInt64
		if err := r.Scan(&site, &c.Total, &failed); err != nil {
			return err
		}
		c.Failed = failed.Int64
		out[site] = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
