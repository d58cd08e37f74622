package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// hand is the messages one worker holds under its lease: being sent, or
// decided and waiting for their outcome to be recorded. Only its worker
// calls start, gather and flush.
type hand struct {
	s     *pool
	owner string
	// stop ends the claims; the messages not yet sending are handed
	// back. work outlives it: what is in hand is finished and recorded.
	stop, work context.Context
	// results carries each decided message; pointers, because it has
	// room for the largest hand and an outcome is hundreds of bytes.
	results chan *decided
	sending int // started and not yet gathered
	// size is how many messages the worker holds (see resize).
	size int

	mu    sync.Mutex
	ids   map[int64]int // held (renewed while in hand): the message's bytes
	bytes int           // the bytes of the messages held
	// waitLanes are the lanes whose queue has held this hand's messages
	// (heldslot.go); when stop ends, its waiters there are handed back.
	waitLanes map[*lane]struct{}
	done      chan struct{}
	renewDone sync.WaitGroup
}

// decided is one message's outcome and the alerts it calls for.
type decided struct {
	out    core.LogOutcome
	alerts []core.Alert
}

// newHand returns an empty hand for owner whose lease renewal runs until
// close.
func (s *pool) newHand(stop context.Context, owner string) *hand {
	h := &hand{
		s: s, owner: owner, stop: stop, work: context.WithoutCancel(stop),
		results: make(chan *decided, s.o.BatchSize*handGrowth),
		size:    s.o.BatchSize,
		ids:     map[int64]int{},
		done:    make(chan struct{}),
	}
	h.renewDone.Go(h.renew)
	return h
}

// close stops the lease renewal.
func (h *hand) close() {
	close(h.done)
	h.renewDone.Wait()
}

// renew extends the lease on the messages in hand every Lease/3.
func (h *hand) renew() {
	t := time.NewTicker(h.s.o.Lease / 3)
	defer t.Stop()
	stopped := h.stop.Done()
	for {
		select {
		case <-h.done:
			return
		case <-stopped:
			stopped = nil
			h.dropWaiters()
		case <-t.C:
			h.mu.Lock()
			ids := make([]int64, 0, len(h.ids))
			for id := range h.ids {
				ids = append(ids, id)
			}
			h.mu.Unlock()
			if len(ids) == 0 {
				continue
			}
			if _, err := h.s.o.Logs.ExtendLeases(h.work, h.owner, ids, h.s.o.Lease); err != nil {
				h.s.o.Logger.Warn("extend lease", "err", err)
			}
		}
	}
}

// start sends logs, claimed under the hand's owner, each in its own
// goroutine, started when its connection's lane grants it a send slot
// (heldslot.go); their outcomes come to gather. The settings and connections are read once
// for them, and their recipients checked against the suppression list in
// one call. When the settings cannot be read (database down) the logs
// are left to their lease: the reaper requeues them, and start reports
// false.
func (h *hand) start(logs []*core.Log) bool {
	if len(logs) == 0 {
		return true
	}
	s := h.s
	st, err := s.loadSettings(h.work)
	if err != nil {
		s.o.Logger.Warn("process batch", "err", err)
		return false
	}
	s.memory.claimed(len(logs))
	h.mu.Lock()
	for _, l := range logs {
		n := messageBytes(&l.Message)
		h.ids[l.ID] = n
		h.bytes += n
	}
	h.mu.Unlock()
	conns := &connLookup{s: s.engine, ctx: h.work, m: map[int64]*core.Connection{}, err: map[int64]error{}}
	var listed suppressed
	if h.stop.Err() == nil {
		listed = s.suppressedAmong(h.work, logs)
	}
	h.sending += len(logs)
	var ahead map[int64]*lane // the lane of each connection, read once
	for _, l := range logs {
		run := func(held *heldSlot) {
			d := &decided{}
			if h.stop.Err() != nil {
				d.out = handBack(l)
			} else {
				d.out = s.stages.decide(&Turn{Log: l, ctx: h.work, stop: h.stop, st: st, conns: conns, listed: listed, held: held})
				held.giveBack()
				s.keepBody(h.work, l, &d.out, st)
				s.countRetry(d.out, conns)
			}
			held.giveBack()
			if s.o.Alerts != nil {
				d.alerts = outcomeAlerts(l, d.out, st, conns)
			}
			h.results <- d
		}
		ln := h.laneAhead(l, st, conns, &ahead)
		if ln == nil {
			go run(nil)
			continue
		}
		ln.startWhenFree(h, run)
	}
	return true
}

