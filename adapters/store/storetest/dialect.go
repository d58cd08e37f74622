package storetest

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// OpenDialect opens and migrates a fresh, empty database of the dialect
// under store.DefaultPrefix, for the tests that run on each dialect
// without the contract suite: "mysql" gets a MariaDB database of its own
// (testdb.MySQL), any other dialect a SQLite file (testdb.SQLite). It is
// closed when t ends.
func OpenDialect(t testing.TB, dialect string) *store.DB {
	t.Helper()
	dsn := testdb.SQLite(t)
	if dialect == "mysql" {
		dsn = testdb.MySQL(t)
	}
	db, err := store.Open(context.Background(), dsn, store.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// EachDSN runs fn as a subtest of t on each SQL dialect, "sqlite" then
// "mysql" (the subtest's name), with the DSN of a fresh, empty database
// of it (testdb.SQLite, testdb.MySQL: a MariaDB database of its own).
func EachDSN(t *testing.T, fn func(t *testing.T, dialect, dsn string)) {
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{
		{"sqlite", testdb.SQLite},
		{"mysql", testdb.MySQL},
	} {
		t.Run(d.name, func(t *testing.T) { fn(t, d.name, d.dsn(t)) })
	}
}

// EachDialect runs fn as a subtest of t on each SQL dialect, "mysql"
// then "sqlite" (the subtest's name), with a fresh, empty database of it
// opened by OpenDialect.
func EachDialect(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	for _, dialect := range []string{"mysql", "sqlite"} {
		t.Run(dialect, func(t *testing.T) { fn(t, OpenDialect(t, dialect)) })
	}
}
