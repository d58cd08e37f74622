package store

import (
	"context"

	"gorm.io/gorm"
)

// InTransaction runs fn with a DB whose every method runs inside one
// database transaction: when fn returns an error (or panics) everything
// it wrote is rolled back and the error returned; otherwise the
// transaction commits. Methods that open their own transaction run as a
// nested one (a savepoint). The DB handed to fn must not be used after
// fn returns, nor from several goroutines at once.
func (db *DB) InTransaction(ctx context.Context, fn func(tx *DB) error) error {
	return db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		inner := *db
		inner.gdb = tx
		return fn(&inner)
	})
}
