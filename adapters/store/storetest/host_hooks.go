package storetest

import (
	"context"
	"encoding/json"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// hostHookTests are the contract tests of the host hook outbox.
func (s *suite) hostHookTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"HostHooksWithOutcomes", s.testHostHooksWithOutcomes},
		{"HostHooksRecordedAndPruned", s.testHostHooksRecordedAndPruned},
	}
}

// OutboxRow is one row of the host hook outbox, its arguments decoded.
type OutboxRow struct {
	Hook string
	Args []any
}

// Outbox returns the rows of the host hook outbox in order.
func Outbox(t *testing.T, db *store.DB) []OutboxRow {
	t.Helper()
	rows, err := db.Gorm().Raw("SELECT hook, args FROM " + db.TableName("hook_events") + " ORDER BY id").Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []OutboxRow
	for rows.Next() {
		var r OutboxRow
		var js string
		if err := rows.Scan(&r.Hook, &js); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(js), &r.Args); err != nil {
			t.Fatalf("args %s: %v", js, err)
		}
		out = append(out, r)
	}
	return out
}

// testHostHooksWithOutcomes: the outcome of a log the bridge flagged
// writes mail_svc_delivered (real delivery only) or wp_mail_failed (with
// the wp_mail() arguments the bridge kept), an outcome's own host hooks
// are written with it, nothing is written for an outcome that does not
// apply or a log without flags, and the notifier is called once per
// commit that wrote some.
func (s *suite) testHostHooksWithOutcomes(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	var notified atomic.Int32
	db.HostHooks().NotifyHostHooks(func() { notified.Add(1) })
	var logs []*core.Log
	for i := range 5 {
		logs = append(logs, Enqueue(t, db.Logs(), Message(i)))
	}
	flag := func(l *core.Log, flags int, message string) {
		t.Helper()
		q := db.Gorm().Exec("UPDATE "+db.TableName("logs")+" SET host_hooks = ? WHERE id = ?", flags, l.ID)
		if message != "" {
			q = db.Gorm().Exec("UPDATE "+db.TableName("logs")+" SET host_hooks = ?, message = ? WHERE id = ?", flags, message, l.ID)
		}
		if q.Error != nil {
			t.Fatal(q.Error)
		}
	}
	flag(logs[0], core.HostHookFlagDelivered|core.HostHookFlagWPMailFailed, "")
	flag(logs[1], core.HostHookFlagDelivered|core.HostHookFlagWPMailFailed,
		`{"from":{"email":"shop@example.com"},"to":[{"email":"ann1@example.com"}],"wp_mail":{"to":["ann1@example.com"],"subject":"Order 1","message":"Hello 1","headers":{"X-Order":"1"},"attachments":["/tmp/a.pdf"]}}`)
	flag(logs[2], core.HostHookFlagDelivered, "")
	claimed := Claim(t, db.Logs(), "w", 10, time.Hour)
	if len(claimed) != 5 || claimed[1].Message.To[0].Email != "ann1@example.com" {
		t.Fatalf("claimed %d logs (the flagged message column must still read)", len(claimed))
	}
	conn := int64(7)
	testHook := core.HostHook{Name: core.HookTestEmailSent, Args: []any{conn, "ann4@example.com", "Order 4", logs[4].ID, true, ""}}
	outs := []core.LogOutcome{
		{LogID: logs[0].ID, Status: core.StatusDelivered, SentConnectionID: &conn, ProviderMessageID: "pm-0"},
		{LogID: logs[1].ID, Status: core.StatusFailed, SentConnectionID: &conn, LastError: "550 mailbox unavailable"},
		{LogID: logs[2].ID, Status: core.StatusDelivered, Simulated: true, SentConnectionID: &conn},
		{LogID: logs[3].ID, Status: core.StatusDelivered, SentConnectionID: &conn, ProviderMessageID: "pm-3"},
		{LogID: logs[4].ID, Status: core.StatusDelivered, SentConnectionID: &conn, HostHooks: []core.HostHook{testHook}},
	}
	if n, err := db.Logs().RecordOutcomes(ctx, "other", outs); err != nil || n != 0 {
		t.Fatalf("RecordOutcomes by a non-owner = %d, %v", n, err)
	}
	if got := Outbox(t, db); len(got) != 0 || notified.Load() != 0 {
		t.Fatalf("outcomes that did not apply wrote %v (notified %d)", got, notified.Load())
	}
	if n, err := db.Logs().RecordOutcomes(ctx, "w", outs); err != nil || n != 5 {
		t.Fatalf("RecordOutcomes = %d, %v", n, err)
	}
	want := []OutboxRow{
		{core.HookDelivered, []any{float64(logs[0].ID), float64(conn), "pm-0"}},
		{core.HookTestEmailSent, []any{float64(conn), "ann4@example.com", "Order 4", float64(logs[4].ID), true, ""}},
		{core.HookWPMailFailed, []any{map[string]any{"log_id": float64(logs[1].ID), "error": "550 mailbox unavailable",
			"mail_data": map[string]any{"to": []any{"ann1@example.com"}, "subject": "Order 1", "message": "Hello 1",
				"headers": map[string]any{"X-Order": "1"}, "attachments": []any{"/tmp/a.pdf"}}}}},
	}
	if got := Outbox(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("Outbox =\n%v\nwant\n%v", got, want)
	}
	if notified.Load() != 1 {
		t.Fatalf("notified %d times, want once", notified.Load())
	}
}

// testHostHooksRecordedAndPruned: RecordHostHooks writes on its own and
// calls the notifier, and PruneHostHooks deletes rows older than the cut.
// (A provider event's host hooks, written in its transaction, are
// adapters/pro/store's HostHooksWithLogEvents.)
func (s *suite) testHostHooksRecordedAndPruned(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	var notified atomic.Int32
	db.HostHooks().NotifyHostHooks(func() { notified.Add(1) })
	if err := db.HostHooks().RecordHostHooks(ctx, []core.HostHook{{Name: core.HookWebhookSES, Args: []any{map[string]any{"notificationType": "Bounce"}, "arn:topic"}}}); err != nil {
		t.Fatal(err)
	}
	got := Outbox(t, db)
	if len(got) != 1 || got[0].Hook != core.HookWebhookSES || got[0].Args[1] != "arn:topic" {
		t.Fatalf("Outbox = %v", got)
	}
	if notified.Load() != 1 {
		t.Fatalf("notified %d times, want once", notified.Load())
	}
	if n, err := db.HostHooks().PruneHostHooks(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneHostHooks of nothing old = %d, %v", n, err)
	}
	if n, err := db.HostHooks().PruneHostHooks(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("PruneHostHooks = %d, %v; want 1", n, err)
	}
}
