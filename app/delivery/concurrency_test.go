package delivery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"syscall"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// simServer drives a controller the way the engine does, against a
// simulated server: each round lasts latency, the controller's level of
// sends start together, and those past the server's session limit (0:
// none) are answered "slow down" while the rest succeed; at most
// perSecond (0: unlimited) are served per second, which stretches the
// round.
type simServer struct {
	latency   time.Duration
	sessions  int
	perSecond float64
}

// run plays rounds rounds on c and returns the sends accepted and slowed
// down in the rounds after skip, and the level after each round.
func (s simServer) run(c *adaptive, rounds, skip int) (ok, slowed int, levels []int) {
	now := time.Unix(1000, 0)
	for r := range rounds {
		n := c.limit()
		epoch := c.epoch
		served := n
		if s.sessions > 0 {
			served = min(n, s.sessions)
		}
		round := s.latency
		if s.perSecond > 0 {
			round = max(round, time.Duration(float64(served)/s.perSecond*float64(time.Second)))
		}
		for i := range n {
			if i >= served {
				c.slowedDown(epoch, now)
				if r >= skip {
					slowed++
				}
				continue
			}
			// The sends of a round finish spread over it; sends are
			// always waiting (a deep queue).
			c.succeeded(now.Add(round*time.Duration(i+1)/time.Duration(served)), round, true)
			if r >= skip {
				ok++
			}
		}
		now = now.Add(round)
		levels = append(levels, c.limit())
	}
	return ok, slowed, levels
}

// TestAdaptiveClimbsUnderLatency: against a server that takes 100 ms per
// message and any number at once, the level climbs from its start to the
// ceiling; a pinned controller stays at its ceiling.
func TestAdaptiveClimbsUnderLatency(t *testing.T) {
	c := newAdaptive(100, 0, false)
	if c.limit() != StartConcurrency {
		t.Fatalf("starts at %d, want %d", c.limit(), StartConcurrency)
	}
	_, _, levels := simServer{latency: 100 * time.Millisecond}.run(c, 40, 0)
	if c.limit() != 100 {
		t.Fatalf("level after 40 rounds %d, want the ceiling 100 (levels %v)", c.limit(), levels)
	}
	p := newAdaptive(30, 0, true)
	simServer{latency: 100 * time.Millisecond, sessions: 5}.run(p, 20, 0)
	if p.limit() != 30 {
		t.Fatalf("pinned level %d, want its ceiling 30", p.limit())
	}
	if !p.slowedDown(p.epoch, time.Now()) {
		t.Fatal("a pinned level is at its floor: the caller must pause")
	}
}

// TestAdaptiveHoldsWhenThroughputStops: against a server that serves 200
// messages a second whatever the concurrency (100 ms each: 20 at once
// carry it all), the level stops near where the throughput stops
// growing instead of running to the ceiling.
func TestAdaptiveHoldsWhenThroughputStops(t *testing.T) {
	c := newAdaptive(500, 0, false)
	_, _, levels := simServer{latency: 100 * time.Millisecond, perSecond: 200}.run(c, 200, 0)
	if c.limit() > 60 {
		t.Fatalf("level %d after 200 rounds against a server capped at 20 useful sends, want it held near 40 (levels %v)", c.limit(), levels)
	}
}

// TestAdaptiveSettlesUnderSessionLimit: against a server that takes 5
// sends at once and answers "slow down" to the sixth, the level comes
// down from its start (or up from a remembered 1, which waits probeAfter
// successes before it tries 2), settles at 5 or just below (never above
// 6, the probe), and after settling fewer than 1 % of the attempts are
// slowed down.
func TestAdaptiveSettlesUnderSessionLimit(t *testing.T) {
	for _, tc := range []struct{ start, settle int }{{0, 20}, {40, 20}, {1, 600}} {
		t.Run(fmt.Sprint(tc.start), func(t *testing.T) {
			c := newAdaptive(100, tc.start, false)
			settle := tc.settle
			ok, slowed, levels := simServer{latency: 20 * time.Millisecond, sessions: 5}.run(c, 2000+settle, settle)
			if frac := float64(slowed) / float64(ok+slowed); frac >= 0.01 {
				t.Errorf("%d of %d attempts slowed down after round %d (%.2f %%), want under 1 %%", slowed, ok+slowed, settle, 100*frac)
			}
			at5 := 0
			for _, l := range levels[settle:] {
				if l > 6 {
					t.Fatalf("level %d after settling, want at most 6 (levels %v)", l, levels[:settle+40])
				}
				if l == 5 {
					at5++
				}
			}
			if at5*10 < len(levels[settle:])*9 {
				t.Errorf("level at 5 in %d of %d rounds after settling, want at least 90 %% (levels %v)", at5, len(levels[settle:]), levels[:settle+40])
			}
		})
	}
}

