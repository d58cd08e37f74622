package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// subjectRows returns the MySQL subjects side table as log id → subject.
func subjectRows(t *testing.T, db *DB) map[int64]string {
	t.Helper()
	rows, err := db.sqlDB.Query(db.expand(`SELECT log_id, subject FROM {prefix}mailsvc_log_subjects`))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		out[id] = s
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Migration 10 on MySQL copies the subjects of the logs already there
// into the side table and drops the logs table's FULLTEXT index; from
// then on every write path (EnqueueLog, EnqueueLogs, ImportLogs, a PHP
// bridge row once claimed) fills the side table, and a subject search
// reads it with the same results and order as before.
func TestSubjectSideTable(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.MySQL(t)
	full := slices.Clone(migrations)
	withMigrations(t, slices.Clone(migrations[:9]))
	db, err := Open(ctx, dsn, "wp_", quietLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	raw := func(status, subject string, at time.Time, indexed int) int64 {
		t.Helper()
		res, err := db.sqlDB.Exec(db.expand(`INSERT INTO {prefix}mailsvc_logs (status, source, recipients, subject, text_body, html_body, message,
			attempts, phase_attempts, used_fallback, simulated, provider_message_id, last_error, next_attempt_at, created_at, updated_at, recipients_indexed)
			VALUES (?, 'wordpress', 'a@example.com', ?, '', '', '{"to":[{"email":"a@example.com"}]}', 0, 0, 0, 0, '', '', ?, ?, ?, ?)`),
			status, subject, at, at, at, indexed)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		return id
	}
	old1 := raw(core.StatusDelivered, "Invoice ready", base, 1)
	old2 := raw(core.StatusFailed, "Invoice overdue", base.Add(time.Hour), 1)

	migrations = full
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.sqlDB.QueryRow(`SELECT COUNT(*) FROM information_schema.statistics
		WHERE table_schema = DATABASE() AND table_name = 'wp_mailsvc_logs' AND index_type = 'FULLTEXT'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the logs table keeps %d FULLTEXT index columns after migration 10", n)
	}
	if got := subjectRows(t, db); got[old1] != "Invoice ready" || got[old2] != "Invoice overdue" {
		t.Fatalf("side table after the migration: %v", got)
	}

	one := &core.Log{Message: core.Message{To: []core.Address{{Email: "b@example.com"}}, Subject: "Invoice paid"}}
	if err := db.Logs().EnqueueLog(ctx, one); err != nil {
		t.Fatal(err)
	}
	batch := []*core.Log{
		{Message: core.Message{To: []core.Address{{Email: "c@example.com"}}, Subject: "Weekly invoice digest"}},
		{Message: core.Message{To: []core.Address{{Email: "d@example.com"}}, Subject: "Unrelated news"}},
	}
	if err := db.Logs().EnqueueLogs(ctx, batch); err != nil {
		t.Fatal(err)
	}
	imported := &core.Log{Status: core.StatusDelivered, CreatedAt: base.Add(-time.Hour),
		Message: core.Message{To: []core.Address{{Email: "e@example.com"}}, Subject: "Imported invoice"}}
	if err := db.Logs().ImportLogs(ctx, []*core.Log{imported}); err != nil {
		t.Fatal(err)
	}
	bridge := raw(core.StatusQueued, "Invoice from wp_mail", time.Now().UTC(), 0)
	got := subjectRows(t, db)
	for id, want := range map[int64]string{one.ID: "Invoice paid", batch[0].ID: "Weekly invoice digest", batch[1].ID: "Unrelated news", imported.ID: "Imported invoice"} {
		if got[id] != want {
			t.Fatalf("side table row of log %d = %q, want %q (all: %v)", id, got[id], want, got)
		}
	}
	if _, ok := got[bridge]; ok {
		t.Fatal("a bridge row has a side table row before it was indexed")
	}

	tests := []struct {
		name      string
		f         core.LogFilter
		wantIDs   []int64
		wantTotal int
	}{
		// The search indexes the pending bridge row first.
		{"word, newest first", core.LogFilter{Search: "invoice"}, []int64{bridge, batch[0].ID, one.ID, old2, old1, imported.ID}, 6},
		{"word prefix", core.LogFilter{Search: "invo"}, []int64{bridge, batch[0].ID, one.ID, old2, old1, imported.ID}, 6},
		{"two words, any order", core.LogFilter{Search: "ready invoice"}, []int64{old1}, 1},
		{"page", core.LogFilter{Search: "invoice", Offset: 1, Limit: 2}, []int64{batch[0].ID, one.ID}, 6},
		{"capped count", core.LogFilter{Search: "invoice", Limit: 1, CountUpTo: 2}, []int64{bridge}, 3},
		{"status", core.LogFilter{Search: "invoice", Status: core.StatusFailed}, []int64{old2}, 1},
		{"dates", core.LogFilter{Search: "invoice", CreatedFrom: base.Add(-time.Hour), CreatedBefore: base.Add(time.Hour)}, []int64{old1, imported.ID}, 2},
		{"recheck as typed", core.LogFilter{Search: "invoice p"}, []int64{one.ID}, 1},
		{"short term scans the subjects", core.LogFilter{Search: "wp"}, []int64{bridge}, 1},
		{"no match", core.LogFilter{Search: "receipt"}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs, total, err := db.Logs().FindLogs(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, l := range logs {
				ids = append(ids, l.ID)
			}
			if !slices.Equal(ids, tt.wantIDs) || total != tt.wantTotal {
				t.Fatalf("FindLogs(%+v) = %v (total %d), want %v (total %d)", tt.f, ids, total, tt.wantIDs, tt.wantTotal)
			}
		})
	}
	if got := subjectRows(t, db); got[bridge] != "Invoice from wp_mail" {
		t.Fatalf("bridge row not indexed by the search: %v", got)
	}
	if _, err := db.sqlDB.Exec(db.expand(`DELETE FROM {prefix}mailsvc_logs WHERE id = ?`), old1); err != nil {
		t.Fatal(err)
	}
	if _, ok := subjectRows(t, db)[old1]; ok {
		t.Fatal("the side table row outlived its log")
	}
}
