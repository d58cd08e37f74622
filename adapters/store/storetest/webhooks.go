package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// webhookTests are the contract tests of what the Pro webhook receiver
// reads in the logs: the per-recipient outcomes and further provider ids
// (the events, the replay memory and the suppression list are
// adapters/pro/store's).
func (s *suite) webhookTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"RecipientOutcomesAndPartIDs", s.testRecipientOutcomes},
	}
}

// testRecipientOutcomes: a log's per-recipient outcomes and further
// provider ids are written with its outcome, read back with the log
// (refused count, partial), counted as a partial delivery in the
// roll-ups and cleared by a resend. (That each part's id finds the log is
// adapters/pro/store's PartIDsFindTheirLog.)
func (s *suite) testRecipientOutcomes(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	plain := DeliveredWithID(t, db, 1, "pm-plain")
	l := Enqueue(t, db.Logs(), Message(2))
	Claim(t, db.Logs(), "w", 10, time.Minute)
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

// DeliveredWithID queues, claims and delivers a message with a provider
// message id.
func DeliveredWithID(t *testing.T, db *store.DB, i int, pid string) *core.Log {
	t.Helper()
	l := Enqueue(t, db.Logs(), Message(i))
	Claim(t, db.Logs(), "w", 10, time.Minute)
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
