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

// gauge counts the sends in flight at once and their peak.
type gauge struct {
	now, peak atomic.Int64
}

func (g *gauge) enter() {
	n := g.now.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

// slowTransport holds each send until released, counting concurrency.
type slowTransport struct {
	g       gauge
	mu      sync.Mutex
	sent    int
	hold    time.Duration
	script  []error
	subject []string
}

func (s *slowTransport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	s.g.enter()
	defer s.g.now.Add(-1)
	select {
	case <-time.After(s.hold):
	case <-ctx.Done():
		return core.Receipt{}, core.Temporary(ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.script) > 0 {
		err := s.script[0]
		s.script = s.script[1:]
		if err != nil {
			return core.Receipt{}, err
		}
	}
	s.sent++
	s.subject = append(s.subject, msg.Subject)
	return core.Receipt{Response: "250 ok"}, nil
}

var slowDriver sync.Once

// slowEnv is a service whose connections 1 and 2 use slow transports
// with the given settings.
func slowEnv(t *testing.T, settings map[int64]core.Settings, trs map[int64]*slowTransport) *env {
	t.Helper()
	slowDriver.Do(func() {
		core.Register(core.Driver{Slug: "deliveryslow", New: func(c *core.Connection, _ core.DriverEnv) (core.Transport, error) {
			fakeMu.Lock()
			defer fakeMu.Unlock()
			tr, ok := slowByConn[c.ID]
			if !ok {
				return nil, errors.New("no slow transport")
			}
			return tr, nil
		}})
	})
	e := newEnv(t, nil, nil)
	base := e.svc.mustBase(t, e) - 1
	for n, tr := range trs {
		fakeMu.Lock()
		slowByConn[base+n] = tr
		fakeMu.Unlock()
		c := e.conns.m[base+n]
		c.Driver, c.Settings = "deliveryslow", settings[n]
	}
	e.svc.o.Workers, e.svc.o.BatchSize = 4, 50
	return e
}

var slowByConn = map[int64]*slowTransport{}

// run runs the service until every log is delivered or failed.
func (e *env) run(t *testing.T, want int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.svc.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, _ := e.logs.QueueStats(ctx)
		if st.Delivered+st.Failed == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, want %d done", st, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestMaxConcurrencyBoundsSendsInFlight: with adaptive_concurrency off,
// the sends of a connection in flight at once never pass its
// max_concurrency, and reach it when the queue is deep.
func TestMaxConcurrencyBoundsSendsInFlight(t *testing.T) {
	for _, limit := range []int64{1, 3, 17} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			tr := &slowTransport{hold: 5 * time.Millisecond}
			e := slowEnv(t, map[int64]core.Settings{1: {core.SettingMaxConcurrency: limit, core.SettingAdaptiveConcurrency: false}}, map[int64]*slowTransport{1: tr})
			const n = 120
			for i := range n {
				e.enqueue(t, &core.Log{Message: msg(fmt.Sprintf("c%d", i))})
			}
			e.run(t, n)
			if p := tr.g.peak.Load(); p > limit || p < limit {
				t.Fatalf("peak sends in flight %d, want exactly max_concurrency %d", p, limit)
			}
			if tr.sent != n {
				t.Fatalf("sent %d, want %d", tr.sent, n)
			}
		})
	}
}

