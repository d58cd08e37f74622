package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// RecordOutcomesAndClaim records two workers' outcomes and claims their
// next messages in one transaction on db, a fresh, empty store: the
// outcomes apply as RecordOutcomesOfOwners applies them (an outcome for a
// log the owner does not hold is skipped), each owner gets its own
// disjoint share of the due logs under its lease (a log the outcomes made
// due at once included), the roll-ups by connection count what applied,
// and a mismatched call changes nothing. It returns the logs whose
// outcomes applied as delivered and as failed, for a module's roll-ups
// of them (adapters/pro/store counts them by source).
func RecordOutcomesAndClaim(t *testing.T, db *store.DB) (delivered, failed []*core.Log) {
	t.Helper()
	ctx := context.Background()
	for i := range 8 {
		l := &core.Log{Source: fmt.Sprintf("src-%d", i%2), Message: core.Message{From: core.Address{Email: "a@example.com"},
			To: []core.Address{{Email: fmt.Sprintf("b%d@example.com", i)}}, Subject: "s", Text: "t"}}
		if err := db.Logs().EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	a, err := db.Logs().ClaimLogs(ctx, "w-a", 2, time.Minute)
	if err != nil || len(a) != 2 {
		t.Fatalf("claim a: %d logs, %v", len(a), err)
	}
	b, err := db.Logs().ClaimLogs(ctx, "w-b", 2, time.Minute)
	if err != nil || len(b) != 2 {
		t.Fatalf("claim b: %d logs, %v", len(b), err)
	}
	conn := int64(9)
	out := func(l *core.Log, status, outcome string) core.LogOutcome {
		return core.LogOutcome{LogID: l.ID, Status: status, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn,
			History: []core.Attempt{{LogID: l.ID, ConnectionID: conn, At: time.Now(), Outcome: outcome}}}
	}
	// b[1] moves to the fallback: queued and due at once.
	fallback := out(b[1], core.StatusQueued, core.OutcomePermanent)
	fallback.UsedFallback, fallback.PhaseAttempts, fallback.NextAttemptAt = true, 0, time.Now().Add(-time.Second)
	outsA := []core.LogOutcome{out(a[0], core.StatusDelivered, core.OutcomeDelivered), out(a[1], core.StatusDelivered, core.OutcomeDelivered),
		out(b[0], core.StatusDelivered, core.OutcomeDelivered)} // b[0] is held by w-b: skipped
	outsB := []core.LogOutcome{out(b[0], core.StatusFailed, core.OutcomePermanent), fallback}

	if _, _, err := db.Logs().RecordOutcomesAndClaim(ctx, []string{"w-a"}, [][]core.LogOutcome{outsA, outsB}, []int{1, 1}, time.Minute); err == nil {
		t.Fatal("a call with 1 owner for 2 outcome lists succeeded")
	}
	if l, _ := db.Logs().FindLogByID(ctx, a[0].ID); l.Status != core.StatusSending {
		t.Fatalf("the refused call changed log %d: %s", a[0].ID, l.Status)
	}

	applied, claimed, err := db.Logs().RecordOutcomesAndClaim(ctx, []string{"w-a", "w-b"}, [][]core.LogOutcome{outsA, outsB}, []int{3, 10}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if applied[0] != 2 || applied[1] != 2 {
		t.Fatalf("applied %v, want [2 2]", applied)
	}
	// Due: the 4 never claimed and the one moved to the fallback.
	if len(claimed) != 2 || len(claimed[0]) != 3 || len(claimed[1]) != 2 {
		t.Fatalf("claimed %d and %d logs, want 3 and 2", len(claimed[0]), len(claimed[1]))
	}
	seen := map[int64]bool{}
	for i, owner := range []string{"w-a", "w-b"} {
		for _, l := range claimed[i] {
			if seen[l.ID] {
				t.Fatalf("log %d claimed twice", l.ID)
			}
			seen[l.ID] = true
			got, err := db.Logs().FindLogByID(ctx, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if l.Status != core.StatusSending || l.LeaseOwner != owner || got.Status != core.StatusSending || got.LeaseOwner != owner || got.LeaseUntil == nil {
				t.Errorf("claimed log %d: returned %s/%q, stored %s/%q; want sending under %s", l.ID, l.Status, l.LeaseOwner, got.Status, got.LeaseOwner, owner)
			}
			if l.Message.To[0].Email == "" {
				t.Errorf("claimed log %d has no message", l.ID)
			}
			if l.ID == b[1].ID && (!l.UsedFallback || l.Attempts != 1 || l.PhaseAttempts != 0) {
				t.Errorf("the log moved to the fallback was claimed as %+v", l)
			}
		}
	}
	if !seen[b[1].ID] {
		t.Errorf("the log moved to the fallback (due at once) was not claimed")
	}
	for id, status := range map[int64]string{a[0].ID: core.StatusDelivered, a[1].ID: core.StatusDelivered, b[0].ID: core.StatusFailed} {
		l, err := db.Logs().FindLogByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if l.Status != status || len(l.History) != 1 || l.LeaseOwner != "" {
			t.Errorf("log %d: status %s, %d attempts, lease %q; want %s, 1 attempt, no lease", id, l.Status, len(l.History), l.LeaseOwner, status)
		}
	}
	from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	buckets, err := db.Logs().OutcomeBuckets(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, bk := range buckets {
		got[bk.Status] += bk.Count
	}
	if got[core.StatusDelivered] != 2 || got[core.StatusFailed] != 1 {
		t.Errorf("roll-ups by connection %v, want 2 delivered and 1 failed", got)
	}
	// Nothing is due any more: a claim alone finds nothing.
	if more, err := db.Logs().ClaimLogs(ctx, "w-c", 10, time.Minute); err != nil || len(more) != 0 {
		t.Errorf("claim after: %d logs, %v; want none", len(more), err)
	}
	return []*core.Log{a[0], a[1]}, []*core.Log{b[0]}
}
