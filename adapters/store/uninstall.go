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

// serviceOptionPrefixes name the service's and its bridge's rows among
// WordPress's options and network options: the options themselves
// (mailsvc_*, mail_svc_*), their transients and the timeouts of those,
// and their site transients, which a single site keeps in its options
// table and a network in {prefix}sitemeta.
var serviceOptionPrefixes = []string{
	"mailsvc_", "mail_svc_",
	"_transient_mailsvc_", "_transient_timeout_mailsvc_",
	"_transient_mail_svc_", "_transient_timeout_mail_svc_",
	"_site_transient_mailsvc_", "_site_transient_timeout_mailsvc_",
	"_site_transient_mail_svc_", "_site_transient_timeout_mail_svc_",
}

// serviceUserMetaPrefixes name the bridge's user meta (the notices a user
// dismissed, mailsvc_attention_dismissed).
var serviceUserMetaPrefixes = []string{"mailsvc_", "mail_svc_"}

// wordPressTables returns the set of this prefix's tables in the
// database, by exact name.
func (db *InstallationService) wordPressTables(ctx context.Context) (map[string]bool, error) {
	found, err := db.tablesLike(ctx, likePrefix(db.prefix))
	if err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(found))
	for _, name := range found {
		set[name] = true
	}
	return set, nil
}

// OptionsTables returns WordPress's options tables of the site, or of
// every site of a multisite network, sorted: {prefix}options (a single
// site's, or the main site's) and {prefix}{id}_options of each other site
// {prefix}blogs lists. Tables that do not exist are left out. Another
// installation in the same database stays out even when its prefix looks
// like a site's: {prefix}2_options is site 2's only when {prefix}blogs
// lists blog 2.
func (db *InstallationService) OptionsTables(ctx context.Context) ([]string, error) {
	tables, err := db.wordPressTables(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the options tables: %w", err)
	}
	var out []string
	if tables[db.prefix+"options"] {
		out = append(out, db.prefix+"options")
	}
	if !tables[db.prefix+"blogs"] {
		return out, nil
	}
	ids, err := column[int64](ctx, db.sqlDB, "list the network's sites", "SELECT blog_id FROM `"+db.prefix+"blogs` ORDER BY blog_id", nil)
	if err != nil {
		return nil, fmt.Errorf("list the options tables: %w", err)
	}
	for _, id := range ids {
		// Blog 1's tables carry the base prefix, as wpdb::get_blog_prefix() says.
		name := fmt.Sprintf("%s%d_options", db.prefix, id)
		if id != 1 && tables[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// deleteNamed deletes the rows of table whose column starts with one of
// prefixes and returns how many it deleted.
func (db *InstallationService) deleteNamed(ctx context.Context, table, column string, prefixes []string) (int64, error) {
	var clauses []string
	var args []any
	for _, p := range prefixes {
		clauses = append(clauses, column+` LIKE ? ESCAPE '\\'`)
		args = append(args, likePrefix(p))
	}
	q := "DELETE FROM `" + table + "` WHERE " + strings.Join(clauses, " OR ")
	if db.dialect != DialectMySQL {
		q = strings.ReplaceAll(q, `'\\'`, `'\'`)
	}
	res, err := db.sqlDB.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("delete from %s: %w", table, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete from %s: %w", table, err)
	}
	return n, nil
}

// DeleteServiceOptions deletes the service's and its bridge's rows from
// every options table of the site or network (OptionsTables): option
// names starting with "mailsvc_" or "mail_svc_", their transients and
// site transients, and returns how many it deleted. Without an options
// table it deletes nothing.
func (db *InstallationService) DeleteServiceOptions(ctx context.Context) (int64, error) {
	tables, err := db.OptionsTables(ctx)
	if err != nil {
		return 0, fmt.Errorf("delete service options: %w", err)
	}
	var deleted int64
	for _, table := range tables {
		n, err := db.deleteNamed(ctx, table, "option_name", serviceOptionPrefixes)
		if err != nil {
			return deleted, fmt.Errorf("delete service options: %w", err)
		}
		deleted += n
	}
	return deleted, nil
}

// DeleteServiceNetworkOptions deletes the service's and its bridge's rows
// from a multisite network's options, {prefix}sitemeta: network options
// starting with "mailsvc_" or "mail_svc_" and their site transients (the
// network's figures Network Admin shows, mailsvc_attention_network). It
// returns how many it deleted; without the table (a single site) none.
func (db *InstallationService) DeleteServiceNetworkOptions(ctx context.Context) (int64, error) {
	return db.deleteFromWordPressTable(ctx, "sitemeta", "meta_key", serviceOptionPrefixes)
}

// DeleteServiceUserMeta deletes the bridge's user meta of every user,
// {prefix}usermeta keys starting with "mailsvc_" or "mail_svc_" (the
// notices each user dismissed), and returns how many rows it deleted;
// without the table none.
func (db *InstallationService) DeleteServiceUserMeta(ctx context.Context) (int64, error) {
	return db.deleteFromWordPressTable(ctx, "usermeta", "meta_key", serviceUserMetaPrefixes)
}

// deleteFromWordPressTable deletes the rows of {prefix}{name} whose column
// starts with one of prefixes, when that table exists.
func (db *InstallationService) deleteFromWordPressTable(ctx context.Context, name, column string, prefixes []string) (int64, error) {
	tables, err := db.wordPressTables(ctx)
	if err != nil {
		return 0, fmt.Errorf("delete the service's rows of %s%s: %w", db.prefix, name, err)
	}
	if !tables[db.prefix+name] {
		return 0, nil
	}
	n, err := db.deleteNamed(ctx, db.prefix+name, column, prefixes)
	if err != nil {
		return 0, fmt.Errorf("delete the service's rows: %w", err)
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
