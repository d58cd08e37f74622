package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.JobStore = (*JobService)(nil)

// ClaimJobRun implements core.JobStore. One conditional UPDATE takes an
// eligible row (its last run started at least interval ago); when no row
// was taken, an INSERT that ignores a duplicate key claims a job that has
// never run. Each statement is atomic, so of concurrent claimers — in one
// process or in several sharing the database — exactly one sees a row
// affected.
//
// Whose clock decides: on MySQL/MariaDB both the new last_run_at and the
// eligibility test use the server's UTC_TIMESTAMP(6), so clock skew
// between replicas cannot let two of them run a job in one interval. On
// SQLite (one file, so one host) the calling process's UTC clock is used
// for both.
func (db *JobService) ClaimJobRun(ctx context.Context, name, owner string, interval time.Duration) (bool, error) {
	if name == "" || owner == "" {
		return false, errors.New("claim job run: name and owner are required")
	}
	if interval <= 0 {
		return false, fmt.Errorf("claim job run %s: interval %v is not positive", name, interval)
	}
	micros := interval.Microseconds()
	var upd, ins string
	var updArgs, insArgs []any
	if db.dialect == DialectSQLite {
		t := now()
		upd = `UPDATE {prefix}mailsvc_jobs SET owner = ?, last_run_at = ?, finished_at = NULL, last_error = NULL
			WHERE name = ? AND last_run_at <= ?`
		updArgs = []any{owner, t, name, t.Add(-time.Duration(micros) * time.Microsecond)}
		ins = `INSERT OR IGNORE INTO {prefix}mailsvc_jobs (name, owner, last_run_at) VALUES (?, ?, ?)`
		insArgs = []any{name, owner, t}
	} else {
		upd = `UPDATE {prefix}mailsvc_jobs SET owner = ?, last_run_at = UTC_TIMESTAMP(6), finished_at = NULL, last_error = NULL
			WHERE name = ? AND last_run_at <= UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND`
		updArgs = []any{owner, name, micros}
		ins = `INSERT IGNORE INTO {prefix}mailsvc_jobs (name, owner, last_run_at) VALUES (?, ?, UTC_TIMESTAMP(6))`
		insArgs = []any{name, owner}
	}
	won := false
	err := retryDeadlock(func() error {
		res, err := db.sqlDB.ExecContext(ctx, db.expand(upd), updArgs...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			won = true
			return nil
		}
		res, err = db.sqlDB.ExecContext(ctx, db.expand(ins), insArgs...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		won = n == 1
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("claim job run %s: %w", name, err)
	}
	return won, nil
}

// FinishJobRun implements core.JobStore. It changes nothing when another
// owner has claimed the job since (its run is the one on record).
func (db *JobService) FinishJobRun(ctx context.Context, name, owner, errMsg string) error {
	stmt := `UPDATE {prefix}mailsvc_jobs SET finished_at = UTC_TIMESTAMP(6), last_error = ? WHERE name = ? AND owner = ?`
	args := []any{errMsg, name, owner}
	if db.dialect == DialectSQLite {
		stmt = `UPDATE {prefix}mailsvc_jobs SET finished_at = ?, last_error = ? WHERE name = ? AND owner = ?`
		args = append([]any{now()}, args...)
	}
	if _, err := db.sqlDB.ExecContext(ctx, db.expand(stmt), args...); err != nil {
		return fmt.Errorf("finish job run %s: %w", name, err)
	}
	return nil
}

// FindJobRuns implements core.JobStore.
func (db *JobService) FindJobRuns(ctx context.Context) ([]core.JobRun, error) {
	var out []core.JobRun
	err := EachRow(ctx, db.sqlDB, "find job runs", db.expand(`SELECT name, owner, last_run_at, finished_at, last_error
		FROM {prefix}mailsvc_jobs ORDER BY name`), nil, func(row RowScanner) error {
		var r core.JobRun
		var finished sql.NullTime
		var lastErr sql.NullString
		if err := row.Scan(&r.Name, &r.Owner, &r.LastRunAt, &finished, &lastErr); err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		r.LastRunAt = r.LastRunAt.UTC()
		if finished.Valid {
			t := finished.Time.UTC()
			r.FinishedAt = &t
		}
		r.LastError = lastErr.String
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PruneJobRuns deletes the records whose name starts with prefix (taken
// literally, not as a pattern) and whose last run started before before,
// as a job that records one row per period (the summary report's) keeps
// its table small. It returns how many were deleted.
func (db *JobService) PruneJobRuns(ctx context.Context, prefix string, before time.Time) (int, error) {
	if prefix == "" {
		return 0, errors.New("prune job runs: a name prefix is required")
	}
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_jobs WHERE SUBSTR(name, 1, ?) = ? AND last_run_at < ?`),
		utf8.RuneCountInString(prefix), prefix, before.UTC())
	if err != nil {
		return 0, fmt.Errorf("prune job runs %s*: %w", prefix, err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
