package store

import (
	"context"
	"fmt"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.EmailControlCounter = (*EmailControlService)(nil)

// AddEmailControlCount adds n to the count of kind on day in
// {prefix}mailsvc_email_control_counts with one upsert, the statement the
// WordPress bridge runs as it stops an email.
func (db *EmailControlService) AddEmailControlCount(ctx context.Context, kind, day string, n int64) error {
	if kind == "" || len(kind) > 64 || len(day) != len(core.EmailControlDay) {
		return core.Errorf(core.EINVALID, "An email control count needs a kind and a day (YYYY-MM-DD).")
	}
	stmt := `INSERT INTO {prefix}mailsvc_email_control_counts (kind, day, suppressed) VALUES (?, ?, ?)`
	if db.dialect == DialectMySQL {
		stmt += ` ON DUPLICATE KEY UPDATE suppressed = suppressed + VALUES(suppressed)`
	} else {
		stmt += ` ON CONFLICT (kind, day) DO UPDATE SET suppressed = suppressed + excluded.suppressed`
	}
	if _, err := db.sqlDB.ExecContext(ctx, db.expand(stmt), kind, day, n); err != nil {
		return fmt.Errorf("add email control count %s %s: %w", kind, day, err)
	}
	return nil
}

// EmailControlCounts returns the counts per kind over the days from..to
// inclusive ("" leaves a bound open).
func (db *EmailControlService) EmailControlCounts(ctx context.Context, from, to string) (map[string]int64, error) {
	stmt := `SELECT kind, SUM(suppressed) FROM {prefix}mailsvc_email_control_counts WHERE 1=1`
	var args []any
	if from != "" {
		stmt += ` AND day >= ?`
		args = append(args, from)
	}
	if to != "" {
		stmt += ` AND day <= ?`
		args = append(args, to)
	}
	stmt += ` GROUP BY kind`
	out := map[string]int64{}
	err := EachRow(ctx, db.sqlDB, "read email control counts", db.expand(stmt), args, func(r RowScanner) error {
		var kind string
		var n int64
		if err := r.Scan(&kind, &n); err != nil {
			return err
		}
		out[kind] = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
