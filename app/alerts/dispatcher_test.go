package alerts_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/alerts"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// clock is a settable time for the lease store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// replica is one running Dispatcher. Deliveries run one at a time
// (Parallel 1), so once a sentinel alert (queue_stalled to the sentinel
// channel) has arrived, every alert raised before it on this replica has
// been delivered or given up.
type replica struct {
	d        *alerts.Dispatcher
	sentinel *recorder
}

type dispatchFixture struct {
	*fixture
	leases   *apptest.LeaseStore
	clock    *clock
	sentinel *recorder
}

func newDispatchFixture(t *testing.T) *dispatchFixture {
	f := &dispatchFixture{fixture: newFixture(), leases: apptest.NewLeaseStore(), clock: &clock{t: time.Now()}}
	f.leases.Now = f.clock.now
	f.sentinel = newRecorder(t)
	f.add(t, f.sentinel, []string{core.EventQueueStalled}, nil)
	return f
}

func (f *dispatchFixture) start(t *testing.T, tune func(d *alerts.Dispatcher)) *replica {
	d := &alerts.Dispatcher{
		Channels: f.channels, Leases: f.leases, Logger: f.channels.Logger,
		Backoff: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}, Parallel: 1,
	}
	if tune != nil {
		tune(d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	})
	return &replica{d: d, sentinel: f.sentinel}
}

var sentinelSeq struct {
	sync.Mutex
	n int64
}

// settle raises a sentinel and waits until it is delivered.
func (r *replica) settle(t *testing.T) {
	t.Helper()
	sentinelSeq.Lock()
	sentinelSeq.n++
	id := -sentinelSeq.n // a fresh connection id: never folded
	sentinelSeq.Unlock()
	r.d.Raise(context.Background(), core.Alert{Event: core.EventQueueStalled, ConnectionID: id})
	apptest.WaitFor(t, "the sentinel alert", func() bool {
		for _, a := range func() []core.Alert { a, _ := r.sentinel.got(); return a }() {
			if a.ConnectionID == id {
				return true
			}
		}
		return false
	})
}

func raise(r *replica, event string, conn int64) {
	r.d.Raise(context.Background(), core.Alert{Event: event, ConnectionID: conn, Title: event})
}

func TestDispatchEventsFilter(t *testing.T) {
	f := newDispatchFixture(t)
	downOnly, all, inactive := newRecorder(t), newRecorder(t), newRecorder(t)
	f.add(t, downOnly, []string{core.EventConnectionDown}, nil)
	f.add(t, all, nil, nil)
	off := f.add(t, inactive, nil, nil)
	if _, err := f.channels.Bulk(context.Background(), "disable", []int64{off.ID}); err != nil {
		t.Fatal(err)
	}
	r := f.start(t, nil)
	raise(r, core.EventDeliveryFailed, 1)
	raise(r, core.EventConnectionDown, 2)
	r.settle(t)
	if got := downOnly.events(); !reflect.DeepEqual(got, []string{"connection_down:2"}) {
		t.Errorf("down-only channel got %v", got)
	}
	if got := all.events(); !reflect.DeepEqual(got, []string{"delivery_failed:1", "connection_down:2"}) {
		t.Errorf("all-events channel got %v", got)
	}
	if got := inactive.events(); len(got) != 0 {
		t.Errorf("inactive channel got %v", got)
	}
}

func TestDispatchFolding(t *testing.T) {
	f := newDispatchFixture(t)
	rec := newRecorder(t)
	f.add(t, rec, nil, nil)
	r := f.start(t, func(d *alerts.Dispatcher) { d.FoldWindow = 30 * time.Minute })

	raise(r, core.EventDeliveryFailed, 1)
	raise(r, core.EventDeliveryFailed, 1) // folded
	raise(r, core.EventDeliveryFailed, 2) // another connection
	raise(r, core.EventFallbackUsed, 1)   // another event
	r.d.Raise(context.Background(), core.Alert{Event: core.EventDeliveryFailed, ConnectionID: 1, Test: true})
	r.settle(t)
	want := []string{"delivery_failed:1", "delivery_failed:2", "fallback_used:1", "delivery_failed:1"}
	if got := rec.events(); !reflect.DeepEqual(got, want) {
		t.Fatalf("inside the window got %v, want %v", got, want)
	}
	f.clock.advance(29 * time.Minute)
	raise(r, core.EventDeliveryFailed, 1) // still folded
	r.settle(t)
	f.clock.advance(2 * time.Minute)
	raise(r, core.EventDeliveryFailed, 1) // window over
	r.settle(t)
	want = append(want, "delivery_failed:1")
	if got := rec.events(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the window got %v, want %v", got, want)
	}
}

