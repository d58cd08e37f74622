package store

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/internal/testdb"
)

// withMigrations replaces the schema history for one test.
func withMigrations(t *testing.T, ms []migration) {
	saved := migrations
	migrations = ms
	t.Cleanup(func() { migrations = saved })
}

func dsns(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		DialectSQLite: func(t *testing.T) string { return testdb.SQLite(t) },
		DialectMySQL:  func(t *testing.T) string { return testdb.MySQL(t) },
	}
}

func quietLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

func columnNames(t *testing.T, db *DB, table string) []string {
	t.Helper()
	cols, err := db.Gorm().Migrator().ColumnTypes(table)
	if err != nil {
		t.Fatalf("column types of %s: %v", table, err)
	}
	var out []string
	for _, c := range cols {
		out = append(out, c.Name())
	}
	return out
}

// An upgrade appends a migration: an existing database at version 1 gets
// exactly the new step, once.
func TestAppendedMigrationApplies(t *testing.T) {
	for dialect, mk := range dsns(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			dsn := mk(t)
			v1 := migrations[:1]
			withMigrations(t, slices.Clone(v1))
			withModules(t, nil) // the service's own history alone
			db, err := Open(ctx, dsn, "wp_", quietLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if slices.Contains(columnNames(t, db, "wp_mailsvc_connections"), "note") {
				t.Fatal("column note exists before its migration")
			}

			v2 := migration{
				Version: 2,
				Name:    "test: add note",
				MySQL:   []string{"ALTER TABLE {prefix}mailsvc_connections ADD COLUMN note VARCHAR(64) NULL"},
				SQLite:  []string{"ALTER TABLE {prefix}mailsvc_connections ADD COLUMN note TEXT NULL"},
			}
			migrations = append(slices.Clone(v1), v2)
			for i := range 2 {
				if err := db.Migrate(ctx); err != nil {
					t.Fatalf("Migrate #%d: %v", i+1, err)
				}
			}
			got, err := db.Schema().AppliedVersions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, []int{1, 2}) {
				t.Fatalf("applied %v, want [1 2]", got)
			}
			if !slices.Contains(columnNames(t, db, "wp_mailsvc_connections"), "note") {
				t.Fatal("column note missing after its migration")
			}
		})
	}
}

// A failing migration is not recorded, so it runs again next time; on
// SQLite its earlier statements are rolled back too.
func TestFailedMigrationIsNotRecorded(t *testing.T) {
	for dialect, mk := range dsns(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			dsn := mk(t)
			bad := migration{
				Version: 2,
				Name:    "test: broken",
				MySQL:   []string{"CREATE TABLE {prefix}mailsvc_partial (id INT)", "THIS IS NOT SQL"},
				SQLite:  []string{"CREATE TABLE {prefix}mailsvc_partial (id INT)", "THIS IS NOT SQL"},
			}
			withMigrations(t, append(slices.Clone(migrations[:1]), bad))
			withModules(t, nil) // the service's own history alone
			db, err := Open(ctx, dsn, "wp_", quietLogger(t))
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded with a broken migration")
			}
			if !strings.Contains(err.Error(), "migration 2 (test: broken), statement 2") {
				t.Fatalf("error %q does not name the failing migration and statement", err)
			}

			migrations = migrations[:1]
			db, err = Open(ctx, dsn, "wp_", quietLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			got, err := db.Schema().AppliedVersions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wantVersions := []int{1}
			if dialect == DialectSQLite {
				// The whole first run was one transaction: v1 was rolled
				// back with v2 and re-applied by the second Open.
				if db.Gorm().Migrator().HasTable("wp_mailsvc_partial") {
					t.Error("SQLite kept a table from the failed migration")
				}
			}
			if !slices.Equal(got, wantVersions) {
				t.Fatalf("applied %v, want %v", got, wantVersions)
			}
		})
	}
}

func TestExpandQuotesPrefixedNames(t *testing.T) {
	tests := []struct {
		prefix, in, want string
	}{
		{"wp_", "SELECT * FROM {prefix}mailsvc_settings", "SELECT * FROM `wp_mailsvc_settings`"},
		{"", "DROP TABLE {prefix}mailsvc_x", "DROP TABLE `mailsvc_x`"},
		{"9site_", "CREATE INDEX {prefix}a ON {prefix}b (c)", "CREATE INDEX `9site_a` ON `9site_b` (c)"},
		{"wp_", "no placeholder", "no placeholder"},
	}
	for _, tt := range tests {
		db := &DB{handle: &handle{prefix: tt.prefix}}
		if got := db.expand(tt.in); got != tt.want {
			t.Errorf("expand(%q) with prefix %q = %q, want %q", tt.in, tt.prefix, got, tt.want)
		}
	}
}

func TestDecodeJSONNumbers(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{`1`, int64(1)},
		{`-9223372036854775808`, int64(-9223372036854775808)},
		{`9223372036854775808`, float64(9223372036854775808)},
		{`1e3`, int64(1000)},
		{`2.5`, 2.5},
		{`1e400`, "1e400"},
		{`[1,{"a":2}]`, []any{int64(1), map[string]any{"a": int64(2)}}},
	}
	for _, tt := range tests {
		got, err := DecodeJSON(tt.in)
		if err != nil {
			t.Errorf("decodeJSON(%s): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("decodeJSON(%s) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{``, `{`, `1 2`, `{"a":1}x`} {
		if v, err := DecodeJSON(bad); err == nil {
			t.Errorf("decodeJSON(%q) = %#v, want error", bad, v)
		}
	}
}
