package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

func TestSQLiteContract(t *testing.T) {
	storetest.Run(t, storetest.SQL(testdb.SQLite(t)))
}

func TestMySQLContract(t *testing.T) {
	storetest.Run(t, storetest.SQL(testdb.MySQL(t)))
}

func TestSQLiteCreatesDirectoryAndUsesWAL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "dir", "mailsvc.db")
	db, err := store.Open(ctx, "sqlite:"+path, store.DefaultPrefix, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not created: %v", err)
	}
	pragmas := []struct {
		name string
		want string
	}{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"busy_timeout", "10000"},
	}
	for _, p := range pragmas {
		var got string
		if err := db.Gorm().WithContext(ctx).Raw("PRAGMA " + p.name).Scan(&got).Error; err != nil {
			t.Fatalf("PRAGMA %s: %v", p.name, err)
		}
		if got != p.want {
			t.Errorf("PRAGMA %s = %q, want %q", p.name, got, p.want)
		}
	}
	if db.Dialect() != store.DialectSQLite || db.Prefix() != "wp_" {
		t.Fatalf("Dialect/Prefix = %q/%q", db.Dialect(), db.Prefix())
	}
}

func TestSQLiteMemory(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite::memory:", "", nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	c := &core.Connection{Name: "m", Driver: "smtp"}
	if err := db.Connections().CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	// Every query must see the same in-memory database.
	for range 5 {
		if _, err := db.Connections().FindConnectionByID(ctx, c.ID); err != nil {
			t.Fatalf("FindConnectionByID: %v", err)
		}
	}
}

func BenchmarkSQLiteCreateConnection(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, testdb.SQLite(b), "wp_", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for b.Loop() {
		c := &core.Connection{Name: "bench", Driver: "smtp", Settings: core.Settings{"host": "h", "port": int64(25)}}
		if err := db.Connections().CreateConnection(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSQLiteFindConnectionByID(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, testdb.SQLite(b), "wp_", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c := &core.Connection{Name: "bench", Driver: "smtp", Settings: core.Settings{"host": "h", "port": int64(25)}}
	if err := db.Connections().CreateConnection(ctx, c); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := db.Connections().FindConnectionByID(ctx, c.ID); err != nil {
			b.Fatal(err)
		}
	}
}
