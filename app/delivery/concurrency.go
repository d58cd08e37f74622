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
	// minWindow is the shortest window measured: a fast connection's
	// windows span more sends, so that their throughput is not noise.
	minWindow = 100 * time.Millisecond
	// revertBelow: a step up whose window carries less than this share
	// of the throughput before it is undone.
	revertBelow = 0.9
)

// adaptive is one connection's concurrency controller in one process:
// how many of its sends may be in flight at once (level, between 1 and
// ceiling). It is additive increase, multiplicative decrease, as TCP's
// congestion window and Postfix's destination concurrency feedback are:
//
//   - A window is level finished sends, and at least minWindow; its
//     throughput is the level over the window's mean send time. A step
//     up is measured by the window after the next (the next still holds
//     sends of the old level). While sends wait for a slot (more is asked
//     of the connection than the level lets through), the level steps up
//     again when the step's window beat the one before it by at least
//     half of what the step could give: it doubles until the first time
//     it does not (slow start) or the server first slows it down, and
//     grows by one after that. A step that gained less holds; one that
//     lost more than a tenth is undone; a held level tries a step up
//     again after holdWindows windows.
//   - A slow-down (a rate-limit answer, SMTP 421/451 4.7/452, HTTP 429,
//     a refused connection, a timeout) halves the level (floor 1), once
//     per cohort: the sends started before the decrease do not halve it
//     again. The level it came at is remembered: the step back up to it
//     waits for probeAfter successes (or probeEvery) since, and a probe
//     that is slowed down again goes back to the level below it.
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
	winTook   time.Duration
	winStart  time.Time
	saturated bool
	rateBelow float64
	held      int
	// stepFrom is the level before the step up the next window measures
	// (0: none pending).
	stepFrom float64
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

// succeeded counts a send that succeeded after took; waiting says
// whether sends were waiting for a slot when it finished.
func (c *adaptive) succeeded(now time.Time, took time.Duration, waiting bool) {
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
	c.winTook += took
	if c.winDone < c.limit() || now.Sub(c.winStart) < minWindow {
		return
	}
	// The throughput the level carries while it is used: level sends in
	// flight that each take the window's mean time (Little's law); the
	// gaps while the engine claims and records do not count.
	mean := max(c.winTook.Seconds()/float64(c.winDone), 1e-6)
	rate := c.level / mean
	saturated := c.saturated
	c.winDone, c.winTook, c.winStart, c.saturated = 0, 0, now, false
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
		c.rateBelow, c.stepFrom, c.held = 0, 0, 0
		return
	}
	if from := c.stepFrom; from > 0 {
		// This window measured the last step up, from from.
		c.stepFrom = 0
		switch {
		case rate < c.rateBelow*revertBelow:
			// The step cost throughput: back to where it was.
			c.level, c.slowStart, c.held, c.changed, c.settling = from, false, 0, true, true
			return
		case rate < c.rateBelow*(1+0.5*(c.level-from)/from):
			// Less than half of what the step could give: hold here.
			c.slowStart, c.held, c.rateBelow = false, 0, rate
			return
		}
	} else if c.rateBelow > 0 && c.held < holdWindows {
		c.held++
		return
	}
	c.stepUp(rate)
}

// stepUp raises the level from the window just measured at rate: twice
// in slow start, else by one; to a level that was slowed down only after
// probeAfter successes or probeEvery; never past the ceiling.
func (c *adaptive) stepUp(rate float64) {
	next := c.level + 1
	if c.slowStart {
		next = c.level * 2
	}
	if c.avoid > 0 && int(next) >= c.avoid && c.clean < probeAfter && c.winStart.Sub(c.avoidSince) < probeEvery {
		next = float64(c.avoid - 1)
	}
	next = min(next, float64(c.ceiling))
	c.rateBelow, c.held = rate, 0
	if next <= c.level {
		return
	}
	c.stepFrom = c.level
	c.level, c.changed, c.settling = next, true, true
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
	if c.avoid > 0 && c.limit() >= c.avoid {
		// A probe of the level that was slowed down before failed: back
		// to the one below it, which held.
		c.level = float64(c.avoid - 1)
	} else {
		c.avoid = c.limit()
		c.level = max(1, float64(int(c.level)/2))
	}
	c.avoidSince = now
	c.epoch++
	c.slowStart = false
	c.clean, c.winDone, c.winTook, c.winStart, c.saturated, c.rateBelow, c.stepFrom, c.held, c.settling = 0, 0, 0, time.Time{}, false, 0, 0, 0, false
	c.changed = true
	return false
}
