package store

import (
	"fmt"
	"regexp"
	"sync"
)

// moduleHistory is one add-on module's schema history.
type moduleHistory struct {
	module string
	list   []Migration
}

// moduleHistories holds the histories RegisterMigrations added, in
// registration order.
var (
	moduleMu        sync.RWMutex
	moduleHistories []moduleHistory
)

// moduleName is what a module may be called: it becomes part of a table
// name.
var moduleName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,30}$`)

// RegisterMigrations adds an add-on module's own schema history (the Pro
// add-on's tables: adapters/pro/store). Its tables are created by its
// migrations only, so a build that does not join the module creates none
// of them. The module's applied versions are kept apart from the
// service's own, in {prefix}mailsvc_<module>_migrations (that table too
// exists only with the module), so the two lists number their versions
// independently: list starts at version 1 and ascends.
//
// Migrate applies the service's own migrations first, then each module's,
// under the same lock (MySQL) or in the same transaction (SQLite). A
// module may be joined to a database whose tables an earlier build
// created (through the service's own list, before the module had one), so
// its statements must be idempotent: CREATE TABLE IF NOT EXISTS, CREATE
// INDEX IF NOT EXISTS, and on MySQL ADD COLUMN IF NOT EXISTS (SQLite has
// none: a later column is added by a statement that checks for it).
//
// Call it from the module's init(); it panics on a bad or repeated
// module name or versions out of order.
func RegisterMigrations(module string, list []Migration) {
	if !moduleName.MatchString(module) {
		panic(fmt.Sprintf("store: RegisterMigrations: bad module name %q", module))
	}
	for i, m := range list {
		if m.Version != i+1 {
			panic(fmt.Sprintf("store: RegisterMigrations(%q): migration %d has version %d, want %d", module, i, m.Version, i+1))
		}
	}
	moduleMu.Lock()
	defer moduleMu.Unlock()
	for _, h := range moduleHistories {
		if h.module == module {
			panic(fmt.Sprintf("store: RegisterMigrations(%q) called twice", module))
		}
	}
	moduleHistories = append(moduleHistories, moduleHistory{module: module, list: list})
}
