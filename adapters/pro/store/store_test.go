package store_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"

	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// suite runs the Pro tables' contract tests against one database; each
// subtest uses its own table prefix.
type suite struct {
	dsn string
	mu  sync.Mutex
	n   int
}

// run runs every contract test of the Pro tables against dsn.
func run(t *testing.T, dsn string) {
	s := &suite{dsn: dsn}
	for _, tt := range slices.Concat(s.routingTests(), s.suppressionTests(), s.eventTests(), s.analyticsTests()) {
		t.Run(tt.name, tt.fn)
	}
}

func TestSQLiteContract(t *testing.T) { run(t, testdb.SQLite(t)) }

func TestMySQLContract(t *testing.T) { run(t, testdb.MySQL(t)) }

// prefix returns a table prefix no other subtest of this run uses.
func (s *suite) prefix() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return fmt.Sprintf("p%02d_", s.n)
}

// open opens and migrates the database under prefix, with the Pro tables.
func (s *suite) open(t *testing.T, prefix string) *prostore.DB {
	t.Helper()
	db, err := store.Open(context.Background(), s.dsn, prefix,
		slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatalf("Open(prefix %q): %v", prefix, err)
	}
	t.Cleanup(func() { db.Close() })
	return prostore.New(db)
}

// wantCode fails t unless err carries the error code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if got := core.ErrorCode(err); got != code {
		t.Fatalf("error %v has code %q, want %q", err, got, code)
	}
}
