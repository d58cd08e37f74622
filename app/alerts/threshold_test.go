package alerts_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/alerts"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// failures is an in-memory record of final failures: the times at which
// logs failed for good.
type failures struct {
	mu sync.Mutex
	at []time.Time
}

func (f *failures) add(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.at = append(f.at, t)
}

func (f *failures) CountFailedLogs(_ context.Context, from, to time.Time) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.at {
		if t.After(from) && !t.After(to) {
			n++
		}
	}
	return n, nil
}

// thresholdStore joins the failure record and the channel store's claim.
type thresholdStore struct {
	*failures
	*apptest.NotificationStore
}

func TestThresholdValidation(t *testing.T) {
	tests := []struct {
		name           string
		count, minutes *int
		field          string
	}{
		{"defaults", nil, nil, ""},
		{"every failure", ptr(1), ptr(0), ""},
		{"three in ten", ptr(3), ptr(10), ""},
		{"upper bounds", ptr(core.MaxThresholdCount), ptr(core.MaxThresholdMinutes), ""},
		{"count zero", ptr(0), ptr(10), "threshold_count"},
		{"count negative", ptr(-2), ptr(10), "threshold_count"},
		{"count too high", ptr(core.MaxThresholdCount + 1), ptr(10), "threshold_count"},
		{"minutes negative", ptr(1), ptr(-1), "threshold_minutes"},
		{"minutes too high", ptr(2), ptr(core.MaxThresholdMinutes + 1), "threshold_minutes"},
		{"count without a window", ptr(5), ptr(0), "threshold_minutes"},
		{"count without minutes", ptr(5), nil, "threshold_minutes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			rec := newRecorder(t)
			c, err := f.channels.Create(context.Background(), alerts.ChannelInput{
				Name: ptr("n"), Type: ptr("test-recorder"), Settings: map[string]any{"sink": rec.name},
				ThresholdCount: tt.count, ThresholdMinutes: tt.minutes,
			})
			if tt.field == "" {
				want := 1
				if tt.count != nil {
					want = *tt.count
				}
				if err != nil || c.ThresholdCount != want {
					t.Fatalf("Create = %+v, %v", c, err)
				}
				return
			}
			if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)[tt.field] == "" {
				t.Fatalf("Create error %v, want a validation error on %s", err, tt.field)
			}
		})
	}
	// An update keeps the stored threshold unless it is given.
	f := newFixture()
	rec := newRecorder(t)
	c := f.add(t, rec, nil, nil)
	c, err := f.channels.Update(context.Background(), c.ID, alerts.ChannelInput{ThresholdCount: ptr(4), ThresholdMinutes: ptr(15)})
	if err != nil || c.ThresholdCount != 4 || c.ThresholdMinutes != 15 {
		t.Fatalf("Update = %+v, %v", c, err)
	}
	c, err = f.channels.Update(context.Background(), c.ID, alerts.ChannelInput{Name: ptr("renamed")})
	if err != nil || c.ThresholdCount != 4 || c.ThresholdMinutes != 15 {
		t.Fatalf("Update of the name = %+v, %v", c, err)
	}
	if _, err := f.channels.Update(context.Background(), c.ID, alerts.ChannelInput{ThresholdMinutes: ptr(0)}); core.ErrorFields(err)["threshold_minutes"] == "" {
		t.Fatalf("a window of 0 with a count of 4: %v", err)
	}
}

// TestThresholdHoldsUntilTheNthFailure: a channel with a threshold of 3
// failures in 10 minutes beside one without (every failure, folded per
// connection as before), on two replicas; time moves by the clock only.
func TestThresholdHoldsUntilTheNthFailure(t *testing.T) {
	f := newDispatchFixture(t)
	fails := &failures{}
	every, three := newRecorder(t), newRecorder(t)
	f.add(t, every, []string{core.EventDeliveryFailed}, nil)
	c := f.add(t, three, []string{core.EventDeliveryFailed}, nil)
	if _, err := f.channels.Update(context.Background(), c.ID, alerts.ChannelInput{ThresholdCount: ptr(3), ThresholdMinutes: ptr(10)}); err != nil {
		t.Fatal(err)
	}
	tune := func(d *alerts.Dispatcher) {
		d.Thresholds = thresholdStore{fails, f.store}
		d.Now = f.clock.now
		d.FoldWindow = time.Nanosecond // the plain channel gets every failure
	}
	a, b := f.start(t, tune), f.start(t, tune)
	t0 := f.clock.now()
	fail := func(r *replica, conn int64, after time.Duration) {
		f.clock.advance(after)
		fails.add(f.clock.now())
		raise(r, core.EventDeliveryFailed, conn)
		r.settle(t)
	}
	steps := []struct {
		on    *replica
		after time.Duration
		want  int // alerts the threshold channel has had so far
	}{
		{a, 0, 0},           // 0 min: 1 failure in the window
		{b, time.Minute, 0}, // 1: 2
		{a, time.Minute, 1}, // 2: 3 in 2 minutes, alert
		{b, time.Minute, 1}, // 3: inside the alert's window, held
		{a, 5 * time.Minute, 1},
		// 13: the window re-armed at 12; the failures at 8 and 13 are in
		// the last 10 minutes, not yet 3.
		{b, 5 * time.Minute, 1},
		{a, time.Minute, 2},      // 14: 8, 13 and 14, a second alert
		{b, 20 * time.Minute, 2}, // 34: the window expired, 1 failure in it
		{a, time.Minute, 2},      // 35: 2
	}
	for i, st := range steps {
		fail(st.on, int64(i+1), st.after)
		if got := len(three.events()); got != st.want {
			t.Fatalf("step %d (%s after t0): the threshold channel has %d alerts, want %d", i, f.clock.now().Sub(t0), got, st.want)
		}
	}
	if got := len(every.events()); got != len(steps) {
		t.Fatalf("the channel without a threshold got %d alerts, want %d", got, len(steps))
	}
	got, _ := three.got()
	if !strings.HasPrefix(got[0].Title, "3 deliveries failed in 10 minutes") || !strings.Contains(got[0].Message, "threshold: 3") {
		t.Fatalf("first threshold alert: %+v", got[0])
	}
	if got[0].ConnectionID != 3 || got[1].ConnectionID != 7 {
		t.Fatalf("the alerts name connections %d and %d, want the latest failures' (3 and 7)", got[0].ConnectionID, got[1].ConnectionID)
	}
}

// TestThresholdLeavesOtherEventsAlone: connection_down is never held by a
// threshold, and a test alert skips it too.
func TestThresholdLeavesOtherEventsAlone(t *testing.T) {
	f := newDispatchFixture(t)
	rec := newRecorder(t)
	c := f.add(t, rec, nil, nil)
	if _, err := f.channels.Update(context.Background(), c.ID, alerts.ChannelInput{ThresholdCount: ptr(5), ThresholdMinutes: ptr(10)}); err != nil {
		t.Fatal(err)
	}
	r := f.start(t, func(d *alerts.Dispatcher) {
		d.Thresholds = thresholdStore{&failures{}, f.store}
		d.Now = f.clock.now
	})
	raise(r, core.EventConnectionDown, 1)
	raise(r, core.EventDeliveryFailed, 1) // held: no failure recorded
	r.d.Raise(context.Background(), core.Alert{Event: core.EventDeliveryFailed, ConnectionID: 2, Test: true})
	r.settle(t)
	if got := rec.events(); !reflect.DeepEqual(got, []string{"connection_down:1", "delivery_failed:2"}) {
		t.Fatalf("got %v", got)
	}
}
