package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// withLogErasers replaces the registered erase steps for one test.
func withLogErasers(t *testing.T, steps []LogEraser) { withRegistered(t, &logErasers, steps) }

// A module's erase step runs in the erase's transaction with the erased
// logs' ids and the address in lower case; when it fails, the erase
// rolls back and leaves the logs as they were.
func TestLogEraserRunsInTheErase(t *testing.T) {
	for dialect, mk := range dsns(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			db, err := Open(ctx, mk(t), "wp_", quietLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			l := &core.Log{Message: core.Message{From: core.Address{Email: "shop@example.com"},
				To: []core.Address{{Email: "bob@example.com"}}, Subject: "Hi", Text: "x"}}
			if err := db.Logs().EnqueueLog(ctx, l); err != nil {
				t.Fatal(err)
			}
			if got, err := db.Logs().ClaimLogs(ctx, "w", 1, time.Minute); err != nil || len(got) != 1 {
				t.Fatalf("ClaimLogs = %d, %v", len(got), err)
			}
			if n, err := db.Logs().RecordOutcomes(ctx, "w", []core.LogOutcome{{LogID: l.ID, Status: core.StatusDelivered, Attempts: 1, PhaseAttempts: 1}}); err != nil || n != 1 {
				t.Fatalf("RecordOutcomes = %d, %v", n, err)
			}

			withLogErasers(t, []LogEraser{func(context.Context, *DB, *sql.Tx, []int64, string) error { return errors.New("module broke") }})
			if _, _, err := db.Privacy().EraseLogsNaming(ctx, "Bob@Example.com", core.ErasedAddress, 10); err == nil {
				t.Fatal("the erase ignored its module step's error")
			}
			if got, err := db.Logs().FindLogByID(ctx, l.ID); err != nil || got.Message.To[0].Email != "bob@example.com" || got.Message.Text != "x" {
				t.Fatalf("a failed erase changed the log: %+v, %v", got, err)
			}

			var gotIDs []int64
			var gotEmail string
			withLogErasers(t, []LogEraser{func(ctx context.Context, db *DB, tx *sql.Tx, ids []int64, email string) error {
				gotIDs, gotEmail = ids, email
				var n int
				// Inside the transaction: the log is already rewritten.
				if err := tx.QueryRowContext(ctx, db.Expand("SELECT COUNT(*) FROM {prefix}mailsvc_logs WHERE id = ? AND text_body = ''"), ids[0]).Scan(&n); err != nil {
					return err
				}
				if n != 1 {
					return errors.New("the step does not see the rewritten log")
				}
				return nil
			}})
			if erased, _, err := db.Privacy().EraseLogsNaming(ctx, "Bob@Example.com", core.ErasedAddress, 10); err != nil || erased != 1 {
				t.Fatalf("EraseLogsNaming = %d, %v", erased, err)
			}
			if !slices.Equal(gotIDs, []int64{l.ID}) || gotEmail != "bob@example.com" {
				t.Fatalf("the step got %v, %q; want [%d], bob@example.com", gotIDs, gotEmail, l.ID)
			}
		})
	}
}
