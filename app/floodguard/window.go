package floodguard

import (
	"sync/atomic"
	"time"
)

// windowSlot is the width of one bucket of an hour's window.
const windowSlot = 5 * time.Minute

// windowSlots is how many buckets an hour's window has.
const windowSlots = int(time.Hour / windowSlot)

// countBits is how many low bits of a bucket hold its count; the bits
// above hold its slot number.
const countBits = 24

// countMask keeps a bucket's count (at most 16,777,215 messages in five
// minutes; more are not counted).
const countMask = 1<<countBits - 1

// hourWindow counts one source's messages over the last hour, in
// five-minute buckets, without a lock: each bucket is one atomic word
// holding its slot number and its count, so many workers count at once
// and adding or summing costs a few atomic operations, whatever the
// volume.
type hourWindow struct {
	slots [windowSlots]atomic.Uint64
}

// slotOf returns t's slot number.
func slotOf(t time.Time) uint64 { return uint64(t.Unix() / int64(windowSlot/time.Second)) }

// add counts one message queued at at, when at falls in the hour before
// now (a message queued earlier is not counted).
func (w *hourWindow) add(at, now time.Time) {
	s, cur := min(slotOf(at), slotOf(now)), slotOf(now)
	if s+uint64(windowSlots) <= cur {
		return
	}
	b := &w.slots[int(s%uint64(windowSlots))]
	for {
		v := b.Load()
		switch bs := v >> countBits; {
		case bs == s && v&countMask == countMask:
			return
		case bs == s:
			if b.CompareAndSwap(v, v+1) {
				return
			}
		case bs < s:
			if b.CompareAndSwap(v, s<<countBits|1) {
				return
			}
		default: // the bucket holds a later slot: at is over an hour old
			return
		}
	}
}

// total returns the messages counted in the hour before now.
func (w *hourWindow) total(now time.Time) int64 {
	cur := slotOf(now)
	var n int64
	for i := range w.slots {
		v := w.slots[i].Load()
		if s := v >> countBits; s+uint64(windowSlots) > cur && s <= cur {
			n += int64(v & countMask)
		}
	}
	return n
}
