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
	results    chan decided
	sending    int // started and not yet gathered
	// size is how many messages the worker holds (see resize).
	size int

	mu        sync.Mutex
	ids       map[int64]int // held (renewed while in hand): the message's bytes
	bytes     int           // the bytes of the messages held
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
		results: make(chan decided, s.o.BatchSize*handGrowth),
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
	for {
		select {
		case <-h.done:
			return
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

// start sends logs, claimed under the hand's owner, each at once in its
// own goroutine (waiting its turn in its connection's lane); their
// outcomes come to gather. The settings and connections are read once
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
	for _, l := range logs {
		go func() {
			var d decided
			if h.stop.Err() != nil {
				d.out = handBack(l)
			} else {
				d.out = s.stages.decide(&Turn{Log: l, ctx: h.work, stop: h.stop, st: st, conns: conns, listed: listed})
				s.keepBody(h.work, l, &d.out, st)
				s.countRetry(d.out, conns)
			}
			if s.o.Alerts != nil {
				d.alerts = outcomeAlerts(l, d.out, st, conns)
			}
			h.results <- d
		}()
	}
	return true
}

// gatherLinger bounds how long a decided outcome waits for others to be
// recorded with it: a slow or hanging send never holds a delivered
// message's outcome (or the claims that follow it) for longer.
const gatherLinger = 50 * time.Millisecond

// gather waits until at least atLeast of the messages sending are
// decided (or all are, or gatherLinger has passed since the first was),
// takes those already decided besides, and returns them.
func (h *hand) gather(atLeast int) []decided {
	var got []decided
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
func (h *hand) flush(got []decided, claim int) []*core.Log {
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