// TestSlowDownHalvesOncePerCohort: slow-downs of sends started before a
// decrease do not lower the level again; one of a later send does; at 1
// the caller is told to pause.
func TestSlowDownHalvesOncePerCohort(t *testing.T) {
	c := newAdaptive(100, 40, false)
	old := c.epoch
	for range 10 {
		if c.slowedDown(old, time.Now()) {
			t.Fatal("at floor at 40")
		}
	}
	if c.limit() != 20 {
		t.Fatalf("level %d after one cohort's slow-downs, want 20", c.limit())
	}
	c.slowedDown(c.epoch, time.Now())
	if c.limit() != 10 {
		t.Fatalf("level %d after a later send's slow-down, want 10", c.limit())
	}
	for c.limit() > 1 {
		c.slowedDown(c.epoch, time.Now())
	}
	if !c.slowedDown(c.epoch, time.Now()) {
		t.Fatal("a slow-down at level 1 must report the floor")
	}
}

// TestSlowDownSignal: the failures that lower a connection's level.
func TestSlowDownSignal(t *testing.T) {
	timeout := &net.OpError{Op: "dial", Net: "tcp", Err: &timeoutErr{}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"SMTP 421", core.RateLimited(&textproto.Error{Code: 421, Msg: "4.7.0 too many sessions"}, 0), true},
		{"HTTP 429", core.HTTPResponseError(429, nil, "slow down"), true},
		{"SMTP 452 storage", core.Temporary(errors.New("smtp: send 127.0.0.1:25: 452 4.3.1 Insufficient system storage")), true},
		{"SMTP 452 recipients", core.Temporary(errors.New("smtp: send 127.0.0.1:25: 452 4.5.3 Too many recipients")), false},
		{"refused", core.Temporary(fmt.Errorf("smtp: connect: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED})), true},
		{"timeout", core.Temporary(fmt.Errorf("smtp: connect: %w", timeout)), true},
		{"deadline", core.Temporary(fmt.Errorf("send: %w", context.DeadlineExceeded)), true},
		{"own pool busy", core.Temporary(fmt.Errorf("smtp: waiting for a connection to x: %w", context.DeadlineExceeded)), false},
		{"greylisted", core.Temporary(errors.New("smtp: send: 450 4.2.0 Greylisted, try later")), false},
		{"refused recipient", core.Permanent(errors.New("smtp: send: 550 5.1.1 no such user")), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := slowDownSignal(tc.err); got != tc.want {
				t.Fatalf("slowDownSignal(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestLaneStartsAtRememberedShare: a connection's lane starts at its
// share of the fleet's remembered level, and at StartConcurrency (within
// its share of the ceiling) when none is remembered.
func TestLaneStartsAtRememberedShare(t *testing.T) {
	ls := &lanes{remembered: map[int64]int{1: 6}}
	settings := core.Settings{core.SettingMaxConcurrency: 40}
	// An unknown driver has the default ceiling, 10: 5 for each of two.
	remembered := ls.get(&core.Connection{ID: 1, Driver: "none", Settings: settings}, 2)
	fresh := ls.get(&core.Connection{ID: 2, Driver: "none", Settings: settings}, 2)
	if got, _ := remembered.level(); got != 3 {
		t.Errorf("remembered 6 across 2 replicas: starts at %d, want 3", got)
	}
	if got, _ := fresh.level(); got != 5 {
		t.Errorf("nothing remembered, ceiling 10 across 2 replicas: starts at %d, want 5", got)
	}
}

// TestAdaptiveRecoversAfterOutage: refused connections bring the level
// down to 1; once the server answers again the level climbs back (the
// probe past the levels of the outage waits probeEvery at most, not 500
// sends one at a time).
func TestAdaptiveRecoversAfterOutage(t *testing.T) {
	c := newAdaptive(100, 20, false)
	at := time.Unix(1000, 0)
	for range 10 {
		c.slowedDown(c.epoch, at)
	}
	if c.limit() != 1 {
		t.Fatalf("level %d after an outage, want 1", c.limit())
	}
	// 45 s at 100 ms per message: 450 sends at level 1 would not reach
	// probeAfter; probeEvery lets the level climb after 30 s.
	_, _, levels := simServer{latency: 100 * time.Millisecond}.run(c, 450, 0)
	if c.limit() < 20 {
		t.Fatalf("level %d 45 s after the outage, want back to 20 or more (levels %v)", c.limit(), levels)
	}
}