// TestDispatchFloodHeldNeverFolded: the flood guard raises one alert per
// episode of a source already; two episodes (two sources, or one source
// twice) inside the fold window are both sent.
func TestDispatchFloodHeldNeverFolded(t *testing.T) {
	f := newDispatchFixture(t)
	rec := newRecorder(t)
	f.add(t, rec, nil, nil)
	r := f.start(t, func(d *alerts.Dispatcher) { d.FoldWindow = 30 * time.Minute })
	raise(r, core.EventFloodHeld, 0)
	raise(r, core.EventFloodHeld, 0)
	r.settle(t)
	if got := rec.events(); !reflect.DeepEqual(got, []string{"flood_held:0", "flood_held:0"}) {
		t.Fatalf("got %v, want both flood_held alerts", got)
	}
}

func TestDispatchFoldingAcrossReplicas(t *testing.T) {
	f := newDispatchFixture(t)
	rec := newRecorder(t)
	f.add(t, rec, nil, nil)
	a, b := f.start(t, nil), f.start(t, nil)
	for range 3 {
		raise(a, core.EventConnectionDown, 7)
		raise(b, core.EventConnectionDown, 7)
	}
	a.settle(t)
	b.settle(t)
	if got := rec.events(); !reflect.DeepEqual(got, []string{"connection_down:7"}) {
		t.Fatalf("two replicas sent %v, want one connection_down", got)
	}
	// The recovery is sent once, by whichever replica sees it first.
	raise(b, core.EventConnectionRecovered, 7)
	raise(a, core.EventConnectionRecovered, 7)
	a.settle(t)
	b.settle(t)
	if got := rec.events(); !reflect.DeepEqual(got, []string{"connection_down:7", "connection_recovered:7"}) {
		t.Fatalf("after recovery on two replicas got %v", got)
	}
}

func TestDispatchRecoveredOnlyAfterDown(t *testing.T) {
	f := newDispatchFixture(t)
	rec := newRecorder(t)
	f.add(t, rec, nil, nil)
	r := f.start(t, nil)
	// A flapping connection: at most one down and one recovery per fold
	// window, however often it flaps.
	steps := []struct {
		event string
		after time.Duration // the clock moves this much first
		want  []string
	}{
		{core.EventConnectionRecovered, 0, nil},                                             // never down
		{core.EventConnectionDown, 0, []string{"connection_down:3"}},                        // sent
		{core.EventConnectionDown, 0, nil},                                                  // folded
		{core.EventConnectionRecovered, 0, []string{"connection_recovered:3"}},              // one recovery
		{core.EventConnectionRecovered, 0, nil},                                             // not twice
		{core.EventConnectionDown, time.Minute, nil},                                        // flapping: still folded
		{core.EventConnectionRecovered, time.Minute, nil},                                   // its down was not sent
		{core.EventConnectionDown, alerts.DefaultFoldWindow, []string{"connection_down:3"}}, // a new window
		{core.EventConnectionRecovered, time.Minute, []string{"connection_recovered:3"}},
	}
	var want []string
	for i, st := range steps {
		f.clock.advance(st.after)
		raise(r, st.event, 3)
		r.settle(t)
		want = append(want, st.want...)
		if got := rec.events(); !reflect.DeepEqual(got, append([]string{}, want...)) {
			t.Fatalf("step %d (%s): got %v, want %v", i, st.event, got, want)
		}
	}
}

func TestDispatchRetries(t *testing.T) {
	tests := []struct {
		name      string
		script    []error
		attempts  int
		delivered int
	}{
		{"temporary then success", []error{core.Temporary(errors.New("503")), core.Temporary(errors.New("429"))}, 3, 1},
		{"unclassified counts as temporary", []error{errors.New("connection reset")}, 2, 1},
		{"permanent is not retried", []error{core.Permanent(errors.New("404 no such webhook"))}, 1, 0},
		{"gives up after the backoff list", []error{core.Temporary(errors.New("a")), core.Temporary(errors.New("b")), core.Temporary(errors.New("c")), core.Temporary(errors.New("d")), core.Temporary(errors.New("e"))}, 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newDispatchFixture(t)
			rec := newRecorder(t)
			rec.script = tt.script
			f.add(t, rec, []string{core.EventDeliveryFailed}, nil)
			r := f.start(t, nil)
			raise(r, core.EventDeliveryFailed, 1)
			r.settle(t)
			alerts, attempts := rec.got()
			if attempts != tt.attempts || len(alerts) != tt.delivered {
				t.Fatalf("attempts %d, delivered %d; want %d, %d", attempts, len(alerts), tt.attempts, tt.delivered)
			}
		})
	}
}

func TestDispatchLogsNoSecrets(t *testing.T) {
	f := newDispatchFixture(t)
	rec := newRecorder(t)
	rec.script = []error{core.Permanent(errors.New(`Post "https://hooks.example.com/services/SECRET-PATH": 404`))}
	f.add(t, rec, []string{core.EventDeliveryFailed}, core.Settings{"hook_url": "https://hooks.example.com/services/SECRET-PATH"})
	r := f.start(t, nil)
	raise(r, core.EventDeliveryFailed, 1)
	r.settle(t)
	log := f.log.String()
	if !strings.Contains(log, "alert not sent") {
		t.Fatalf("the failure was not logged: %s", log)
	}
	if strings.Contains(log, "SECRET-PATH") {
		t.Fatalf("the log leaks the webhook URL: %s", log)
	}
}

