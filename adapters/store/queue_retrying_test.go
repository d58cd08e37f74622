package store

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// TestRetrying counts, on MariaDB and SQLite, the queued messages that
// were tried and wait for a retry, with the earliest next attempt (one
// answered only 421, a rate limit that does not count as an attempt,
// counts too): a message never tried, one waiting for its site's quota,
// a failed one and a delivered one do not count.
func TestRetrying(t *testing.T) {
	for _, tt := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"mariadb", testdb.MySQL}, {"sqlite", testdb.SQLite}} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := Open(ctx, tt.dsn(t), DefaultPrefix, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if n, next, err := db.Logs().Retrying(ctx); err != nil || n != 0 || next != nil {
				t.Fatalf("empty queue: %d, %v, %v", n, next, err)
			}
			logs := make([]*core.Log, 7)
			for i := range logs {
				logs[i] = &core.Log{Source: "test", Message: core.Message{From: core.Address{Email: "shop@example.com"},
					To: []core.Address{{Email: "buyer@example.com"}}, Subject: "order"}}
			}
			if err := db.Logs().EnqueueLogs(ctx, logs); err != nil {
				t.Fatal(err)
			}
			claimed, err := db.Logs().ClaimLogs(ctx, "w", 6, time.Minute)
			if err != nil || len(claimed) != 6 {
				t.Fatalf("claim: %d, %v", len(claimed), err)
			}
			soon := time.Now().UTC().Add(time.Minute).Truncate(time.Second)
			outs := []core.LogOutcome{
				{LogID: claimed[0].ID, Status: core.StatusQueued, Attempts: 1, PhaseAttempts: 1, NextAttemptAt: soon.Add(time.Hour), LastError: "421"},
				{LogID: claimed[1].ID, Status: core.StatusQueued, Attempts: 2, PhaseAttempts: 2, NextAttemptAt: soon, LastError: "421"},
				{LogID: claimed[2].ID, Status: core.StatusFailed, Attempts: 1, LastError: "550"},
				{LogID: claimed[3].ID, Status: core.StatusDelivered, Attempts: 1},
				{LogID: claimed[4].ID, Status: core.StatusQueued, NextAttemptAt: soon.Add(2 * time.Hour), LastError: "smtp: data: 421 4.7.0 Try again later",
					History: []core.Attempt{{LogID: claimed[4].ID, Outcome: core.OutcomeRateLimited, At: soon.Add(-time.Minute), Error: "smtp: data: 421 4.7.0 Try again later"}}},
				{LogID: claimed[5].ID, Status: core.StatusQueued, NextAttemptAt: soon.Add(-time.Hour), LastError: "site 1 reached its daily quota"},
			}
			if _, err := db.Logs().RecordOutcomes(ctx, "w", outs); err != nil {
				t.Fatal(err)
			}
			n, next, err := db.Logs().Retrying(ctx)
			if err != nil || n != 3 || next == nil || !next.Equal(soon) {
				t.Fatalf("Retrying = %d, %v, %v; want 3 with the next attempt at %v", n, next, err, soon)
			}
		})
	}
}
