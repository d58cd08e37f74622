package cli

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestTablesGoneGuardReadsGormTraces checks that the guard drops gorm's
// ERROR trace of a query that met a missing table without stopping (a
// database gone for a moment leaves the service up, not ready), and that
// a loop's record of the missing table stops the service once, with one
// INFO line.
func TestTablesGoneGuardReadsGormTraces(t *testing.T) {
	var buf bytes.Buffer
	stops := 0
	g := newTablesGoneGuard(slog.NewTextHandler(&buf, nil), func() { stops++ })
	log := slog.New(g)
	for range 2 {
		r := slog.NewRecord(time.Now(), slog.LevelError, "SQL executed", 0)
		r.AddAttrs(slog.Group("trace", slog.String("sql", "SELECT 1 FROM wp_mailsvc_logs"), slog.String("error", "no such table: wp_mailsvc_logs")))
		if err := log.Handler().Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if stops != 0 || g.Gone() || buf.Len() != 0 {
		t.Fatalf("a traced query alone: stops %d, gone %v, log:\n%s", stops, g.Gone(), buf.String())
	}
	for range 2 {
		log.Error("claim a batch", "err", "no such table: wp_mailsvc_logs")
	}
	out := buf.String()
	if stops != 1 || !g.Gone() || strings.Count(out, "\n") != 1 || !strings.Contains(out, `level=INFO msg="`+tablesGoneMessage+`"`) {
		t.Errorf("stops %d, gone %v, log:\n%s", stops, g.Gone(), out)
	}
}

// TestTablesGoneGuardWaitsOutADroppedDatabase: while the check says the
// database itself is gone (not only the service's tables), a loop's
// record of a missing table is logged as it is and stops nothing; once
// the check says the tables alone are gone, the service stops.
func TestTablesGoneGuardWaitsOutADroppedDatabase(t *testing.T) {
	var buf bytes.Buffer
	stops := 0
	g := newTablesGoneGuard(slog.NewTextHandler(&buf, nil), func() { stops++ })
	uninstalled := false
	g.confirmWith(func() bool { return uninstalled })
	log := slog.New(g)
	log.Error("claim a batch", "err", "Error 1146 (42S02): Table 'site.wp_mailsvc_logs' doesn't exist")
	if stops != 0 || g.Gone() || !strings.Contains(buf.String(), "claim a batch") {
		t.Fatalf("the database gone: stops %d, gone %v, log:\n%s", stops, g.Gone(), buf.String())
	}
	uninstalled = true
	log.Error("claim a batch", "err", "Error 1146 (42S02): Table 'site.wp_mailsvc_logs' doesn't exist")
	if stops != 1 || !g.Gone() || !strings.Contains(buf.String(), tablesGoneMessage) {
		t.Fatalf("the tables dropped: stops %d, gone %v, log:\n%s", stops, g.Gone(), buf.String())
	}
}