func TestDispatchNeverThroughTheFailingConnection(t *testing.T) {
	f := newDispatchFixture(t)
	viaSeven := newRecorder(t)
	f.add(t, viaSeven, []string{core.EventConnectionDown}, core.Settings{"connection_id": int64(7)})
	r := f.start(t, nil)
	raise(r, core.EventConnectionDown, 7)
	raise(r, core.EventConnectionDown, 8)
	r.settle(t)
	if got := viaSeven.events(); !reflect.DeepEqual(got, []string{"connection_down:8"}) {
		t.Fatalf("channel sending through connection 7 got %v; want only the alert about 8", got)
	}
}

func TestRaiseNeverBlocks(t *testing.T) {
	f := newDispatchFixture(t)
	hanging := newRecorder(t)
	hanging.hang = true
	f.add(t, hanging, []string{core.EventDeliveryFailed}, nil)
	r := f.start(t, func(d *alerts.Dispatcher) { d.QueueSize = 2; d.SendTimeout = time.Hour })
	done := make(chan struct{})
	go func() {
		for i := range 50 {
			raise(r, core.EventDeliveryFailed, int64(i+1))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Raise blocked behind a hanging channel")
	}
	if !strings.Contains(f.log.String(), "the alert queue is full") {
		t.Fatalf("dropped alerts were not logged: %s", f.log.String())
	}
}

func TestRaiseBeforeRunAndAfterStop(t *testing.T) {
	f := newDispatchFixture(t)
	rec := newRecorder(t)
	f.add(t, rec, []string{core.EventDeliveryFailed}, nil)
	d := &alerts.Dispatcher{Channels: f.channels, Logger: f.channels.Logger} // local folding
	d.Raise(context.Background(), core.Alert{Event: core.EventDeliveryFailed, ConnectionID: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	apptest.WaitFor(t, "the alert raised before Run", func() bool { return len(rec.events()) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	d.Raise(context.Background(), core.Alert{Event: core.EventDeliveryFailed, ConnectionID: 2})
	if got := rec.events(); len(got) != 1 {
		t.Fatalf("an alert raised after stop was delivered: %v", got)
	}
	if !strings.Contains(f.log.String(), "the dispatcher has stopped") {
		t.Fatalf("an alert raised after stop was not logged as dropped: %s", f.log.String())
	}
}

func TestDispatchRecordsHistory(t *testing.T) {
	f := newDispatchFixture(t)
	rec := newRecorder(t)
	f.add(t, rec, nil, nil)
	hist := &apptest.AlertHistory{}
	r := f.start(t, func(d *alerts.Dispatcher) { d.FoldWindow = 30 * time.Minute; d.History = hist })

	raise(r, core.EventConnectionDown, 7)
	raise(r, core.EventConnectionDown, 7)                                                                     // folded: not recorded
	r.d.Raise(context.Background(), core.Alert{Event: core.EventDeliveryFailed, ConnectionID: 7, Test: true}) // a test: not recorded
	r.settle(t)
	var got []string
	for _, a := range hist.Recorded() {
		if a.Event != core.EventQueueStalled { // the sentinels
			got = append(got, a.Event)
		}
	}
	if want := []string{core.EventConnectionDown}; !reflect.DeepEqual(got, want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
}

// TestDispatchExtraChannels checks that channels of the configuration
// (a fleet operator's) take the alerts they want beside the stored ones,
// and are never sent an alert through the connection it is about.
func TestDispatchExtraChannels(t *testing.T) {
	f := newDispatchFixture(t)
	owner, operator := newRecorder(t), newRecorder(t)
	f.add(t, owner, []string{core.EventConnectionDown}, nil)
	extra := []*core.NotificationChannel{{Name: "operator", Type: "test-recorder", IsActive: true,
		Settings: core.Settings{"sink": operator.name, "connection_id": int64(3)}}}
	r := f.start(t, func(d *alerts.Dispatcher) {
		d.Extra = func(context.Context, core.Alert) []*core.NotificationChannel { return extra }
	})
	raise(r, core.EventDeliveryFailed, 1)
	raise(r, core.EventConnectionDown, 2)
	raise(r, core.EventConnectionDown, 3)
	r.settle(t)
	for _, tc := range []struct {
		name string
		rec  *recorder
		want []string
	}{
		{"the owner's stored channel", owner, []string{"connection_down:2", "connection_down:3"}},
		{"the operator's channel, never through connection 3", operator, []string{"delivery_failed:1", "connection_down:2"}},
	} {
		if got := tc.rec.events(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s got %v, want %v", tc.name, got, tc.want)
		}
	}
}
