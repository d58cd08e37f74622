package delivery

import (
	"runtime/debug"
	"sync/atomic"
)

// idleReleaseAfter is how many outcomes the workers record before the
// process, once it finds the queue empty, returns its free memory to the
// system.
const idleReleaseAfter = 1000

// idleMemory gives the memory of a drain back to the system when the
// drain ends. While messages flow, the Go runtime keeps the heap it grew
// to (the hands' messages, their outcomes, the SQL rows) for the next
// ones, and returns it only slowly; once the queue is empty and no
// worker holds a message, one collection and release
// (debug.FreeOSMemory) brings the process back near its idle size. It
// runs at most once per idleReleaseAfter outcomes, so an idle service
// polling the queue never pays for it.
type idleMemory struct {
	held     atomic.Int64 // messages in the workers' hands
	recorded atomic.Int64 // outcomes recorded since the last release
	// free returns the memory; nil is debug.FreeOSMemory.
	free func()
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
// release, the free memory goes back to the system.
func (m *idleMemory) idle() {
	if m.held.Load() != 0 {
		return
	}
	n := m.recorded.Load()
	if n < idleReleaseAfter || !m.recorded.CompareAndSwap(n, 0) {
		return
	}
	if m.free != nil {
		m.free()
		return
	}
	debug.FreeOSMemory()
}
