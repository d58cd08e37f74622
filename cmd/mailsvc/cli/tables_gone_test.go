package cli

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestTablesGoneGuardReadsGormTraces checks that the guard sees a missing
// table in gorm's "trace" group, replaces that ERROR record by one INFO
// line and stops the service once.
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
	out := buf.String()
	if stops != 1 || !g.Gone() || strings.Count(out, "\n") != 1 || !strings.Contains(out, `level=INFO msg="`+tablesGoneMessage+`"`) {
		t.Errorf("stops %d, gone %v, log:\n%s", stops, g.Gone(), out)
	}
}
