package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// webhookTests are the contract tests of the Pro webhook receiver's
// tables (the suppression list's are adapters/pro/store's).
func (s *suite) webhookTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"WebhookReplayWindow", s.testWebhookReplayWindow},
		{"LogEventsMoveDeliveredLogs", s.testLogEventsMoveLogs},
		{"RecipientOutcomesAndPartIDs", s.testRecipientOutcomes},
	}
}

// testRecipientOutcomes: a log's per-recipient outcomes and further
// provider ids are written with its outcome, read back with the log
// (refused count, partial), counted as a partial delivery in the
// roll-ups, cleared by a resend, and each part's id finds the log.
func (s *suite) testRecipientOutcomes(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	plain := deliveredWithID(t, db, 1, "pm-plain")
	l := enqueue(t, db.Logs(), testMessage(2))
	claim(t, db.Logs(), "w", 10, time.Minute)
	conn := int64(1)
	rs := core.RecipientOutcomes{
		{Email: "a@example.com", Status: core.RecipientDelivered},
		{Email: "b@example.com", Status: core.RecipientRefused, Reply: "550 5.1.1 Mailbox unavailable"},
	}
	at := time.Now()
	n, err := db.Logs().RecordOutcomes(ctx, "w", []core.LogOutcome{{
		LogID: l.ID, Status: core.StatusDelivered, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn,
		ProviderMessageID: "pm-part1", ProviderMessageIDs: []string{"pm-part1", "pm-part2"}, Recipients: rs,
		History: []core.Attempt{{LogID: l.ID, ConnectionID: conn, At: at, Outcome: core.OutcomeDelivered, ProviderMessageID: "pm-part1"}},
	}})
	if err != nil || n != 1 {
		t.Fatalf("RecordOutcomes = %d, %v", n, err)
	}
	got, err := db.Logs().FindLogByID(ctx, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Recipients, rs) || got.RecipientsRefused != 1 || !got.Partial {
		t.Fatalf("log = recipients %+v, refused %d, partial %v", got.Recipients, got.RecipientsRefused, got.Partial)
	}
	if other, err := db.Logs().FindLogByID(ctx, plain.ID); err != nil || other.Recipients != nil || other.Partial {
		t.Fatalf("plain log = %+v, %v", other, err)
	}
	ids, err := db.FindLogIDsByProviderMessageIDs(ctx, []string{"pm-part1", "pm-part2", "pm-plain"})
	if err != nil || len(ids) != 3 || ids["pm-part1"] != l.ID || ids["pm-part2"] != l.ID || ids["pm-plain"] != plain.ID {
		t.Fatalf("FindLogIDsByProviderMessageIDs = %v, %v", ids, err)
	}
	buckets, err := db.Logs().OutcomeBuckets(ctx, at.Add(-time.Hour), at.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var partial int64
	for _, b := range buckets {
		if b.Status == core.OutcomeCountPartial {
			partial += b.Count
		}
	}
	if partial != 1 {
		t.Errorf("partial count = %d, want 1 (%+v)", partial, buckets)
	}
	if n, err := db.Logs().ResendLogs(ctx, []int64{l.ID}); err != nil || n != 1 {
		t.Fatalf("ResendLogs = %d, %v", n, err)
	}
	if got, err := db.Logs().FindLogByID(ctx, l.ID); err != nil || got.Recipients != nil || got.RecipientsRefused != 0 {
		t.Fatalf("resent log = %+v, %v", got, err)
	}
}

func (s *suite) testWebhookReplayWindow(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	later := time.Now().Add(time.Hour)
	tests := []struct {
		provider, id string
		expires      time.Time
		want         bool
	}{
		{"mailgun", "tok-1", later, true},
		{"mailgun", "tok-1", later, false}, // a replay
		{"sendgrid", "tok-1", later, true}, // another provider's id space
		{"postmark", "old", time.Now().Add(-time.Minute), true},
		{"postmark", "old", later, true}, // the expired id was forgotten
		{"postmark", "old", later, false},
	}
	for i, tt := range tests {
		got, err := db.RememberWebhookEvent(ctx, tt.provider, tt.id, tt.expires)
		if err != nil || got != tt.want {
			t.Fatalf("#%d RememberWebhookEvent(%s, %s) = %v, %v; want %v", i, tt.provider, tt.id, got, err, tt.want)
		}
	}
	if _, err := db.RememberWebhookEvent(ctx, "mailgun", "", later); err == nil {
		t.Fatal("an empty id was remembered")
	}
}

// deliveredWithID queues, claims and delivers a message with a provider
// message id.
func deliveredWithID(t *testing.T, db *store.DB, i int, pid string) *core.Log {
	t.Helper()
	l := enqueue(t, db.Logs(), testMessage(i))
	claim(t, db.Logs(), "w", 10, time.Minute)
	conn := int64(1)
	n, err := db.Logs().RecordOutcomes(context.Background(), "w", []core.LogOutcome{{
		LogID: l.ID, Status: core.StatusDelivered, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn, ProviderMessageID: pid,
		History: []core.Attempt{{LogID: l.ID, ConnectionID: conn, At: time.Now(), Outcome: core.OutcomeDelivered, ProviderMessageID: pid}},
	}})
	if err != nil || n != 1 {
		t.Fatalf("RecordOutcomes = %d, %v", n, err)
	}
	return l
}

func (s *suite) testLogEventsMoveLogs(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	a := deliveredWithID(t, db, 1, "pm-a")
	b := deliveredWithID(t, db, 2, "pm-b")
	queued := enqueue(t, db.Logs(), testMessage(3))

	ids, err := db.FindLogIDsByProviderMessageIDs(ctx, []string{"pm-a", "pm-b", "pm-unknown", ""})
	if err != nil || len(ids) != 2 || ids["pm-a"] != a.ID || ids["pm-b"] != b.ID {
		t.Fatalf("FindLogIDsByProviderMessageIDs = %v, %v", ids, err)
	}

	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		logID     int64
		event     string
		status    string
		wantMoved bool
		wantStat  string
	}{
		{"open is recorded only", a.ID, core.EventOpened, "", false, core.StatusDelivered},
		{"bounce fails a delivered log", a.ID, core.EventBounced, core.StatusFailed, true, core.StatusFailed},
		{"a queued log keeps its state", queued.ID, core.EventBounced, core.StatusFailed, false, core.StatusQueued},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &core.LogEvent{LogID: tt.logID, Provider: "ses", Event: tt.event, At: at, Detail: map[string]any{"recipient": "x@example.com"}}
			moved, err := db.RecordLogEvent(ctx, ev, tt.status, "bounced: mailbox does not exist")
			if err != nil || moved != tt.wantMoved || ev.ID == 0 {
				t.Fatalf("RecordLogEvent = %v, %v (id %d); want moved %v", moved, err, ev.ID, tt.wantMoved)
			}
			l, err := db.Logs().FindLogByID(ctx, tt.logID)
			if err != nil || l.Status != tt.wantStat {
				t.Fatalf("log status %v (%v), want %s", l, err, tt.wantStat)
			}
			if tt.wantMoved && l.LastError != "bounced: mailbox does not exist" {
				t.Fatalf("last_error %q", l.LastError)
			}
		})
	}
	evs, err := db.FindLogEvents(ctx, a.ID)
	if err != nil || len(evs) != 2 {
		t.Fatalf("FindLogEvents = %v, %v", evs, err)
	}
	if evs[0].Event != core.EventOpened || evs[1].Event != core.EventBounced || !evs[1].At.Equal(at) || evs[1].Detail["recipient"] != "x@example.com" || evs[0].Provider != "ses" {
		t.Fatalf("events %+v", evs)
	}
	if evs, err := db.FindLogEvents(ctx, b.ID); err != nil || len(evs) != 0 {
		t.Fatalf("events of an untouched log: %v, %v", evs, err)
	}
	_, err = db.RecordLogEvent(ctx, &core.LogEvent{LogID: 999999, Provider: "ses", Event: core.EventOpened}, "", "")
	wantCode(t, err, core.ENOTFOUND)

	// The events go with their log.
	if _, err := db.Logs().DeleteLogs(ctx, []int64{a.ID}); err != nil {
		t.Fatal(err)
	}
	if evs, err := db.FindLogEvents(ctx, a.ID); err != nil || len(evs) != 0 {
		t.Fatalf("events outlived their log: %v, %v", evs, err)
	}
}
