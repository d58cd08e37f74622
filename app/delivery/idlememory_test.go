package delivery

import (
	"fmt"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// TestIdleMemoryReleasesOnceADrainEnds: the memory goes back when a
// worker finds the queue empty, nobody holds a message and a drain's
// worth of outcomes was recorded since the last release; not while
// messages are held, not for a few messages, and once per drain, then
// once more when the queue is still empty idleSettle later.
func TestIdleMemoryReleasesOnceADrainEnds(t *testing.T) {
	tests := []struct {
		name              string
		claimed, recorded []int // in turn: claimed[i] then recorded[i]
		idles             int
		every             time.Duration // between the idle calls
		want              int
	}{
		{name: "a drain ends", claimed: []int{600, 600}, recorded: []int{600, 600}, idles: 1, want: 1},
		{name: "idle again: once per drain", claimed: []int{1200}, recorded: []int{1200}, idles: 3, want: 1},
		{name: "idle past the settling time: once more", claimed: []int{1200}, recorded: []int{1200}, idles: 10, every: idleSettle / 2, want: 2},
		{name: "messages still held", claimed: []int{1200}, recorded: []int{1100}, idles: 4, every: idleSettle, want: 0},
		{name: "fewer than a drain's worth", claimed: []int{999}, recorded: []int{999}, idles: 4, every: idleSettle, want: 0},
		{name: "no message at all", idles: 5, every: idleSettle, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			freed := 0
			clock := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
			m := idleMemory{free: func() { freed++ }, now: func() time.Time { return clock }}
			for i := range tc.claimed {
				m.claimed(tc.claimed[i])
				m.recordedOf(tc.recorded[i])
			}
			for range tc.idles {
				m.idle()
				clock = clock.Add(tc.every)
			}
			if freed != tc.want {
				t.Fatalf("released %d times, want %d", freed, tc.want)
			}
		})
	}
}

// TestRunReleasesMemoryAfterADrain: a service that delivers more than a
// drain's worth of messages gives its memory back once the queue is
// empty, and holds no message then.
func TestRunReleasesMemoryAfterADrain(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.svc.o.Workers, e.svc.o.BatchSize = 4, 50
	e.svc = New(e.svc.o)
	released := make(chan struct{}, 1)
	e.svc.memory.free = func() {
		select {
		case released <- struct{}{}:
		default:
		}
	}
	const n = idleReleaseAfter + 200
	for i := range n {
		e.enqueue(t, &core.Log{Message: msg(fmt.Sprintf("d%d", i))})
	}
	e.run(t, n)
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("no release after the drain")
	}
	if h := e.svc.memory.held.Load(); h != 0 {
		t.Fatalf("%d messages held after the drain", h)
	}
}
