// Package testdb gives tests a fresh database: a new MariaDB/MySQL database
// on the local server, dropped when the test ends, or an SQLite file in the
// test's temporary directory.
//
// The MariaDB server is the one at 127.0.0.1:3306 with user root and an
// empty password, unless MAILSVC_TEST_MYSQL holds another go-sql-driver DSN
// (without a database name, e.g. "user:pass@tcp(host:3306)/"). When the
// server does not answer the test is skipped, unless the environment
// variable CI is set, in which case it fails.
package testdb

import (
	"github.com/mailsvc/mailsvc/internal/testenv"

	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// DefaultServer is the go-sql-driver DSN of the local test server.
const DefaultServer = "root:@tcp(127.0.0.1:3306)/"

// MySQL creates a database named mailsvc_test_<random> on the test server,
// registers its removal with t.Cleanup, and returns a DSN for it in the
// form store.Open takes: "mysql:" followed by a go-sql-driver DSN (strip
// the "mysql:" prefix to open it with database/sql directly; DriverDSN does
// that).
func MySQL(t testing.TB) string {
	t.Helper()
	cfg, err := serverConfig()
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	server := cfg.FormatDSN()
	admin, err := sql.Open("mysql", server)
	if err != nil {
		t.Fatalf("testdb: open MariaDB: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		testenv.Missing(t, "MariaDB not reachable at %s: %v", cfg.Addr, err)
	}
	name := "mailsvc_test_" + randomSuffix(t)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		admin.Close()
		t.Fatalf("testdb: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		// Dropping a database of some thirty tables waits for their
		// pages to leave the buffer pool: on a loaded 2-core machine
		// that took longer than 30 s.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			t.Errorf("testdb: drop database %s: %v", name, err)
		}
	})
	cfg.DBName = name
	return "mysql:" + cfg.FormatDSN()
}

// DriverDSN returns the go-sql-driver DSN inside a DSN returned by MySQL.
func DriverDSN(dsn string) string {
	const p = "mysql:"
	if len(dsn) >= len(p) && dsn[:len(p)] == p {
		return dsn[len(p):]
	}
	return dsn
}

// SQLite returns a DSN for store.Open naming a new SQLite file in the
// test's temporary directory (removed with it).
func SQLite(t testing.TB) string {
	t.Helper()
	return "sqlite:" + filepath.Join(t.TempDir(), "mailsvc.db")
}

func serverConfig() (*mysql.Config, error) {
	dsn := os.Getenv("MAILSVC_TEST_MYSQL")
	if dsn == "" {
		dsn = DefaultServer
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse MAILSVC_TEST_MYSQL: %w", err)
	}
	cfg.DBName = ""
	cfg.Timeout = 3 * time.Second
	return cfg, nil
}

func randomSuffix(t testing.TB) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("testdb: random name: %v", err)
	}
	return hex.EncodeToString(b)
}
