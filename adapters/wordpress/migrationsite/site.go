// Package migrationsite is the WordPress site as the migration sources
// read it (app/migration.Site): options unserialized, log tables read in
// keyset order, wp-config constants, the site's time zone, and the
// decryption of the secrets other SMTP plugins stored.
package migrationsite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/app/migration"
)

// ExactCountBelow is the table size (by the statistics estimate) under
// which EstimateRows counts exactly.
const ExactCountBelow = migration.ExactCountBelow

// Site implements migration.Site over the WordPress database.
type Site struct {
	db        *gorm.DB
	prefix    string
	options   *wordpress.GormSource
	constants map[string]string
}

// New returns the Site of the WordPress tables with prefix in db;
// constants are wp-config.php's (wpconfig.File.ConstantStrings).
func New(db *gorm.DB, prefix string, constants map[string]string) (*Site, error) {
	src, err := wordpress.NewGormSource(db, prefix)
	if err != nil {
		return nil, err
	}
	if constants == nil {
		constants = map[string]string{}
	}
	return &Site{db: db, prefix: prefix, options: src, constants: constants}, nil
}

var _ migration.Site = (*Site)(nil)

// Option implements migration.Site.
func (s *Site) Option(ctx context.Context, name string) (any, bool, error) {
	raw, found, err := s.options.Option(ctx, name)
	if err != nil || !found {
		return nil, found, err
	}
	if !wordpress.IsSerialized(raw) {
		return raw, true, nil
	}
	v, err := s.Unserialize(raw)
	if err != nil {
		return nil, true, fmt.Errorf("option %s: %w", name, migration.ErrUnreadable)
	}
	return v, true, nil
}

// Unserialize implements migration.Site.
func (s *Site) Unserialize(value string) (any, error) {
	v, err := wordpress.Unserialize(value)
	if err != nil {
		return nil, fmt.Errorf("unserialize: %w", err)
	}
	return plain(v), nil
}

// plain converts wordpress.Array values into []any / map[string]any.
func plain(v any) any {
	a, ok := v.(*wordpress.Array)
	if !ok {
		return v
	}
	list := make([]any, 0, a.Len())
	isList := true
	m := make(map[string]any, a.Len())
	for i := 0; i < a.Len(); i++ {
		k, val := a.At(i)
		pv := plain(val)
		if n, ok := k.(int64); !ok || n != int64(i) {
			isList = false
		}
		list = append(list, pv)
		m[fmt.Sprint(k)] = pv
	}
	if isList {
		return list
	}
	return m
}

// ActivePlugins implements migration.Site: active_plugins, plus the
// network's active_sitewide_plugins when the sitemeta table exists.
func (s *Site) ActivePlugins(ctx context.Context) ([]string, error) {
	var out []string
	v, found, err := s.Option(ctx, "active_plugins")
	if err != nil && !errors.Is(err, migration.ErrUnreadable) {
		return nil, err
	}
	if found {
		d := migration.AsDict(v)
		for _, k := range d.Keys() {
			out = append(out, d.Str(k))
		}
	}
	if ok, err := s.HasTable(ctx, "sitemeta"); err == nil && ok {
		var raw sql.NullString
		err := s.db.WithContext(ctx).Raw("SELECT meta_value FROM " + s.prefix + "sitemeta WHERE meta_key = 'active_sitewide_plugins' LIMIT 1").Row().Scan(&raw)
		if err == nil {
			if v, err := s.Unserialize(raw.String); err == nil {
				d := migration.AsDict(v)
				out = append(out, d.Keys()...) // plugin file → activation time
			}
		}
	}
	return out, nil
}

// Constant implements migration.Site.
func (s *Site) Constant(name string) (string, bool) {
	v, ok := s.constants[name]
	return v, ok
}

func (s *Site) table(name string) (string, error) {
	if err := wordpress.ValidatePrefix(name); err != nil {
		return "", fmt.Errorf("table name %q: only letters, digits and underscores are allowed", name)
	}
	return s.prefix + name, nil
}

// HasTable implements migration.Site.
func (s *Site) HasTable(ctx context.Context, name string) (bool, error) {
	t, err := s.table(name)
	if err != nil {
		return false, err
	}
	return s.db.WithContext(ctx).Migrator().HasTable(t), nil
}

// EstimateRows implements migration.Site: information_schema's TABLE_ROWS
// (InnoDB's statistics, no scan); when that says the table is small
// (under ExactCountBelow), an exact COUNT(*).
func (s *Site) EstimateRows(ctx context.Context, name string) (int64, error) {
	t, err := s.table(name)
	if err != nil {
		return 0, err
	}
	if s.db.Dialector.Name() == "mysql" {
		var est sql.NullInt64
		err := s.db.WithContext(ctx).Raw(
			"SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", t,
		).Row().Scan(&est)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("estimate rows of %s: %w", t, err)
		}
		if est.Valid && est.Int64 >= ExactCountBelow {
			return est.Int64, nil
		}
	}
	return s.CountRows(ctx, name, "")
}

// CountRows implements migration.Site.
func (s *Site) CountRows(ctx context.Context, name, where string, args ...any) (int64, error) {
	t, err := s.table(name)
	if err != nil {
		return 0, err
	}
	q := "SELECT COUNT(*) FROM " + quote(t)
	if where != "" {
		q += " WHERE " + where
	}
	var n int64
	if err := s.db.WithContext(ctx).Raw(q, args...).Row().Scan(&n); err != nil {
		return 0, fmt.Errorf("count rows of %s: %w", t, err)
	}
	return n, nil
}

func quote(ident string) string { return "`" + strings.ReplaceAll(ident, "`", "") + "`" }

// Rows implements migration.Site.
func (s *Site) Rows(ctx context.Context, q migration.RowQuery) ([]migration.Row, error) {
	t, err := s.table(q.Table)
	if err != nil {
		return nil, err
	}
	if q.Key == "" || q.Limit <= 0 {
		return nil, fmt.Errorf("read rows of %s: a key column and a limit are required", t)
	}
	names := make([]string, 0, len(q.Columns)+len(q.UnixColumns))
	cols := make([]string, 0, cap(names))
	for _, c := range q.Columns {
		names = append(names, c)
		cols = append(cols, "CAST("+quote(c)+" AS CHAR)")
	}
	for _, c := range q.UnixColumns {
		names = append(names, c)
		cols = append(cols, "CAST(UNIX_TIMESTAMP("+quote(c)+") AS SIGNED)")
	}
	query := "SELECT " + strings.Join(cols, ", ") + " FROM " + quote(t) + " WHERE " + quote(q.Key) + " > ?"
	args := []any{q.After}
	if q.Where != "" {
		query += " AND (" + q.Where + ")"
		args = append(args, q.Args...)
	}
	query += " ORDER BY " + quote(q.Key) + " LIMIT " + strconv.Itoa(q.Limit)
	rows, err := s.db.WithContext(ctx).Raw(query, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("read rows of %s: %w", t, err)
	}
	defer rows.Close()
	var out []migration.Row
	for rows.Next() {
		vals := make([]sql.NullString, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("read rows of %s: %w", t, err)
		}
		r := migration.Row{}
		for i, n := range names {
			if vals[i].Valid {
				r[n] = vals[i].String
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read rows of %s: %w", t, err)
	}
	return out, nil
}

// Location implements migration.Site with the site's timezone_string,
// else gmt_offset (hours, possibly fractional), else UTC.
func (s *Site) Location(ctx context.Context) (*time.Location, error) {
	return wordpress.SiteLocation(ctx, s.options)
}
