package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/core"
)

// TestRecordOutcomesOfOwners records two workers' batches in one call:
// each owner's outcomes apply to the logs it holds, an outcome for a log
// another owner holds is skipped, the deleted log goes, and the attempts
// and roll-ups count what applied.
func TestRecordOutcomesOfOwners(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for i := range 6 {
			l := &core.Log{Message: core.Message{From: core.Address{Email: "a@example.com"},
				To: []core.Address{{Email: fmt.Sprintf("b%d@example.com", i)}}, Subject: "s", Text: "t"}}
			if err := db.Logs().EnqueueLog(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		a, err := db.Logs().ClaimLogs(ctx, "w-a", 3, time.Minute)
		if err != nil || len(a) != 3 {
			t.Fatalf("claim a: %d logs, %v", len(a), err)
		}
		b, err := db.Logs().ClaimLogs(ctx, "w-b", 3, time.Minute)
		if err != nil || len(b) != 3 {
			t.Fatalf("claim b: %d logs, %v", len(b), err)
		}
		conn := int64(9)
		done := func(l *core.Log, status string) core.LogOutcome {
			o := core.LogOutcome{LogID: l.ID, Status: status, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn,
				ProviderMessageID: fmt.Sprintf("pm-%d", l.ID),
				History:           []core.Attempt{{LogID: l.ID, ConnectionID: conn, At: time.Now(), Outcome: core.OutcomeDelivered}}}
			if status == core.StatusFailed {
				o.LastError, o.ProviderMessageID = "550 no", ""
				o.History[0].Outcome = core.OutcomePermanent
			}
			if status == core.StatusQueued {
				o.NextAttemptAt = time.Now().Add(time.Hour)
				o.History[0].Outcome = core.OutcomeTemporary
			}
			return o
		}
		gone := done(b[2], core.StatusDelivered)
		gone.Delete = true
		outsA := []core.LogOutcome{done(a[0], core.StatusDelivered), done(a[1], core.StatusFailed), done(a[2], core.StatusQueued),
			done(b[0], core.StatusFailed)} // b[0] is held by w-b: skipped
		outsB := []core.LogOutcome{done(b[0], core.StatusDelivered), done(b[1], core.StatusDelivered), gone}
		applied, err := db.Logs().RecordOutcomesOfOwners(ctx, []string{"w-a", "w-b"}, [][]core.LogOutcome{outsA, outsB})
		if err != nil {
			t.Fatal(err)
		}
		if applied[0] != 3 || applied[1] != 3 {
			t.Fatalf("applied %v, want [3 3]", applied)
		}
		want := map[int64]string{a[0].ID: core.StatusDelivered, a[1].ID: core.StatusFailed, a[2].ID: core.StatusQueued,
			b[0].ID: core.StatusDelivered, b[1].ID: core.StatusDelivered}
		for id, status := range want {
			l, err := db.Logs().FindLogByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if l.Status != status || len(l.History) != 1 || l.LeaseOwner != "" {
				t.Errorf("log %d: status %s, %d attempts, lease %q; want %s, 1 attempt, no lease", id, l.Status, len(l.History), l.LeaseOwner, status)
			}
			if status == core.StatusDelivered && (l.ProviderMessageID != fmt.Sprintf("pm-%d", id) || l.DeliveredAt == nil) {
				t.Errorf("log %d: provider id %q, delivered at %v", id, l.ProviderMessageID, l.DeliveredAt)
			}
			if status == core.StatusFailed && l.LastError != "550 no" {
				t.Errorf("log %d: last error %q", id, l.LastError)
			}
			if status == core.StatusQueued && !l.NextAttemptAt.After(time.Now().Add(50*time.Minute)) {
				t.Errorf("log %d: next attempt %v, want in an hour", id, l.NextAttemptAt)
			}
		}
		if _, err := db.Logs().FindLogByID(ctx, b[2].ID); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("deleted log: %v, want not found", err)
		}
		buckets, err := db.Logs().OutcomeBuckets(ctx, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, bk := range buckets {
			got[bk.Status] += bk.Count
		}
		if got[core.StatusDelivered] != 4 || got[core.StatusFailed] != 1 {
			t.Errorf("roll-ups %v, want 4 delivered (the deleted one included) and 1 failed", got)
		}
		// Recorded again: nothing is held any more, nothing applies.
		applied, err = db.Logs().RecordOutcomesOfOwners(ctx, []string{"w-a", "w-b"}, [][]core.LogOutcome{outsA, outsB})
		if err != nil || applied[0] != 0 || applied[1] != 0 {
			t.Errorf("second record: applied %v, %v; want none", applied, err)
		}
	})
}
