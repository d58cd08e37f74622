package health_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/health"
	"github.com/mailsvc/mailsvc/core"
)

func TestQueueWatch(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		queued  []time.Duration // ages of queued messages
		done    []time.Duration // ages of delivered messages
		after   time.Duration
		stalled bool
	}{
		{name: "empty queue", after: 15 * time.Minute},
		{name: "young messages", queued: []time.Duration{time.Minute, 14 * time.Minute}, after: 15 * time.Minute},
		{name: "one message too old", queued: []time.Duration{time.Minute, 20 * time.Minute}, after: 15 * time.Minute, stalled: true},
		{name: "old but delivered messages do not count", queued: []time.Duration{time.Minute}, done: []time.Duration{3 * time.Hour}, after: 15 * time.Minute},
		{name: "the default threshold is 15 minutes", queued: []time.Duration{16 * time.Minute}, stalled: true},
		{name: "a shorter threshold", queued: []time.Duration{2 * time.Minute}, after: time.Minute, stalled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			logs := apptest.NewLogStore()
			add := func(age time.Duration) int64 {
				l := &core.Log{Message: core.Message{Subject: "s"}}
				if err := logs.EnqueueLog(ctx, l); err != nil {
					t.Fatal(err)
				}
				logs.SetCreatedAt(l.ID, now.Add(-age))
				return l.ID
			}
			for _, age := range tt.done {
				add(age)
			}
			if len(tt.done) > 0 {
				claimed, _ := logs.ClaimLogs(ctx, "w", 10, time.Minute)
				for _, l := range claimed {
					if _, err := logs.RecordOutcomes(ctx, "w", []core.LogOutcome{{LogID: l.ID, Status: core.StatusDelivered, Attempts: 1,
						History: []core.Attempt{{LogID: l.ID, At: now, Outcome: core.OutcomeDelivered}}}}); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, age := range tt.queued {
				add(age)
			}
			rec := &apptest.AlertRecorder{}
			w := &health.QueueWatch{Logs: logs, Alerts: rec, After: tt.after, Now: func() time.Time { return now }}
			for range 2 { // every check while stalled raises; the alerter folds
				stalled, err := w.Check(ctx)
				if err != nil || stalled != tt.stalled {
					t.Fatalf("Check = %v, %v; want %v", stalled, err, tt.stalled)
				}
			}
			alerts := rec.Take()
			if !tt.stalled {
				if len(alerts) != 0 {
					t.Fatalf("alerts %+v for a queue that is not stalled", alerts)
				}
				return
			}
			if len(alerts) != 2 {
				t.Fatalf("%d alerts, want one per check", len(alerts))
			}
			a := alerts[0]
			if a.Event != core.EventQueueStalled || a.ConnectionID != 0 || !a.At.Equal(now) || !strings.Contains(a.Message, "minutes") {
				t.Fatalf("alert %+v", a)
			}
		})
	}
}

type brokenLogs struct{}

func (brokenLogs) OldestQueuedAt(context.Context) (*time.Time, error) {
	return nil, errors.New("database is down")
}

func TestQueueWatchReportsStoreErrors(t *testing.T) {
	rec := &apptest.AlertRecorder{}
	w := &health.QueueWatch{Logs: brokenLogs{}, Alerts: rec}
	if err := w.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "database is down") {
		t.Fatalf("Run = %v, want the store's error", err)
	}
	if len(rec.Take()) != 0 {
		t.Fatal("an unreadable queue raised an alert")
	}
}
