package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/core"
)

// TestEmptyClaimLeavesSearchIndexWhileSending: a claim that finds the
// queue empty while other messages are still being sent leaves the
// search dictionary's work for later (it would slow the end of a
// drain); once nothing is sending, empty claims do it.
func TestEmptyClaimLeavesSearchIndexWhileSending(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		logs := db.Logs()
		l := &core.Log{Message: core.Message{From: core.Address{Email: "shop@example.com"},
			To: []core.Address{{Email: "buyer@example.org"}}, Subject: "s", Text: "b"}}
		if err := logs.EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		if got, err := logs.ClaimLogs(ctx, "sender", 10, time.Hour); err != nil || len(got) != 1 {
			t.Fatalf("claim: %d logs, %v", len(got), err)
		}
		if got, err := logs.ClaimLogs(ctx, "idle", 10, time.Hour); err != nil || len(got) != 0 {
			t.Fatalf("empty claim: %d logs, %v", len(got), err)
		}
		if n, err := db.SearchIndex().IndexSearchAddresses(ctx); err != nil || n == 0 {
			t.Fatalf("IndexSearchAddresses after an empty claim while sending = %d, %v; want the work still there", n, err)
		}
		out := core.LogOutcome{LogID: l.ID, Status: core.StatusDelivered, Attempts: 1, PhaseAttempts: 1,
			History: []core.Attempt{{LogID: l.ID, At: time.Now().UTC(), Outcome: core.OutcomeDelivered}}}
		if n, err := logs.RecordOutcomes(ctx, "sender", []core.LogOutcome{out}); err != nil || n != 1 {
			t.Fatalf("record: %d, %v", n, err)
		}
		for range 20 {
			if _, err := logs.ClaimLogs(ctx, "idle", 10, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := db.SearchIndex().IndexSearchAddresses(ctx); err != nil || n != 0 {
			t.Fatalf("IndexSearchAddresses after empty claims with nothing sending = %d, %v; want 0", n, err)
		}
	})
}
