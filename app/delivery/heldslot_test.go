package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// gateTransport holds every send until open is closed, counting the sends
// in flight.
type gateTransport struct {
	g    gauge
	open chan struct{}
	sent atomic.Int64
}

func (g *gateTransport) Send(ctx context.Context, _ *core.Message) (core.Receipt, error) {
	g.g.enter()
	defer g.g.now.Add(-1)
	select {
	case <-g.open:
	case <-ctx.Done():
		return core.Receipt{}, core.Temporary(ctx.Err())
	}
	g.sent.Add(1)
	return core.Receipt{Response: "250 ok"}, nil
}

var (
	gateDriver sync.Once
	gateMu     sync.Mutex
	gateByConn = map[int64]*gateTransport{}
)

// gateEnv is a service whose connections 1 and 2 send through gate
// transports with the given settings, one worker holding hand messages,
// and an added stage before send that counts the messages that reached
// it (the decision runs once the message's goroutine has started).
func gateEnv(t *testing.T, settings map[int64]core.Settings, trs map[int64]*gateTransport, hand int) (*env, *atomic.Int64) {
	t.Helper()
	gateDriver.Do(func() {
		core.Register(core.Driver{Slug: "deliverygate", New: func(c *core.Connection, _ core.DriverEnv) (core.Transport, error) {
			gateMu.Lock()
			defer gateMu.Unlock()
			tr, ok := gateByConn[c.ID]
			if !ok {
				return nil, errors.New("no gate transport")
			}
			return tr, nil
		}})
	})
	e := newEnv(t, nil, nil)
	base := e.svc.mustBase(t, e) - 1
	for n, tr := range trs {
		gateMu.Lock()
		gateByConn[base+n] = tr
		gateMu.Unlock()
		c := e.conns.m[base+n]
		c.Driver, c.Settings = "deliverygate", settings[n]
	}
	o := e.svc.o
	o.Workers, o.BatchSize = 1, hand
	var reached atomic.Int64
	o.Stages = []AddedStage{{Name: "count", Stage: countStage{&reached}}}
	e.svc = New(o)
	return e, &reached
}

// countStage counts the messages it sees and passes them on.
type countStage struct{ n *atomic.Int64 }

func (c countStage) Decide(*Turn) bool { c.n.Add(1); return false }

// connChooser sends every message through conn.
type connChooser struct{ conn int64 }

func (c connChooser) Choose(context.Context, *core.Log) (Choice, error) {
	return Choice{ConnectionIDs: []int64{c.conn}, Rule: "all"}, nil
}

func (connChooser) ConnectionFailed(context.Context, int64, string) {}

// await polls cond until it holds, failing the test after 10 s.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestHeldMessagesWaitForTheirSlotBeforeTheirDecision: a worker holding
// 60 messages for a connection that sends limit at a time starts the
// decision of limit of them only (the others wait in the lane's queue,
// with no goroutine each), then of each one as a slot frees; all are
// delivered once, at most limit in flight.
func TestHeldMessagesWaitForTheirSlotBeforeTheirDecision(t *testing.T) {
	for _, limit := range []int64{1, 3, 17} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			tr := &gateTransport{open: make(chan struct{})}
			const n = 60
			e, reached := gateEnv(t, map[int64]core.Settings{1: {core.SettingMaxConcurrency: limit, core.SettingAdaptiveConcurrency: false}},
				map[int64]*gateTransport{1: tr}, n)
			for i := range n {
				e.enqueue(t, &core.Log{Message: msg(fmt.Sprintf("h%d", i))})
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); e.svc.Run(ctx) }()
			defer func() { cancel(); <-done }()
			ln := e.svc.lanes.get(e.conns.m[e.svc.mustBase(t, e)], 1)
			waiting := func() int {
				ln.mu.Lock()
				defer ln.mu.Unlock()
				return len(ln.waiters)
			}
			await(t, "the sends in flight and the rest waiting", func() bool {
				return tr.g.now.Load() == limit && waiting() == n-int(limit)
			})
			if got := reached.Load(); got != limit {
				t.Fatalf("%d messages reached the decision while %d may send, want %d", got, limit, limit)
			}
			close(tr.open)
			await(t, "every message delivered", func() bool {
				st, _ := e.logs.QueueStats(ctx)
				return st.Delivered == n
			})
			if got, peak := tr.sent.Load(), tr.g.peak.Load(); got != n || peak != limit {
				t.Fatalf("sent %d with %d in flight at most, want %d with %d", got, peak, n, limit)
			}
			if got := reached.Load(); got != n {
				t.Fatalf("%d decisions, want %d", got, n)
			}
		})
	}
}

