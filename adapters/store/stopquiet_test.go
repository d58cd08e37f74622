package store

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
)

// TestCancelledQueryIsNoError checks that a query cut short by its own
// context's cancellation (the service stopping) writes no ERROR line,
// while a query that fails on a live context still does.
func TestCancelledQueryIsNoError(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	db, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "q.db"), "wp_", log)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	buf.Reset()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var n int
	if err := db.Gorm().WithContext(ctx).Raw("SELECT COUNT(*) FROM wp_mailsvc_logs").Scan(&n).Error; err == nil {
		t.Fatal("a query on a cancelled context succeeded")
	}
	if strings.Contains(buf.String(), "level=ERROR") {
		t.Errorf("a cancelled query was logged as an error:\n%s", buf.String())
	}
	if err := db.Gorm().WithContext(context.Background()).Raw("SELECT * FROM no_such_table").Scan(&n).Error; err == nil {
		t.Fatal("a query of a missing table succeeded")
	}
	if !strings.Contains(buf.String(), "level=ERROR") || !strings.Contains(buf.String(), "no_such_table") {
		t.Errorf("a failing query on a live context was not logged as an error:\n%s", buf.String())
	}
}
