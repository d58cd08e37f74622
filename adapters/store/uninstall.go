package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	mysqldriver "github.com/go-sql-driver/mysql"
)

// likePrefix returns a LIKE pattern (escape character \) matching every
// name that starts with s literally.
func likePrefix(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s) + "%"
}

// ServiceTables returns the names of the service's tables in this
// database: every table named {prefix}mailsvc_*, sorted.
func (db *InstallationService) ServiceTables(ctx context.Context) ([]string, error) {
	found, err := db.tablesLike(ctx, likePrefix(db.prefix+"mailsvc_"))
	if err != nil {
		return nil, err
	}
	// SQLite's LIKE ignores ASCII case: keep exact-case matches only.
	var out []string
	for _, name := range found {
		if strings.HasPrefix(name, db.prefix+"mailsvc_") {
			out = append(out, name)
		}
	}
	return out, nil
}

func (db *handle) tablesLike(ctx context.Context, pattern string) ([]string, error) {
	var q string
	switch db.dialect {
	case DialectMySQL:
		q = `SELECT table_name FROM information_schema.tables
			WHERE table_schema = DATABASE() AND table_name LIKE ? ORDER BY table_name`
	default:
		q = `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ? ESCAPE '\' ORDER BY name`
	}
	out, err := column[string](ctx, db.sqlDB, "list tables", q, []any{pattern})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// DropServiceTables drops every {prefix}mailsvc_* table (connections,
// settings, logs and their attempts, leases, migrations) and returns the
// names it dropped, sorted. It is meant for uninstalling: afterwards the other
// methods of db fail until the schema is migrated again. Idempotent: a
// second call drops nothing. Other tables, including other prefixes'
// mailsvc tables, are never touched.
func (db *InstallationService) DropServiceTables(ctx context.Context) ([]string, error) {
	tables, err := db.ServiceTables(ctx)
	if err != nil {
		return nil, fmt.Errorf("drop service tables: %w", err)
	}
	if len(tables) == 0 {
		return nil, nil
	}
	conn, err := db.sqlDB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("drop service tables: get connection: %w", err)
	}
	defer conn.Close()
	if db.dialect == DialectMySQL {
		// The attempts table references the logs table; drop regardless of
		// order on this one connection.
		if _, err := conn.ExecContext(ctx, "SET SESSION foreign_key_checks = 0"); err != nil {
			return nil, fmt.Errorf("drop service tables: %w", err)
		}
		defer func() { _, _ = conn.ExecContext(context.Background(), "SET SESSION foreign_key_checks = 1") }()
	}
	dropped, err := dropInAnyOrder(ctx, conn, tables)
	slices.Sort(dropped)
	return dropped, err
}

// dropInAnyOrder drops tables, retrying the ones a foreign key still
// protects after the others are gone (SQLite checks references on DROP).
func dropInAnyOrder(ctx context.Context, conn *sql.Conn, tables []string) ([]string, error) {
	var dropped []string
	pending := tables
	for len(pending) > 0 {
		var failed []string
		var lastErr error
		for _, name := range pending {
			if _, err := conn.ExecContext(ctx, "DROP TABLE IF EXISTS `"+name+"`"); err != nil {
				failed, lastErr = append(failed, name), err
				continue
			}
			dropped = append(dropped, name)
		}
		if len(failed) == len(pending) {
			return dropped, fmt.Errorf("drop table %s: %w", failed[0], lastErr)
		}
		pending = failed
	}
	return dropped, nil
}

// DeleteServiceOptions deletes the service's rows from the WordPress
// options table {prefix}options (option names starting with "mailsvc_"
// or "mail_svc_", and their transients) and returns how many it deleted.
// When the database has no options table it deletes nothing.
func (db *InstallationService) DeleteServiceOptions(ctx context.Context) (int64, error) {
	options := db.prefix + "options"
	found, err := db.tablesLike(ctx, likePrefix(options))
	if err != nil {
		return 0, fmt.Errorf("delete service options: %w", err)
	}
	exists := false
	for _, name := range found {
		exists = exists || name == options
	}
	if !exists {
		return 0, nil
	}
	var clauses []string
	var args []any
	for _, p := range []string{"mailsvc_", "mail_svc_", "_transient_mailsvc_", "_transient_timeout_mailsvc_", "_transient_mail_svc_", "_transient_timeout_mail_svc_"} {
		clauses = append(clauses, `option_name LIKE ? ESCAPE '\\'`)
		args = append(args, likePrefix(p))
	}
	q := "DELETE FROM `" + options + "` WHERE " + strings.Join(clauses, " OR ")
	if db.dialect != DialectMySQL {
		q = strings.ReplaceAll(q, `'\\'`, `'\'`)
	}
	res, err := db.sqlDB.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("delete service options: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete service options: %w", err)
	}
	return n, nil
}

// IsMissingTable reports whether err says that one of the service's
// tables ({prefix}mailsvc_*) does not exist: MySQL/MariaDB error 1146,
// SQLite's "no such table". A running service sees it once the tables
// were dropped (mailsvc uninstall).
func IsMissingTable(err error) bool {
	if err == nil {
		return false
	}
	var my *mysqldriver.MySQLError
	text := err.Error()
	if errors.As(err, &my) && my.Number == 1146 || strings.Contains(text, "Error 1146") || strings.Contains(text, "no such table") {
		return strings.Contains(text, "mailsvc_")
	}
	return false
}

// DatabaseExists reports whether the database the store is connected to
// still exists: false once it was dropped whole (an outage to wait out,
// not an uninstall, which drops the service's tables only). SQLite's file
// is always there.
func (db *InstallationService) DatabaseExists(ctx context.Context) (bool, error) {
	if db.dialect != DialectMySQL {
		return true, nil
	}
	var n int
	if err := db.sqlDB.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = DATABASE()").Scan(&n); err != nil {
		return false, fmt.Errorf("look for the database: %w", err)
	}
	return n > 0, nil
}