// TestRateLimitAnswerPausesOnlyItsConnection: a 429 with Retry-After
// pauses its connection (its other messages wait), another connection
// keeps sending meanwhile, and the paused connection's messages are
// delivered afterwards with no failed attempt counted.
func TestRateLimitAnswerPausesOnlyItsConnection(t *testing.T) {
	limited := &slowTransport{hold: time.Millisecond,
		script: []error{core.RateLimited(errors.New("HTTP 429 slow down"), 2*time.Second)}}
	free := &slowTransport{hold: time.Millisecond}
	one := core.Settings{core.SettingMaxConcurrency: int64(1)}
	e := slowEnv(t, map[int64]core.Settings{1: one, 2: one}, map[int64]*slowTransport{1: limited, 2: free})
	base := e.svc.mustBase(t, e) - 1
	c1, c2 := base+1, base+2
	var ids []int64
	for i := range 5 {
		ids = append(ids, e.enqueue(t, &core.Log{ConnectionID: &c1, Message: msg(fmt.Sprintf("limited-%d", i))}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.svc.Run(ctx) }()
	defer func() { cancel(); <-done }()
	// Wait for the 429; then the other connection delivers 20 while the
	// first is paused.
	deadline := time.Now().Add(10 * time.Second)
	for {
		limited.mu.Lock()
		left := len(limited.script)
		limited.mu.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the 429 never came")
		}
		time.Sleep(time.Millisecond)
	}
	for i := range 20 {
		e.enqueue(t, &core.Log{ConnectionID: &c2, Message: msg(fmt.Sprintf("free-%d", i))})
	}
	for {
		free.mu.Lock()
		n := free.sent
		free.mu.Unlock()
		limited.mu.Lock()
		m := limited.sent
		limited.mu.Unlock()
		if n == 20 {
			if m != 0 {
				t.Fatalf("the paused connection sent %d while the other delivered its 20", m)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the other connection delivered %d of 20 while the first was paused", n)
		}
		time.Sleep(time.Millisecond)
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		st, _ := e.logs.QueueStats(ctx)
		if st.Delivered == 25 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, want 25 delivered", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	rateLimited := 0
	for _, id := range ids {
		l, err := e.logs.FindLogByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if l.Attempts != 1 {
			t.Errorf("log %d: %d attempts counted, want 1 (the delivery): %v", id, l.Attempts, outcomes(l))
		}
		for _, a := range l.History {
			switch a.Outcome {
			case core.OutcomeRateLimited:
				rateLimited++
			case core.OutcomeTemporary, core.OutcomePermanent:
				t.Errorf("log %d: a failed attempt was recorded: %v", id, outcomes(l))
			}
		}
	}
	if rateLimited != 1 {
		t.Errorf("%d rate_limited attempts recorded, want 1", rateLimited)
	}
}

// TestTokenBucketSplitsAcrossReplicas: over any window a lane grants no
// more than its share of max_per_second plus its burst, and its share
// shrinks with the live replicas; the provider's MaxSendRate applies
// when max_per_second is 0.
func TestTokenBucketSplitsAcrossReplicas(t *testing.T) {
	tests := []struct {
		name      string
		perSecond float64
		provider  float64
		replicas  int
		wantRate  float64
	}{
		{"one replica", 100, 0, 1, 100},
		{"three replicas", 90, 0, 3, 30},
		{"provider default", 0, 14, 2, 7},
		{"none", 0, 0, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ln := &lane{limits: core.SendLimits{MaxPerSecond: tc.provider}}
			ln.configure(10, false, tc.perSecond, tc.replicas)
			start := time.Unix(1000, 0)
			// Ask for sends as fast as possible for 10 simulated seconds:
			// count those whose turn falls inside the window.
			granted := 0
			for i := 0; i < 100000; i++ {
				at := start.Add(time.Duration(i) * time.Millisecond / 10)
				if at.Sub(start) >= 10*time.Second {
					break
				}
				if ln.reserve(at) == 0 {
					granted++
				} else {
					ln.unreserve()
				}
			}
			if tc.wantRate == 0 {
				if granted != 100000 {
					t.Fatalf("unlimited lane granted %d of 100000", granted)
				}
				return
			}
			ceiling := tc.wantRate*10 + ln.burst
			if float64(granted) > ceiling || float64(granted) < tc.wantRate*10-1 {
				t.Fatalf("granted %d in 10 s, want about %.0f (at most %.0f with the burst)", granted, tc.wantRate*10, ceiling)
			}
		})
	}
}
