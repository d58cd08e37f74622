package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/pro/suppression"
	"github.com/mailsvc/mailsvc/core"
)

// AddSuppressions adds each address (lower-cased) to the suppression
// list, keeping the entry already there for an address listed before,
// and returns how many it added. One statement per address, so a large
// batch never holds a long lock.
func (svc *SuppressionService) AddSuppressions(ctx context.Context, ss []suppression.Suppression) (int, error) {
	db := svc.db
	ins := `INSERT IGNORE INTO {prefix}mailsvc_suppressions (email, reason, source_event, created_at) VALUES (?, ?, ?, ?)`
	if db.base.Dialect() == store.DialectSQLite {
		ins = `INSERT OR IGNORE INTO {prefix}mailsvc_suppressions (email, reason, source_event, created_at) VALUES (?, ?, ?, ?)`
	}
	added := 0
	for _, s := range ss {
		email := strings.ToLower(strings.TrimSpace(s.Email))
		if email == "" {
			continue
		}
		src := s.SourceEvent
		if len(src) > 255 {
			src = src[:255]
		}
		res, err := db.base.SQL().ExecContext(ctx, db.base.Expand(ins), email, s.Reason, src, now())
		if err != nil {
			return added, fmt.Errorf("add suppression: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			added++
		}
	}
	return added, nil
}

const suppressionColumns = `id, email, reason, source_event, created_at`

func scanSuppression(r interface{ Scan(dest ...any) error }) (*suppression.Suppression, error) {
	var s suppression.Suppression
	var created time.Time
	if err := r.Scan(&s.ID, &s.Email, &s.Reason, &s.SourceEvent, &created); err != nil {
		return nil, fmt.Errorf("scan suppression: %w", err)
	}
	s.CreatedAt = created.UTC()
	return &s, nil
}

// FindSuppressions returns the suppressions matching f, newest first,
// and the total count matching f before Offset and Limit.
func (svc *SuppressionService) FindSuppressions(ctx context.Context, f suppression.SuppressionFilter) ([]*suppression.Suppression, int, error) {
	db := svc.db
	where, args := "", []any{}
	if term := strings.ToLower(strings.TrimSpace(f.Search)); term != "" {
		where = ` WHERE email LIKE ? ESCAPE '!'`
		r := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")
		args = append(args, "%"+r.Replace(term)+"%")
	}
	var total int
	if err := db.base.SQL().QueryRowContext(ctx, db.base.Expand(`SELECT COUNT(*) FROM {prefix}mailsvc_suppressions`+where), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count suppressions: %w", err)
	}
	q := `SELECT ` + suppressionColumns + ` FROM {prefix}mailsvc_suppressions` + where + ` ORDER BY id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d OFFSET %d", f.Limit, max(f.Offset, 0))
	}
	rows, err := db.base.SQL().QueryContext(ctx, db.base.Expand(q), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("find suppressions: %w", err)
	}
	defer rows.Close()
	out := []*suppression.Suppression{}
	for rows.Next() {
		s, err := scanSuppression(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("find suppressions: %w", err)
	}
	return out, total, nil
}

// FindSuppression returns the suppression with the given id, or, when
// id is 0, the one of email (ignoring case); ENOTFOUND when there is none.
func (svc *SuppressionService) FindSuppression(ctx context.Context, id int64, email string) (*suppression.Suppression, error) {
	db := svc.db
	q, arg := `SELECT `+suppressionColumns+` FROM {prefix}mailsvc_suppressions WHERE id = ?`, any(id)
	if id == 0 {
		q, arg = `SELECT `+suppressionColumns+` FROM {prefix}mailsvc_suppressions WHERE email = ?`, strings.ToLower(strings.TrimSpace(email))
	}
	s, err := scanSuppression(db.base.SQL().QueryRowContext(ctx, db.base.Expand(q), arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "No such address on the suppression list.")
	} else if err != nil {
		return nil, fmt.Errorf("find suppression: %w", err)
	}
	return s, nil
}

// DeleteSuppression removes the suppression with the given id and
// reports whether it existed.
func (svc *SuppressionService) DeleteSuppression(ctx context.Context, id int64) (bool, error) {
	db := svc.db
	res, err := db.base.SQL().ExecContext(ctx, db.base.Expand(`DELETE FROM {prefix}mailsvc_suppressions WHERE id = ?`), id)
	if err != nil {
		return false, fmt.Errorf("delete suppression: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// DeleteSuppressionOf implements suppression.PersonalStore.
func (svc *SuppressionService) DeleteSuppressionOf(ctx context.Context, email string) (bool, error) {
	db := svc.db
	res, err := db.base.SQL().ExecContext(ctx, db.base.Expand(`DELETE FROM {prefix}mailsvc_suppressions WHERE email = ?`), strings.ToLower(strings.TrimSpace(email)))
	if err != nil {
		return false, fmt.Errorf("delete suppression of an address: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// SuppressedAmong returns those of emails (compared lower-cased) that
// are on the suppression list, lower-cased, in the order given.
func (svc *SuppressionService) SuppressedAmong(ctx context.Context, emails []string) ([]string, error) {
	db := svc.db
	var args []any
	seen := map[string]bool{}
	for _, e := range emails {
		e = strings.ToLower(strings.TrimSpace(e))
		if e != "" && !seen[e] {
			seen[e] = true
			args = append(args, e)
		}
	}
	if len(args) == 0 {
		return nil, nil
	}
	in := strings.TrimSuffix(strings.Repeat("?,", len(args)), ",")
	rows, err := db.base.SQL().QueryContext(ctx, db.base.Expand(`SELECT email FROM {prefix}mailsvc_suppressions WHERE email IN (`+in+`)`), args...)
	if err != nil {
		return nil, fmt.Errorf("check suppressions: %w", err)
	}
	defer rows.Close()
	found := map[string]bool{}
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			return nil, fmt.Errorf("check suppressions: %w", err)
		}
		found[strings.ToLower(e)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("check suppressions: %w", err)
	}
	var out []string
	for _, a := range args {
		if e := a.(string); found[e] {
			out = append(out, e)
		}
	}
	return out, nil
}
