package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// TestSiteMigrationKeepsLogs upgrades a single-site database with logs to
// the multisite schema: every log is the main site's and reads as before,
// and on MariaDB the column is added instantly (the statement asks for
// ALGORITHM=INSTANT and would fail if the table had to be copied).
func TestSiteMigrationKeepsLogs(t *testing.T) {
	for dialect, mk := range dsns(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			dsn := mk(t)
			i := slices.IndexFunc(migrations, func(m migration) bool { return m.Name == "the site of a log and per-site quota usage (multisite)" })
			if i < 0 {
				t.Fatal("no multisite migration")
			}
			all := slices.Clone(migrations)
			withMigrations(t, slices.Clone(migrations[:i]))
			db, err := Open(ctx, dsn, "wp_", quietLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			at := time.Now().UTC().Truncate(time.Second)
			for _, subject := range []string{"before one", "before two"} {
				if _, err := db.sqlDB.ExecContext(ctx, db.expand(`INSERT INTO {prefix}mailsvc_logs
					(status, source, recipients, subject, text_body, html_body, message, last_error, next_attempt_at, created_at, updated_at)
					VALUES ('failed', 'old', 'x@example.com', ?, 't', '', '{"from":{"email":"a@example.com"},"to":[{"email":"x@example.com"}]}', 'e', ?, ?, ?)`),
					subject, at, at, at); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			migrations = all

			db, err = Open(ctx, dsn, "wp_", quietLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			logs, total, err := db.Logs().FindLogs(ctx, core.LogFilter{})
			if err != nil || total != 2 {
				t.Fatalf("after upgrade: %d logs, %v", total, err)
			}
			for _, l := range logs {
				if l.SiteID != core.MainSiteID || l.Status != core.StatusFailed || l.Source != "old" {
					t.Fatalf("upgraded log %+v", l)
				}
			}
			if logs, _, _ := db.Logs().FindLogs(core.WithSiteScope(ctx, 1), core.LogFilter{}); len(logs) != 2 {
				t.Fatalf("main site scope: %d logs", len(logs))
			}
			if !slices.Contains(columnNames(t, db, "wp_mailsvc_logs"), "site_id") {
				t.Fatal("no site_id column")
			}
		})
	}
}
