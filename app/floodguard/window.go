package floodguard

import "time"

// windowSlot is the width of one bucket of an hour's window.
const windowSlot = 5 * time.Minute

// windowSlots is how many buckets an hour's window has.
const windowSlots = int(time.Hour / windowSlot)

// hourWindow counts one source's messages over the last hour, in
// five-minute buckets: adding and summing cost a few array reads,
// whatever the volume.
type hourWindow struct {
	slots [windowSlots]struct {
		at int64 // the bucket's slot number (unix time / windowSlot)
		n  int64
	}
}

// slotOf returns t's slot number.
func slotOf(t time.Time) int64 { return t.Unix() / int64(windowSlot/time.Second) }

// add counts one message queued at at, when at falls in the hour before
// now (a message queued earlier is not counted).
func (w *hourWindow) add(at, now time.Time) {
	s, cur := slotOf(at), slotOf(now)
	if s > cur {
		s = cur
	}
	if s <= cur-int64(windowSlots) {
		return
	}
	b := &w.slots[int(s%int64(windowSlots))]
	if b.at != s {
		b.at, b.n = s, 0
	}
	b.n++
}

// total returns the messages counted in the hour before now.
func (w *hourWindow) total(now time.Time) int64 {
	cur := slotOf(now)
	var n int64
	for _, b := range w.slots {
		if b.at > cur-int64(windowSlots) && b.at <= cur {
			n += b.n
		}
	}
	return n
}
