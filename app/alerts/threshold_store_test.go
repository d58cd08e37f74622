package alerts_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app/alerts"
	"github.com/mailsvc/mailsvc/core"
)

// TestThresholdOnTheStore runs the threshold against the real store, on
// SQLite and MariaDB: failures are the store's failure marks (written at
// the test's clock; RecordOutcomes writes them in production, see the
// store's contract test), channels are rows, and two dispatchers share
// the database as two replicas would. Time moves by the clock only.
func TestThresholdOnTheStore(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, _, dsn string) {
		ctx := context.Background()
		db := storetest.Open(t, dsn, store.DefaultPrefix)

		f := newDispatchFixture(t)
		f.channels.Store = db.Notifications()
		f.store = nil
		f.sentinel = newRecorder(t)
		f.add(t, f.sentinel, []string{core.EventQueueStalled}, nil)
		rec := newRecorder(t)
		c := f.add(t, rec, []string{core.EventDeliveryFailed}, nil)
		if _, err := f.channels.Update(ctx, c.ID, alerts.ChannelInput{ThresholdCount: ptr(3), ThresholdMinutes: ptr(10)}); err != nil {
			t.Fatal(err)
		}
		stored, err := db.Notifications().FindNotificationChannelByID(ctx, c.ID)
		if err != nil || stored.ThresholdCount != 3 || stored.ThresholdMinutes != 10 || stored.ThresholdAlertedAt != nil {
			t.Fatalf("stored channel %+v, %v", stored, err)
		}
		tune := func(d *alerts.Dispatcher) {
			d.Thresholds = struct {
				*store.LogService
				*store.NotificationService
			}{db.Logs(), db.Notifications()}
			d.Now = f.clock.now
		}
		a, b := f.start(t, tune), f.start(t, tune)

		fail := func(r *replica, after time.Duration) {
			t.Helper()
			f.clock.advance(after)
			l := &core.Log{Message: core.Message{From: core.Address{Email: "shop@example.com"},
				To: []core.Address{{Email: "ann@example.net"}}, Subject: "Order", Text: "hi"}}
			if err := db.Logs().EnqueueLog(ctx, l); err != nil {
				t.Fatal(err)
			}
			// The failure as RecordOutcomes marks it, at the test's
			// clock.
			if err := db.Gorm().Table(db.TableName("failure_marks")).
				Create(map[string]any{"failed_at": f.clock.now().UTC().Truncate(time.Microsecond), "log_id": l.ID}).Error; err != nil {
				t.Fatal(err)
			}
			r.d.Raise(ctx, core.Alert{Event: core.EventDeliveryFailed, ConnectionID: 1, LogID: l.ID, Message: "550 no"})
			r.settle(t)
		}
		held := func(want int, what string) {
			t.Helper()
			if got := len(rec.events()); got != want {
				t.Fatalf("%s: %d alerts, want %d", what, got, want)
			}
		}
		fail(a, 0)
		fail(b, 2*time.Minute)
		held(0, "two failures")
		fail(a, 2*time.Minute)
		held(1, "the third failure in 4 minutes")
		// Both replicas see the claim in the database.
		fail(b, time.Minute)
		fail(a, time.Minute)
		held(1, "two more inside the alert's window")
		// 30 minutes on, the window has expired: a failure alone is
		// held, the third within 10 minutes alerts again.
		fail(b, 30*time.Minute)
		fail(a, 6*time.Minute)
		held(1, "two failures in the new window")
		fail(b, 6*time.Minute)
		held(1, "the third failure 12 minutes after the first (the first left the window)")
		fail(a, time.Minute)
		held(2, "the third failure within 10 minutes")
		got, _ := rec.got()
		if got[1].Title != "3 deliveries failed in 10 minutes" {
			t.Fatalf("alert title %q", got[1].Title)
		}
		stored, _ = db.Notifications().FindNotificationChannelByID(ctx, c.ID)
		if stored.ThresholdAlertedAt == nil || !stored.ThresholdAlertedAt.Equal(f.clock.now().UTC().Truncate(time.Microsecond)) {
			t.Fatalf("threshold_alerted_at = %v, want %v", stored.ThresholdAlertedAt, f.clock.now())
		}
	})
}
