package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Tuning of the per-connection lanes.
const (
	// DefaultMaxInFlight is the default of Options.MaxInFlight.
	DefaultMaxInFlight = 1000
	// DefaultRateLimitPause is how long a connection pauses after a
	// rate-limit answer that named no Retry-After.
	DefaultRateLimitPause = 5 * time.Second
	// HandBackAfter is the longest a claimed message waits in the process
	// for its connection (a rate-limit pause, the token bucket, a spent
	// daily quota); a longer wait hands it back to the queue, due when the
	// wait ends, so a slow connection never holds messages under lease.
	HandBackAfter = 10 * time.Second
	// SendLimitsRefresh is how often a provider's own limits (SES
	// GetSendQuota) are read again.
	SendLimitsRefresh = time.Hour
	// sendLimitsRetry is how soon a failed read of them is tried again.
	sendLimitsRetry = time.Minute
)

// lane is one connection's gate in this process: at most conc.limit()
// sends in flight (the adaptive level, bounded by this process's share of
// max_concurrency), a token bucket of rate tokens per second (this
// process's share of max_per_second), a pause after a rate-limit answer,
// and the provider's daily quota.
type lane struct {
	mu      sync.Mutex
	conc    *adaptive
	active  int
	waiters []laneWaiter

	perSecond float64 // configured max_per_second for the whole fleet; 0: none
	rate      float64 // this process's tokens per second; 0: unlimited
	burst     float64
	tokens    float64
	last      time.Time
	paused    time.Time // no send starts before this

	limits     core.SendLimits
	limitsAt   time.Time // when limits were read; zero: never
	limitsNext time.Time // when to read them again
	sentSince  int64     // sends accepted since limitsAt
	fetchingMu sync.Mutex
	replicas   int
}

// lanes holds the lanes of the connections this process has sent through.
type lanes struct {
	mu sync.Mutex
	m  map[int64]*lane
	// remembered are the connections' fleet-wide levels read at start
	// (see levels.go); a new lane starts at its share.
	remembered map[int64]int
}

// get returns conn's lane configured from its settings and the number of
// live replicas.
func (ls *lanes) get(conn *core.Connection, replicas int) *lane {
	replicas = max(replicas, 1)
	ceiling := core.DefaultDriverConcurrency
	if d, ok := core.LookupDriver(conn.Driver); ok {
		ceiling = d.Concurrency(conn.Settings)
	}
	limits := core.RateLimitsOf(conn.Settings)
	pinned := !limits.Adaptive
	ls.mu.Lock()
	ln, ok := ls.m[conn.ID]
	if !ok {
		if ls.m == nil {
			ls.m = map[int64]*lane{}
		}
		start := 0
		if n := ls.remembered[conn.ID]; n > 0 {
			start = shareOf(n, replicas)
		}
		ln = &lane{conc: newAdaptive(shareOf(ceiling, replicas), start, pinned)}
		ls.m[conn.ID] = ln
	}
	ls.mu.Unlock()
	perSecond := float64(limits.PerSecond)
	ln.configure(ceiling, pinned, perSecond, replicas)
	return ln
}

// shareOf returns one replica's share of n split across replicas,
// rounded up (at least 1).
func shareOf(n, replicas int) int {
	return max((n+replicas-1)/max(replicas, 1), 1)
}

// configure applies the concurrency ceiling (max_concurrency split across
// replicas; the level pinned to it when adaptive_concurrency is off) and
// the rate (split across replicas; the provider's MaxSendRate when
// max_per_second is 0).
func (ln *lane) configure(ceiling int, pinned bool, perSecond float64, replicas int) {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	ln.replicas = max(replicas, 1)
	if ln.conc == nil {
		ln.conc = newAdaptive(shareOf(ceiling, ln.replicas), 0, pinned)
	}
	ln.conc.setCeiling(shareOf(ceiling, ln.replicas), pinned)
	ln.perSecond = perSecond
	ln.applyRateLocked()
	ln.grantLocked()
}

func (ln *lane) applyRateLocked() {
	base := ln.perSecond
	if base <= 0 && ln.limits.MaxPerSecond > 0 {
		base = ln.limits.MaxPerSecond
	}
	rate := base / float64(ln.replicas)
	if rate == ln.rate {
		return
	}
	ln.rate = rate
	ln.burst = max(1, rate/10)
	ln.tokens = min(ln.tokens, ln.burst)
	if ln.last.IsZero() {
		ln.tokens = ln.burst
	}
}

