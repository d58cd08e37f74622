package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// withRegistered replaces what modules registered in *registry (under
// moduleMu) with list for one test.
func withRegistered[T any](t *testing.T, registry *[]T, list []T) {
	moduleMu.Lock()
	saved := *registry
	*registry = list
	moduleMu.Unlock()
	t.Cleanup(func() {
		moduleMu.Lock()
		*registry = saved
		moduleMu.Unlock()
	})
}

// withModules replaces the registered module histories for one test.
func withModules(t *testing.T, hs []moduleHistory) { withRegistered(t, &moduleHistories, hs) }

// A module's history is applied after the service's own and recorded in
// its own table: its versions never mix with the service's, a second
// start changes nothing, and an appended version applies once.
func TestModuleMigrationsApply(t *testing.T) {
	for dialect, mk := range dsns(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			v1 := Migration{Version: 1, Name: "test: a module table",
				MySQL:  []string{"CREATE TABLE IF NOT EXISTS {prefix}mailsvc_tmod_items (id INT NOT NULL PRIMARY KEY)"},
				SQLite: []string{"CREATE TABLE IF NOT EXISTS {prefix}mailsvc_tmod_items (id INTEGER NOT NULL PRIMARY KEY)"}}
			withModules(t, []moduleHistory{{module: "tmod", list: []Migration{v1}}})
			db, err := Open(ctx, mk(t), "wp_", quietLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			tables, err := db.Installation().ServiceTables(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"wp_mailsvc_tmod_items", "wp_mailsvc_tmod_migrations", "wp_mailsvc_logs"} {
				if !slices.Contains(tables, want) {
					t.Errorf("no table %s among %v", want, tables)
				}
			}
			own, err := db.Schema().AppliedVersions(ctx)
			if err != nil || len(own) != LatestVersion() {
				t.Fatalf("the service's versions: %v %v", own, err)
			}
			v2 := Migration{Version: 2, Name: "test: a second module table",
				MySQL:  []string{"CREATE TABLE {prefix}mailsvc_tmod_more (id INT NOT NULL PRIMARY KEY)"},
				SQLite: []string{"CREATE TABLE {prefix}mailsvc_tmod_more (id INTEGER NOT NULL PRIMARY KEY)"}}
			withModules(t, []moduleHistory{{module: "tmod", list: []Migration{v1, v2}}})
			for i := range 2 { // v2 is not idempotent: a second run would fail
				if err := db.Migrate(ctx); err != nil {
					t.Fatalf("Migrate #%d: %v", i+1, err)
				}
			}
			var got []int
			if err := db.Gorm().Table("wp_mailsvc_tmod_migrations").Order("version").Pluck("version", &got).Error; err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, []int{1, 2}) {
				t.Fatalf("module versions %v, want [1 2]", got)
			}
			if again, err := db.Schema().AppliedVersions(ctx); err != nil || !slices.Equal(again, own) {
				t.Fatalf("the service's versions changed: %v %v, were %v", again, err, own)
			}
		})
	}
}

// RegisterMigrations refuses a name that cannot be part of a table name,
// versions that do not count up from 1, and a module registered twice.
func TestRegisterMigrationsRejects(t *testing.T) {
	withModules(t, nil)
	RegisterMigrations("okmod", []Migration{{Version: 1, Name: "x"}})
	for name, call := range map[string]func(){
		"bad name":   func() { RegisterMigrations("Bad-Name", nil) },
		"empty name": func() { RegisterMigrations("", nil) },
		"gap":        func() { RegisterMigrations("gapmod", []Migration{{Version: 1}, {Version: 3}}) },
		"not from 1": func() { RegisterMigrations("latemod", []Migration{{Version: 2}}) },
		"twice":      func() { RegisterMigrations("okmod", nil) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			call()
		})
	}
}

// A migration's Step runs after its statements, on the migration's
// connection or transaction: here it adds a column only when missing, so
// a table an earlier build made with or without it ends up the same; a
// failing step stops Migrate and leaves its version unrecorded.
func TestMigrationStep(t *testing.T) {
	for dialect, mk := range dsns(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			addNote := func(ctx context.Context, db *DB, q MigrationConn) error {
				has, err := db.Schema().ColumnExists(ctx, q, "{prefix}mailsvc_tstep_items", "note")
				if err != nil || has {
					return err
				}
				_, err = q.ExecContext(ctx, db.Expand("ALTER TABLE {prefix}mailsvc_tstep_items ADD COLUMN note VARCHAR(32) NOT NULL DEFAULT ''"))
				return err
			}
			v1 := Migration{Version: 1, Name: "test: a table, with a column added when missing",
				MySQL:  []string{"CREATE TABLE IF NOT EXISTS {prefix}mailsvc_tstep_items (id INT NOT NULL PRIMARY KEY)"},
				SQLite: []string{"CREATE TABLE IF NOT EXISTS {prefix}mailsvc_tstep_items (id INTEGER NOT NULL PRIMARY KEY)"},
				Step:   addNote}
			withModules(t, []moduleHistory{{module: "tstep", list: []Migration{v1}}})
			dsn := mk(t)
			db, err := Open(ctx, dsn, "wp_", quietLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if cols := columnNames(t, db, "wp_mailsvc_tstep_items"); !slices.Equal(cols, []string{"id", "note"}) {
				t.Fatalf("columns %v, want [id note]", cols)
			}
			// The table as an earlier build made it, with the column: the
			// step changes nothing.
			if err := db.Gorm().Exec("DELETE FROM wp_mailsvc_tstep_migrations").Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatalf("Migrate over the column: %v", err)
			}
			if cols := columnNames(t, db, "wp_mailsvc_tstep_items"); !slices.Equal(cols, []string{"id", "note"}) {
				t.Fatalf("columns %v after a second run, want [id note]", cols)
			}
			failing := Migration{Version: 2, Name: "test: a failing step",
				Step: func(context.Context, *DB, MigrationConn) error { return errors.New("step broke") }}
			withModules(t, []moduleHistory{{module: "tstep", list: []Migration{v1, failing}}})
			if err := db.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "step broke") {
				t.Fatalf("Migrate with a failing step: %v", err)
			}
			var got []int
			if err := db.Gorm().Table("wp_mailsvc_tstep_migrations").Order("version").Pluck("version", &got).Error; err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, []int{1}) {
				t.Fatalf("module versions %v, want [1]: the failed version is not recorded", got)
			}
		})
	}
}
