package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/core"
)

func batchMessage(i int) core.Message {
	return core.Message{
		From:    core.Address{Email: "shop@example.com"},
		To:      []core.Address{{Email: fmt.Sprintf("Buyer%d@Example.com", i)}},
		Cc:      []core.Address{{Email: "copy@example.com"}},
		Subject: fmt.Sprintf("order %d", i),
		Text:    "hello",
	}
}

func TestEnqueueLogs(t *testing.T) {
	for _, dialect := range []string{"sqlite", "mysql"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.OpenDialect(t, dialect)
			var logs []*core.Log
			for i := range 5 {
				logs = append(logs, &core.Log{Message: batchMessage(i), Source: "smtp"})
			}
			if err := db.Logs().EnqueueLogs(ctx, logs); err != nil {
				t.Fatal(err)
			}
			seen := map[int64]bool{}
			for i, l := range logs {
				if l.ID == 0 || seen[l.ID] || l.Status != core.StatusQueued || l.CreatedAt.IsZero() {
					t.Fatalf("log %d after EnqueueLogs: id %d status %q created %v", i, l.ID, l.Status, l.CreatedAt)
				}
				seen[l.ID] = true
				got, err := db.Logs().FindLogByID(ctx, l.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Message.Subject != fmt.Sprintf("order %d", i) || got.Source != "smtp" || got.Status != core.StatusQueued {
					t.Fatalf("stored log %d = %q %q %q", l.ID, got.Message.Subject, got.Source, got.Status)
				}
			}
			// The recipients are searchable as after EnqueueLog.
			found, n, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "buyer3@example.com"})
			if err != nil || n != 1 || len(found) != 1 || found[0].ID != logs[3].ID {
				t.Fatalf("search by recipient: %d logs (%v), want log %d", n, err, logs[3].ID)
			}
			if _, n, _ := db.Logs().FindLogs(ctx, core.LogFilter{Search: "copy@example.com"}); n != 5 {
				t.Fatalf("search by Cc: %d logs, want 5", n)
			}

			// One log the store refuses: nothing of the batch is inserted.
			bad := []*core.Log{{Message: batchMessage(10)}, {Message: batchMessage(11), Status: core.StatusDelivered}}
			if err := db.Logs().EnqueueLogs(ctx, bad); err == nil {
				t.Fatal("EnqueueLogs with a delivered log: no error")
			}
			if bad[0].ID != 0 {
				t.Fatalf("a refused batch set id %d", bad[0].ID)
			}
			if st, _ := db.Logs().QueueStats(ctx); st.Queued != 5 {
				t.Fatalf("queued after a refused batch = %d, want 5", st.Queued)
			}
		})
	}
}

func TestGroupCommit(t *testing.T) {
	for _, dialect := range []string{"sqlite", "mysql"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.OpenDialect(t, dialect)
			g := store.NewGroupCommit(db.Logs())
			g.MaxBatch = 16
			const callers, each = 20, 10
			var mu sync.Mutex
			ids := map[int64]string{}
			var wg sync.WaitGroup
			errs := make(chan error, callers*each)
			for c := range callers {
				wg.Go(func() {
					for k := range each {
						i := c*each + k
						l := &core.Log{Message: batchMessage(i), Source: "smtp"}
						// Every tenth call is one the store refuses: only it fails.
						if i%10 == 9 {
							l.Status = core.StatusFailed
						}
						err := g.EnqueueLog(ctx, l)
						if (err != nil) != (i%10 == 9) {
							errs <- fmt.Errorf("message %d: err %v", i, err)
							continue
						}
						if err == nil {
							mu.Lock()
							if prev, dup := ids[l.ID]; dup || l.ID == 0 {
								errs <- fmt.Errorf("message %d got id %d, already %q's", i, l.ID, prev)
							}
							ids[l.ID] = l.Message.Subject
							mu.Unlock()
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			want := callers * each * 9 / 10
			if len(ids) != want {
				t.Fatalf("%d messages accepted, want %d", len(ids), want)
			}
			st, err := db.Logs().QueueStats(ctx)
			if err != nil || st.Queued != want {
				t.Fatalf("queued = %d (%v), want %d", st.Queued, err, want)
			}
			for id, subject := range ids {
				got, err := db.Logs().FindLogByID(ctx, id)
				if err != nil || got.Message.Subject != subject {
					t.Fatalf("log %d: %v %q, want %q", id, err, got.Message.Subject, subject)
				}
			}
		})
	}
}

func TestGroupCommitCancelledCall(t *testing.T) {
	db := storetest.OpenDialect(t, "sqlite")
	g := store.NewGroupCommit(db.Logs())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l := &core.Log{Message: batchMessage(1)}
	if err := g.EnqueueLog(ctx, l); !errors.Is(err, context.Canceled) {
		t.Fatalf("EnqueueLog with a cancelled context = %v, want context.Canceled", err)
	}
	if st, _ := db.Logs().QueueStats(context.Background()); st.Queued != 0 || l.ID != 0 {
		t.Fatalf("a cancelled call queued a log: %+v id %d", st, l.ID)
	}
	// A lone call afterwards commits at once.
	ok := &core.Log{Message: batchMessage(2)}
	done := make(chan error, 1)
	go func() { done <- g.EnqueueLog(context.Background(), ok) }()
	select {
	case err := <-done:
		if err != nil || ok.ID == 0 {
			t.Fatalf("lone EnqueueLog: %v id %d", err, ok.ID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a lone EnqueueLog did not return")
	}
}
