package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// LogEraser is an add-on module's step of a personal data erase: it
// removes what the module keeps about the logs logIDs that names email
// (lower case), inside tx, the erase's own transaction, on db's tables.
// It runs after the logs' rows were rewritten and before the erase
// commits; an error rolls the whole erase back. It must be safe to run
// again on logs already erased.
type LogEraser func(ctx context.Context, db *DB, tx *sql.Tx, logIDs []int64, email string) error

// logErasers holds the steps RegisterLogEraser added, in order.
var logErasers []LogEraser

// RegisterLogEraser adds a module's step to every erase of an address
// from the logs (PrivacyService.EraseLogsNaming): the Pro add-on removes
// the provider events naming it. Call it from the module's init(), as
// RegisterMigrations; a build without the module runs no step.
func RegisterLogEraser(step LogEraser) {
	if step == nil {
		panic("store: RegisterLogEraser of a nil step")
	}
	moduleMu.Lock()
	defer moduleMu.Unlock()
	logErasers = append(logErasers, step)
}

// eraseModules runs the registered erase steps for logIDs inside tx.
func (db *DB) eraseModules(ctx context.Context, tx *sql.Tx, logIDs []int64, email string) error {
	moduleMu.RLock()
	steps := slices.Clone(logErasers)
	moduleMu.RUnlock()
	for _, step := range steps {
		if err := step(ctx, db, tx, logIDs, email); err != nil {
			return fmt.Errorf("erase what a module keeps per log: %w", err)
		}
	}
	return nil
}