// laneAhead returns the lane whose send slot l waits for before its
// decision: its connection's (its own, else the fallback or the
// default, as sendConnection says), or nil when it is better started at
// once (the hand stopping, an uncertain attempt's lookup pending, no
// such connection, an inactive one, no transport for it).
func (h *hand) laneAhead(l *core.Log, st settings, conns *connLookup, ahead *map[int64]*lane) *lane {
	if h.stop.Err() != nil || uncertainPending(l) {
		return nil
	}
	id := sendConnection(l, st)
	if id == nil {
		return nil
	}
	if ln, ok := (*ahead)[*id]; ok {
		return ln
	}
	var ln *lane
	if conn, err := conns.get(*id); err == nil && conn.IsActive {
		if _, err := h.s.transports.get(conn); err == nil {
			ln = h.s.lanes.get(conn, int(h.s.live.Load()))
		}
	}
	if *ahead == nil {
		*ahead = map[int64]*lane{}
	}
	(*ahead)[*id] = ln
	return ln
}

// waitingIn notes that one of the hand's messages waits in ln's queue;
// when the hand has stopped meanwhile, its waiters there are handed back.
func (h *hand) waitingIn(ln *lane) {
	h.mu.Lock()
	if h.waitLanes == nil {
		h.waitLanes = map[*lane]struct{}{}
	}
	h.waitLanes[ln] = struct{}{}
	h.mu.Unlock()
	if h.stop.Err() != nil {
		ln.dropWaitersOf(h)
	}
}

// dropWaiters hands back the messages of the hand still waiting in a
// lane's queue: their goroutines start with no slot and, the hand being
// stopped, give them back to the queue untried.
func (h *hand) dropWaiters() {
	h.mu.Lock()
	lanes := make([]*lane, 0, len(h.waitLanes))
	for ln := range h.waitLanes {
		lanes = append(lanes, ln)
	}
	h.mu.Unlock()
	for _, ln := range lanes {
		ln.dropWaitersOf(h)
	}
}

// gatherLinger bounds how long a decided outcome waits for others to be
// recorded with it: a slow or hanging send never holds a delivered
// message's outcome (or the claims that follow it) for longer.
const gatherLinger = 50 * time.Millisecond

// gather waits until at least atLeast of the messages sending are
// decided (or all are, or gatherLinger has passed since the first was),
// takes those already decided besides, and returns them.
func (h *hand) gather(atLeast int) []*decided {
	var got []*decided
	var linger <-chan time.Time
wait:
	for h.sending > 0 && len(got) < atLeast {
		select {
		case d := <-h.results:
			got = append(got, d)
			h.sending--
			if linger == nil {
				t := time.NewTimer(gatherLinger)
				defer t.Stop()
				linger = t.C
			}
		case <-linger:
			break wait
		}
	}
	for h.sending > 0 {
		select {
		case d := <-h.results:
			got = append(got, d)
			h.sending--
		default:
			return got
		}
	}
	return got
}

// flush records the outcomes of got, claims up to claim new messages in
// their place (in the same transaction when the store can) and returns
// those claimed. The alerts follow the record: an outcome that could not
// be written is retried later, so it has not failed for good yet.
func (h *hand) flush(got []*decided, claim int) []*core.Log {
	s := h.s
	outs := make([]core.LogOutcome, len(got))
	var alerts []core.Alert
	for i, d := range got {
		outs[i] = d.out
		alerts = append(alerts, d.alerts...)
	}
	n, claimed, tried, ok := s.record(h.work, h.owner, outs, claim)
	h.mu.Lock()
	for _, o := range outs {
		h.bytes -= h.ids[o.LogID]
		delete(h.ids, o.LogID)
	}
	h.mu.Unlock()
	s.memory.recordedOf(len(outs))
	if ok {
		if n < len(outs) {
			alerts = s.recordedAlerts(h.work, alerts)
		}
		s.raise(h.work, alerts)
	}
	if claim > 0 && !tried && h.stop.Err() == nil {
		logs, err := s.o.Logs.ClaimLogs(h.stop, h.owner, claim, s.o.Lease)
		if err != nil && h.stop.Err() == nil {
			s.o.Logger.Warn("claim queued messages", "owner", h.owner, "err", err)
		}
		claimed = logs
	}
	return claimed
}
