package store

import (
	"context"
	"database/sql"

	"gorm.io/gorm"
)

// InTransaction runs fn with a DB whose every gorm-modelled service
// (connections, settings, notification channels, …) runs inside one
// database transaction: when fn returns an error (or panics) everything
// it wrote is rolled back and the error returned; otherwise the
// transaction commits. Methods that open their own transaction run as a
// nested one (a savepoint). The DB handed to fn, and the services taken
// from it, must not be used after fn returns, nor from several goroutines
// at once.
func (db *DB) InTransaction(ctx context.Context, fn func(tx *DB) error) error {
	return db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		inner := *db.handle
		inner.gdb = tx
		txDB := &DB{handle: &inner}
		inner.db = txDB
		return fn(txDB)
	})
}

// InSQLTransaction runs fn in one database/sql transaction (READ
// COMMITTED on MySQL, as the queue's own transactions): it commits when fn
// returns nil and rolls back when fn returns an error. It is for packages
// that keep their own tables in this database and write them with SQL.
func (db *DB) InSQLTransaction(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.inTx(ctx, fn)
}