// acquire takes one of the lane's send slots, waiting while the level's
// worth are in use, and returns the controller's epoch to report the
// send's outcome with (finished); it fails when stop ends first.
func (ln *lane) acquire(stop context.Context) (int64, error) {
	ln.mu.Lock()
	if ln.active < ln.conc.limit() && len(ln.waiters) == 0 {
		ln.active++
		epoch := ln.conc.epoch
		ln.mu.Unlock()
		return epoch, nil
	}
	ch := make(chan struct{})
	ln.waiters = append(ln.waiters, laneWaiter{granted: ch})
	ln.mu.Unlock()
	select {
	case <-ch:
		ln.mu.Lock()
		defer ln.mu.Unlock()
		return ln.conc.epoch, nil
	case <-stop.Done():
		ln.mu.Lock()
		defer ln.mu.Unlock()
		for i, w := range ln.waiters {
			if w.granted == ch {
				ln.waiters = append(ln.waiters[:i], ln.waiters[i+1:]...)
				return 0, stop.Err()
			}
		}
		// Granted while stopping: give the slot back.
		ln.active--
		ln.grantLocked()
		return 0, stop.Err()
	}
}

// finished tells the lane's controller how a send started in epoch
// ended after took: a success may raise the level, a slow-down (see
// slowDownSignal) lowers it. It reports whether a slow-down found the level already at
// its floor (1, or pinned by adaptive_concurrency off), when the caller
// pauses the connection instead.
func (ln *lane) finished(epoch int64, took time.Duration, err error) (atFloor bool) {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	switch {
	case err == nil:
		ln.conc.succeeded(time.Now(), took, len(ln.waiters) > 0)
		ln.grantLocked()
	case slowDownSignal(err):
		return ln.conc.slowedDown(epoch, time.Now())
	}
	return false
}

// level returns the lane's concurrency level and whether it moved since
// the last call.
func (ln *lane) level() (int, bool) {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	changed := ln.conc.changed
	ln.conc.changed = false
	return ln.conc.limit(), changed
}

// release gives a send slot back.
func (ln *lane) release() {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	ln.active--
	ln.grantLocked()
}

func (ln *lane) grantLocked() {
	for ln.active < ln.conc.limit() && len(ln.waiters) > 0 {
		w := ln.waiters[0]
		ln.waiters[0] = laneWaiter{}
		ln.waiters = ln.waiters[1:]
		ln.active++
		if w.start != nil {
			go w.start(&heldSlot{ln: ln, epoch: ln.conc.epoch})
		} else {
			close(w.granted)
		}
	}
}

// reserve takes a token from the bucket and returns how long the caller
// must wait before sending (the token's time, or the end of a pause).
func (ln *lane) reserve(now time.Time) time.Duration {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	var wait time.Duration
	if ln.rate > 0 {
		if !ln.last.IsZero() {
			ln.tokens = min(ln.burst, ln.tokens+ln.rate*now.Sub(ln.last).Seconds())
		}
		ln.last = now
		ln.tokens--
		if ln.tokens < 0 {
			wait = time.Duration(-ln.tokens / ln.rate * float64(time.Second))
		}
	}
	if p := ln.paused.Sub(now); p > wait {
		wait = p
	}
	return wait
}

// unreserve returns a token taken by reserve that was not used.
func (ln *lane) unreserve() {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if ln.rate > 0 {
		ln.tokens = min(ln.burst, ln.tokens+1)
	}
}

// pausedUntil returns the end of the lane's pause (zero when none).
func (ln *lane) pausedUntil() time.Time {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	return ln.paused
}

// pause stops new sends until until.
func (ln *lane) pause(until time.Time) {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if until.After(ln.paused) {
		ln.paused = until
	}
}

// sent counts a send the provider accepted against the daily quota.
func (ln *lane) sent() {
	ln.mu.Lock()
	ln.sentSince++
	ln.mu.Unlock()
}

// quotaSpentUntil returns when this process may send again through the
// lane when its share of the provider's daily quota is spent (the next
// read of the limits), or zero while some is left.
func (ln *lane) quotaSpentUntil() time.Time {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if ln.limits.Max24Hour <= 0 || ln.limitsAt.IsZero() {
		return time.Time{}
	}
	left := (ln.limits.Max24Hour - ln.limits.SentLast24Hours) / int64(ln.replicas)
	if ln.sentSince < left {
		return time.Time{}
	}
	return ln.limitsNext
}

// readLimits reads the provider's own limits through tr when it can
// report them and they are older than SendLimitsRefresh (one reader at a
// time; the others go on with what is known).
func (ln *lane) readLimits(ctx context.Context, tr core.Transport, s *engine) {
	r, ok := tr.(core.SendLimitReader)
	if !ok {
		return
	}
	ln.mu.Lock()
	due := !time.Now().Before(ln.limitsNext)
	ln.mu.Unlock()
	if !due || !ln.fetchingMu.TryLock() {
		return
	}
	defer ln.fetchingMu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	lim, err := r.SendLimits(rctx)
	cancel()
	now := time.Now()
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if err != nil {
		ln.limitsNext = now.Add(sendLimitsRetry)
		s.o.Logger.Warn("read the provider's sending limits", "err", err)
		return
	}
	ln.limits, ln.limitsAt, ln.limitsNext, ln.sentSince = lim, now, now.Add(SendLimitsRefresh), 0
	ln.rate = -1 // force applyRateLocked to recompute
	ln.applyRateLocked()
}
