package wordpress

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/glebarez/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/mailsvc/mailsvc/internal/testdb"
)

// forEachDB runs fn in a subtest against a fresh SQLite database and, when
// the local MariaDB answers, a fresh MariaDB database (testdb skips that
// subtest otherwise, and fails it under CI).
func forEachDB(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	cfg := &gorm.Config{Logger: logger.Discard}
	t.Run("sqlite", func(t *testing.T) {
		db, err := gorm.Open(sqlite.Open(filepath.Join(t.TempDir(), "wp.db")), cfg)
		if err != nil {
			t.Fatalf("open sqlite: %v", err)
		}
		t.Cleanup(func() {
			if sqlDB, err := db.DB(); err == nil {
				sqlDB.Close()
			}
		})
		fn(t, db)
	})
	t.Run("mariadb", func(t *testing.T) {
		dsn := testdb.DriverDSN(testdb.MySQL(t))
		db, err := gorm.Open(mysql.Open(dsn), cfg)
		if err != nil {
			t.Fatalf("open mariadb: %v", err)
		}
		t.Cleanup(func() {
			if sqlDB, err := db.DB(); err == nil {
				sqlDB.Close()
			}
		})
		fn(t, db)
	})
}

// mustExec runs a statement or fails the test.
func mustExec(t *testing.T, db *gorm.DB, q string, args ...any) {
	t.Helper()
	if err := db.Exec(q, args...).Error; err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// userMeta returns the first raw meta value of key, failing when missing.
func userMeta(t *testing.T, db *gorm.DB, prefix string, userID int64, key string) string {
	t.Helper()
	src, err := NewGormSource(db, prefix)
	if err != nil {
		t.Fatal(err)
	}
	v, found, err := src.UserMeta(context.Background(), userID, key)
	if err != nil || !found {
		t.Fatalf("user meta %s of %d: found=%v err=%v", key, userID, found, err)
	}
	return v
}
