package delivery

import (
	"time"
)

// Tuning of the adaptive concurrency (see docs/delivery.md "Concurrency
// that adapts").
const (
	// StartConcurrency is the level a connection starts at in a process
	// when no level is remembered for it (at most its ceiling).
	StartConcurrency = 10
	// probeAfter is how many sends must succeed at a level just below one
	// where the server last asked to slow down before that level is tried
	// again: one deferred attempt per probe stays under 1 % of attempts.
	probeAfter = 500
	// probeEvery bounds that wait in time, so that a connection brought
	// down to one or two sends at once by an outage does not crawl for
	// 500 sends once the server is back.
	probeEvery = 30 * time.Second
	// holdWindows is how many windows without a throughput gain the level
	// holds before it tries one step up anyway (the server may have
	// become faster since).
	holdWindows = 16
)

// adaptive is one connection's concurrency controller in one process:
// how many of its sends may be in flight at once (level, between 1 and
// ceiling). It is additive increase, multiplicative decrease, as TCP's
// congestion window and Postfix's destination concurrency feedback are:
//
//   - A window is level finished sends (the first after a step up is
//     not measured: it still holds sends of the old level). At the end
//     of a window during
//     which sends waited for a slot (more was asked of the connection than
//     the level let through), the level grows when the window's
//     throughput beat the one measured before the last step up by at
//     least half of what the step could give: it doubles until the first
//     time it does not (slow start) or the server first slows it down,
//     and grows by one per window after that. A level that gains nothing
//     holds (and tries a step up after holdWindows windows).
//   - A slow-down (a rate-limit answer, SMTP 421/451 4.7/452, HTTP 429,
//     a refused connection, a timeout) halves the level (floor 1), once
//     per cohort: the sends started before the decrease do not halve it
//     again. The level it came at is remembered: the step back up to it
//     waits for probeAfter successes (or probeEvery) since.
//
// A pinned controller (adaptive_concurrency off) stays at its ceiling.
// Its fields are guarded by the lane's mutex.
type adaptive struct {
	pinned  bool
	ceiling int
	level   float64
	// slowStart doubles the level per window; it ends at the first
	// slow-down or window without gain.
	slowStart bool
	// avoid is the level the last slow-down came at (0: none known); a
	// step up to it waits for probeAfter successes or probeEvery since
	// avoidSince.
	avoid      int
	avoidSince time.Time
	// epoch counts the decreases; a send carries the epoch it started in.
	epoch int64
	// clean counts the sends that succeeded since the last decrease.
	clean int
	// The current window: sends finished in it, when it began, whether a
	// send waited for a slot during it; rateBelow is the throughput
	// measured before the last step up (0: none yet), held the windows
	// since without gain.
	winDone   int
	winStart  time.Time
	saturated bool
	rateBelow float64
	held      int
	// settling: the level just rose; the window under way still holds
	// sends started under the old one, so it is not measured.
	settling bool
	// changed is set when the level moves, for the state writer.
	changed bool
}

// newAdaptive returns a controller bounded by ceiling at the level
// remembered from a previous run (start), or at StartConcurrency when
// start is 0. A remembered level is taken as found: it grows by one per
// window (no slow start), and past it only after probeAfter successes,
// as if the server had slowed the connection down just above it.
func newAdaptive(ceiling, start int, pinned bool) *adaptive {
	c := &adaptive{slowStart: start <= 0}
	if start <= 0 {
		start = StartConcurrency
	} else {
		c.avoid = start + 1
	}
	c.setCeiling(ceiling, pinned)
	c.level = float64(min(start, c.ceiling))
	if pinned {
		c.level = float64(c.ceiling)
	}
	return c
}

// setCeiling applies a new ceiling (max_concurrency's share of this
// process) and whether the level is pinned to it.
func (c *adaptive) setCeiling(ceiling int, pinned bool) {
	c.ceiling = max(ceiling, 1)
	c.pinned = pinned
	switch {
	case pinned:
		c.level = float64(c.ceiling)
	case c.level > float64(c.ceiling):
		c.level = float64(c.ceiling)
	case c.level < 1:
		c.level = 1
	}
}

// limit returns how many sends may be in flight now.
func (c *adaptive) limit() int {
	return max(int(c.level), 1)
}

// succeeded counts a send that succeeded; waiting says whether sends
// were waiting for a slot when it finished.
func (c *adaptive) succeeded(now time.Time, waiting bool) {
	if c.pinned {
		return
	}
	c.clean++
	if c.avoid > 0 && c.avoidSince.IsZero() {
		c.avoidSince = now // a remembered level: the wait starts now
	}
	c.saturated = c.saturated || waiting
	if c.winStart.IsZero() {
		// The first window starts at its first finished send.
		c.winStart = now
		return
	}
	c.winDone++
	if c.winDone < c.limit() {
		return
	}
	el := now.Sub(c.winStart).Seconds()
	rate := float64(c.winDone) / max(el, 1e-6)
	saturated := c.saturated
	c.winDone, c.winStart, c.saturated = 0, now, false
	if c.settling {
		// Sends started under the old level finished in this window:
		// measure the next one.
		c.settling = false
		return
	}
	if c.avoid > 0 && c.limit() >= c.avoid {
		// A window passed at the level that was slowed down: the server
		// takes it now.
		c.avoid = 0
	}
	if !saturated {
		// The connection was not asked for more: nothing to learn.
		c.rateBelow, c.held = 0, 0
		return
	}
	next := c.level + 1
	gain := 1 + 0.5/c.level // half of what one more send in flight gives
	if c.slowStart {
		next = c.level * 2
		gain = 1.5
	}
	switch {
	case c.rateBelow == 0 || rate >= c.rateBelow*gain || c.held >= holdWindows:
	default:
		c.held++
		c.slowStart = false
		return
	}
	if c.avoid > 0 && int(next) >= c.avoid {
		if c.clean < probeAfter && now.Sub(c.avoidSince) < probeEvery {
			next = float64(c.avoid - 1)
		}
		if next <= c.level {
			return
		}
	}
	next = min(next, float64(c.ceiling))
	if next == c.level {
		return
	}
	c.level, c.rateBelow, c.held, c.changed, c.settling = next, rate, 0, true, true
}

// slowedDown applies a slow-down answer, at now, to a send started in
// epoch. It reports whether the level was already at its floor (1, or
// pinned), so that the caller pauses the connection instead.
func (c *adaptive) slowedDown(epoch int64, now time.Time) (atFloor bool) {
	if c.pinned {
		return true
	}
	if c.limit() <= 1 {
		return true
	}
	if epoch != c.epoch {
		// A send of the cohort the last decrease answered.
		return false
	}
	c.avoid, c.avoidSince = c.limit(), now
	c.level = max(1, float64(int(c.level)/2))
	c.epoch++
	c.slowStart = false
	c.clean, c.winDone, c.winStart, c.saturated, c.rateBelow, c.held = 0, 0, time.Time{}, false, 0, 0
	c.changed = true
	return false
}