// TestHeldSlotGoesBackWhenAnotherConnectionSends: messages wait for the
// default connection's slot (one at a time), but a chooser sends them
// through connection 2 (five at a time): the default's slot goes back
// before the send, so connection 2 reaches its five.
func TestHeldSlotGoesBackWhenAnotherConnectionSends(t *testing.T) {
	one, five := &gateTransport{open: make(chan struct{})}, &gateTransport{open: make(chan struct{})}
	pinned := func(n int64) core.Settings {
		return core.Settings{core.SettingMaxConcurrency: n, core.SettingAdaptiveConcurrency: false}
	}
	e, _ := gateEnv(t, map[int64]core.Settings{1: pinned(1), 2: pinned(5)}, map[int64]*gateTransport{1: one, 2: five}, 20)
	e.svc.o.Chooser = connChooser{conn: e.svc.mustBase(t, e) + 1}
	e.svc = New(e.svc.o)
	const n = 20
	for i := range n {
		e.enqueue(t, &core.Log{Message: msg(fmt.Sprintf("r%d", i))})
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.svc.Run(ctx) }()
	defer func() { cancel(); <-done }()
	await(t, "connection 2's five sends in flight", func() bool { return five.g.now.Load() == 5 })
	close(five.open)
	await(t, "every message delivered", func() bool {
		st, _ := e.logs.QueueStats(ctx)
		return st.Delivered == n
	})
	if got := one.sent.Load(); got != 0 {
		t.Fatalf("the default connection sent %d, want none", got)
	}
	if got := five.sent.Load(); got != n {
		t.Fatalf("connection 2 sent %d, want %d", got, n)
	}
}

// TestStopHandsBackMessagesWaitingForASlot: when the service stops while
// a send holds the only slot, the messages waiting in the lane's queue go
// back to the queue untried, and the one sending is recorded.
func TestStopHandsBackMessagesWaitingForASlot(t *testing.T) {
	tr := &gateTransport{open: make(chan struct{})}
	const n = 10
	e, reached := gateEnv(t, map[int64]core.Settings{1: {core.SettingMaxConcurrency: int64(1), core.SettingAdaptiveConcurrency: false}},
		map[int64]*gateTransport{1: tr}, n)
	for i := range n {
		e.enqueue(t, &core.Log{Message: msg(fmt.Sprintf("s%d", i))})
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.svc.Run(ctx) }()
	await(t, "the first send", func() bool { return tr.g.now.Load() == 1 })
	cancel()
	close(tr.open)
	<-done
	st, _ := e.logs.QueueStats(context.Background())
	if st.Delivered != 1 || st.Queued != n-1 || st.Sending != 0 {
		t.Fatalf("after the stop %+v, want 1 delivered and %d queued", st, n-1)
	}
	if got := reached.Load(); got != 1 {
		t.Fatalf("%d messages reached the decision, want 1", got)
	}
	queued, _, _ := e.logs.FindLogs(context.Background(), core.LogFilter{Status: core.StatusQueued})
	for _, l := range queued {
		if l.Attempts != 0 || len(l.History) != 0 {
			t.Errorf("handed-back log %d has %d attempts", l.ID, l.Attempts)
		}
	}
}
