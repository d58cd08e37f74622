package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// runCommand runs the command line in this process with stdin and the
// given arguments, and returns what it printed and its error.
func runCommand(t *testing.T, stdin io.Reader, args ...string) (string, error) {
	t.Helper()
	cmd := Command()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// standaloneEnv points the configuration at an SQLite database in a fresh
// data directory and returns that directory.
func standaloneEnv(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, k := range []string{"MAILSVC_WP_CONFIG", "MAILSVC_DB", "MAILSVC_TABLE_PREFIX", "MAIL_SVC_PRESERVE_DATA", "MAILSVC_PUBLIC_URL"} {
		t.Setenv(k, "")
	}
	t.Setenv("MAILSVC_DATA_DIR", dir)
	return dir
}

// sqliteTables lists the tables of an SQLite file.
func sqliteTables(t *testing.T, path string) []string {
	t.Helper()
	db, err := store.OpenExisting(context.Background(), "sqlite:"+path, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var names []string
	if err := db.Gorm().Raw("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").Scan(&names).Error; err != nil {
		t.Fatal(err)
	}
	return names
}

func TestConfigOnSQLiteWritesNothing(t *testing.T) {
	dir := standaloneEnv(t)
	// No database file at all: not installed, and none created.
	out, err := runCommand(t, strings.NewReader(""), "config")
	if err != nil || !strings.Contains(out, "Settings: not installed") {
		t.Fatalf("config: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("config created %v in the data directory", entries)
	}
	// A database file without the service's tables: still none.
	path := filepath.Join(dir, "mailsvc.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("CREATE TABLE other (id INTEGER)"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	out, err = runCommand(t, strings.NewReader(""), "config")
	if err != nil || !strings.Contains(out, "Settings: not installed") {
		t.Fatalf("config: %v\n%s", err, out)
	}
	if got := sqliteTables(t, path); len(got) != 1 || got[0] != "other" {
		t.Errorf("tables after config: %v, want [other]", got)
	}
	// Installed: the settings are printed.
	db, err := store.Open(context.Background(), "sqlite:"+path, "wp_", nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, err = runCommand(t, strings.NewReader(""), "config")
	if err != nil || !strings.Contains(out, "SETTING") || !strings.Contains(out, "from_email") {
		t.Fatalf("config on an installed database: %v\n%s", err, out)
	}
}

func TestConfigOnMariaDBWritesNothingAndShowsTheSitePrefix(t *testing.T) {
	root, err := sql.Open("mysql", "root@tcp(127.0.0.1:3306)/")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "mailsvc_config_" + hex.EncodeToString(b)
	if _, err := root.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("MariaDB at 127.0.0.1:3306: %v", err)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE " + name) })
	count := func() int {
		var n int
		if err := root.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ?", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	standaloneEnv(t)
	wpConfig := filepath.Join(t.TempDir(), "wp-config.php")
	php := fmt.Sprintf("<?php\ndefine('DB_NAME', '%s');\ndefine('DB_USER', 'root');\ndefine('DB_PASSWORD', '');\ndefine('DB_HOST', '127.0.0.1:3306');\n$table_prefix = 'wpd_';\n", name)
	if err := os.WriteFile(wpConfig, []byte(php), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MAILSVC_WP_CONFIG", wpConfig)
	before := count()
	out, err := runCommand(t, strings.NewReader(""), "config")
	if err != nil {
		t.Fatalf("config: %v\n%s", err, out)
	}
	if after := count(); after != before {
		t.Errorf("config made %d tables", after-before)
	}
	if !strings.Contains(out, "Settings: not installed") || !strings.Contains(out, "wpd_mailsvc_*") {
		t.Errorf("config did not say not installed:\n%s", out)
	}
	if !regexp.MustCompile(`MAILSVC_TABLE_PREFIX\s+wpd_\s+wp-config\.php`).MatchString(out) {
		t.Errorf("config does not show the prefix from wp-config.php:\n%s", out)
	}
}

// installed migrates the standalone SQLite database and returns it.
func installed(t *testing.T, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "mailsvc.db"), "wp_", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestUninstallRefusals(t *testing.T) {
	ctx := context.Background()
	dir := standaloneEnv(t)
	db := installed(t, dir)
	tables := func() int {
		got, err := db.Installation().ServiceTables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	n := tables()

	// Off a terminal without --yes: refused, nothing dropped.
	out, err := runCommand(t, strings.NewReader("y\n"), "uninstall")
	if err == nil || !strings.Contains(err.Error(), "--yes") || tables() != n {
		t.Fatalf("uninstall off a terminal: %v (%d of %d tables left)\n%s", err, tables(), n, out)
	}

	// A message still queued: refused without --force, even with --yes.
	msg := core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "b@example.com"}}, Subject: "s", Text: "t"}
	if err := db.Logs().EnqueueLog(ctx, &core.Log{Message: msg, Status: core.StatusQueued, Source: "test"}); err != nil {
		t.Fatal(err)
	}
	out, err = runCommand(t, strings.NewReader(""), "uninstall", "--yes")
	if err == nil || !strings.Contains(err.Error(), "messages still queued: 1") || !strings.Contains(out, "Messages still queued: 1.") || tables() != n {
		t.Fatalf("uninstall with a queued message: %v (%d of %d tables left)\n%s", err, tables(), n, out)
	}

	out, err = runCommand(t, strings.NewReader(""), "uninstall", "--yes", "--force")
	if err != nil || tables() != 0 || !strings.Contains(out, fmt.Sprintf("Dropped %d tables", n)) {
		t.Fatalf("uninstall --yes --force: %v (%d tables left)\n%s", err, tables(), out)
	}
}
