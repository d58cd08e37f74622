package delivery

// A claimed message waits for its connection's send slot as an entry in
// the lane's queue, not as a goroutine: the hand asks the lane of the
// connection the message will most likely go through (its own, else the
// default) for a slot ahead of the decision, and the message's goroutine
// starts when the slot is granted, holding it (heldSlot). The stages
// then run as before, and the attempt sends in the held slot when it goes
// through that lane; through another (a chooser's, a site's own
// connection) it gives the held slot back first and waits for that
// lane's as any attempt does. So the goroutines of a drain are about the
// connections' send slots in use, not the messages in hand (1,000 and
// more, each with its stack, while a connection sends 10 at a time).

// laneWaiter is one entry of a lane's queue for a send slot: an attempt
// blocked in acquire (granted is closed when it gets the slot), or a
// message whose goroutine has not started (start is run in a new
// goroutine with the slot; with nil when its hand stops first).
type laneWaiter struct {
	granted chan struct{}
	hand    *hand
	start   func(*heldSlot)
}

// heldSlot is a lane's send slot granted to a message before its
// decision. Only the message's goroutine uses it.
type heldSlot struct {
	ln    *lane
	epoch int64
	// used: the attempt took it (its release is the attempt's); given:
	// it went back to the lane unused.
	used, given bool
}

// take returns the slot's epoch when it is a slot of ln not yet used or
// given back, and marks it used.
func (hs *heldSlot) take(ln *lane) (int64, bool) {
	if hs == nil || hs.ln != ln || hs.used || hs.given {
		return 0, false
	}
	hs.used = true
	return hs.epoch, true
}

// giveBack returns the slot to its lane unless an attempt took it or it
// went back already; nil does nothing.
func (hs *heldSlot) giveBack() {
	if hs == nil || hs.used || hs.given {
		return
	}
	hs.given = true
	hs.ln.release()
}

// startWhenFree runs start in a new goroutine with one of the lane's
// send slots: at once when one is free and nobody waits, else when the
// slot is granted in its turn. When h stops first, h's waiters are
// started with no slot (dropWaitersOf).
func (ln *lane) startWhenFree(h *hand, start func(*heldSlot)) {
	ln.mu.Lock()
	if ln.active < ln.conc.limit() && len(ln.waiters) == 0 {
		ln.active++
		epoch := ln.conc.epoch
		ln.mu.Unlock()
		go start(&heldSlot{ln: ln, epoch: epoch})
		return
	}
	ln.waiters = append(ln.waiters, laneWaiter{hand: h, start: start})
	ln.mu.Unlock()
	h.waitingIn(ln)
}

// dropWaitersOf takes h's waiters out of the lane's queue and starts each
// with no slot.
func (ln *lane) dropWaitersOf(h *hand) {
	var dropped []func(*heldSlot)
	ln.mu.Lock()
	kept := ln.waiters[:0]
	for _, w := range ln.waiters {
		if w.hand == h && w.start != nil {
			dropped = append(dropped, w.start)
			continue
		}
		kept = append(kept, w)
	}
	clear(ln.waiters[len(kept):])
	ln.waiters = kept
	ln.grantLocked()
	ln.mu.Unlock()
	for _, start := range dropped {
		go start(nil)
	}
}
