package delivery

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

// idleReleaseAfter is how many outcomes the workers record before the
// process, once it finds the queue empty, returns its free memory to the
// system.
const idleReleaseAfter = 1000

// idleSettle is how long the queue stays empty after a release before
// the memory goes back once more: the background work a drain leaves
// (the pieces of the new addresses for the log search, written by the
// claims that find the queue empty) grows the heap again meanwhile.
const idleSettle = 2 * time.Second

// idleMemory gives the memory of a drain back to the system when the
// drain ends. While messages flow, the Go runtime keeps the heap it grew
// to (the hands' messages, their outcomes, the SQL rows) for the next
// ones, and returns it only slowly; once the queue is empty and no
// worker holds a message, one collection and release
// (debug.FreeOSMemory) brings the process back near its idle size. It
// runs at most once per idleReleaseAfter outcomes, so an idle service
// polling the queue never pays for it; idleSettle after it, when the
// queue is still empty, it runs once more.
type idleMemory struct {
	held     atomic.Int64 // messages in the workers' hands
	recorded atomic.Int64 // outcomes recorded since the last release
	// released is when the last release after a drain's worth was (Unix
	// nanoseconds), until the settled one follows it; 0: none pending.
	released atomic.Int64
	// free returns the memory; nil is debug.FreeOSMemory.
	free func()
	// now is the clock; nil is time.Now.
	now func() time.Time
}

// claimed counts n messages taken into a hand.
func (m *idleMemory) claimed(n int) { m.held.Add(int64(n)) }

// recordedOf counts n messages whose outcomes left a hand.
func (m *idleMemory) recordedOf(n int) {
	m.held.Add(-int64(n))
	m.recorded.Add(int64(n))
}

// idle is called by a worker that found the queue empty: when no worker
// holds a message and a drain's worth was recorded since the last
// release, the free memory goes back to the system, and once more when
// the queue is still empty idleSettle later.
func (m *idleMemory) idle() {
	if m.held.Load() != 0 {
		return
	}
	now := time.Now
	if m.now != nil {
		now = m.now
	}
	n := m.recorded.Load()
	if n >= idleReleaseAfter && m.recorded.CompareAndSwap(n, 0) {
		m.released.Store(now().UnixNano())
		m.release()
		return
	}
	if at := m.released.Load(); at != 0 && now().UnixNano()-at >= int64(idleSettle) && m.released.CompareAndSwap(at, 0) {
		m.release()
	}
}

// release returns the free memory to the system.
func (m *idleMemory) release() {
	if m.free != nil {
		m.free()
		return
	}
	debug.FreeOSMemory()
}
