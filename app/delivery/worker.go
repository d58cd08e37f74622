package delivery

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// pool is the worker room: Run's workers claim batches (work), hold
// them under their lease while the engine decides each message (hand.go,
// handsize.go) and record the outcomes, a group of batches per
// transaction when the queue can (recorder.go); the reaper requeues the
// batches of dead workers.
type pool struct {
	*engine
	wake chan struct{}
	// recorder, while Run runs on a store that has one, writes the
	// workers' outcomes a group of batches at a time.
	recorderMu sync.Mutex
	recorder   *recorder
	// pace is the process's delivery pace, which sizes the hands.
	pace pace
	// memory returns a drain's memory to the system when it ends.
	memory idleMemory
}

// newPool returns the worker pool of e.
func newPool(e *engine) *pool {
	return &pool{engine: e, wake: make(chan struct{}, 1)}
}

// Run starts the workers, the lease reaper and the replica heartbeat, and
// blocks until ctx is done. It reads each connection's remembered
// concurrency level at start and writes the levels back while it runs
// and when it stops (LevelStore). Each worker holds BatchSize messages (more
// while its connections decide them fast: see handsize.go): it claims
// them in one round trip and sends them at once (each waits its turn
// within its connection's max_concurrency and max_per_second, and the
// process's MaxInFlight). As soon as half of what it holds is
// decided (or gatherLinger after the first outcome) it records those outcomes and claims as many new messages in
// their place, in one transaction shared with the other workers' writes
// waiting at the same time (the recorder, when Options.Batches is set): the
// connections' send slots never wait for the slowest message of a batch,
// and a message costs its share of one commit. (The retention purge is
// not run here: the scheduler runs Purge as its log_purge job, once per
// interval across replicas.) When ctx ends it stops claiming, lets the
// sends in progress finish (bounded by SendTimeout), hands the messages
// still waiting for their turn back to the queue, records the outcomes,
// closes the cached transports and returns. Call Run at most once at a
// time per Service.
func (s *pool) Run(ctx context.Context) {
	s.beat(ctx)
	s.loadLevels(ctx)
	stopRecorder := s.startRecorder()
	var wg, workers sync.WaitGroup
	wg.Go(func() { s.heartbeat(ctx) })
	levelsDone := make(chan struct{})
	go func() { defer close(levelsDone); s.keepLevels(ctx) }()
	for i := range s.o.Workers {
		owner := fmt.Sprintf("%s/w%d", s.o.Owner, i)
		workers.Go(func() { s.work(ctx, owner) })
	}
	wg.Go(func() { s.reap(ctx) })
	workers.Wait()
	<-levelsDone
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	s.saveLevels(sctx, true) // the levels as the last sends left them
	cancel()
	stopRecorder()
	wg.Wait()
	s.transports.closeAll()
}

// Wake tells an idle worker of this process to look for work now.
func (s *pool) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// sleep waits d, or less when woken or when ctx is done.
func (s *pool) sleep(ctx context.Context, d time.Duration, wakeable bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	var wake chan struct{}
	if wakeable {
		wake = s.wake
	}
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-wake:
	}
}

// work is one worker: it keeps its hand's size of messages, refilled
// as their outcomes are recorded, until ctx ends and what it holds is
// recorded.
func (s *pool) work(ctx context.Context, owner string) {
	h := s.newHand(ctx, owner)
	defer h.close()
	for {
		if h.sending == 0 {
			if ctx.Err() != nil {
				return
			}
			logs, err := s.o.Logs.ClaimLogs(ctx, owner, h.size, s.o.Lease)
			if err != nil {
				if ctx.Err() == nil {
					s.o.Logger.Warn("claim queued messages", "owner", owner, "err", err)
					s.sleep(ctx, time.Second, false)
				}
				continue
			}
			if len(logs) == 0 {
				s.memory.idle()
				s.sleep(ctx, s.o.PollInterval, true)
				continue
			}
			if len(logs) == h.size {
				// More may be waiting: let an idle worker look too.
				s.Wake()
			}
			if !h.start(logs) {
				s.sleep(ctx, time.Second, false)
				continue
			}
		}
		got := h.gather(max(1, h.size/2))
		h.resize(len(got), time.Now())
		claim := 0
		if ctx.Err() == nil {
			claim = max(h.size-h.sending, 0)
		}
		next := h.flush(got, claim)
		if claim > 0 && len(next) == claim {
			s.Wake()
		}
		if !h.start(next) {
			s.sleep(ctx, time.Second, false)
		}
	}
}

// reap puts logs whose worker died back in the queue.
func (s *pool) reap(ctx context.Context) {
	every := max(s.o.Lease/4, 100*time.Millisecond)
	for {
		s.sleep(ctx, every, false)
		if ctx.Err() != nil {
			return
		}
		n, err := s.o.Logs.ReleaseExpiredLeases(ctx)
		if err != nil {
			s.o.Logger.Warn("release expired leases", "err", err)
		} else if n > 0 {
			s.o.Logger.Info("requeued messages whose lease expired", "count", n)
			s.Wake()
		}
	}
}

// processBatch sends a claimed batch and records all its outcomes in one
// write (no further claim). While it runs, a ticker renews the batch's
// lease. When ctx ends (shutdown) the send in progress finishes, and the
// messages not yet tried go back to the queue untouched, so a stop never
// waits on a whole batch.
func (s *pool) processBatch(ctx context.Context, owner string, logs []*core.Log) {
	h := s.newHand(ctx, owner)
	defer h.close()
	h.start(logs)
	for h.sending > 0 {
		h.flush(h.gather(h.sending), 0)
	}
}

// record writes outcomes, retrying while the database is unreachable for
// up to one lease (after that the messages are requeued anyway), and
// claims up to claim messages for owner in the same transaction when the
// store can (tried). It reports whether the write succeeded and how many
// outcomes applied (those of logs the owner no longer held are skipped).
func (s *pool) record(ctx context.Context, owner string, outs []core.LogOutcome, claim int) (n int, claimed []*core.Log, tried, ok bool) {
	deadline := time.Now().Add(s.o.Lease)
	// First with the batches of the other workers, in one commit; on
	// failure, on its own.
	if n, claimed, tried, ok, err := s.recordGrouped(owner, outs, claim); ok && err == nil {
		return n, claimed, tried, true
	} else if ok {
		s.o.Logger.Warn("record delivery outcomes with other batches; retrying alone", "count", len(outs), "err", err)
	}
	for {
		n, err := s.o.Logs.RecordOutcomes(ctx, owner, outs)
		if err == nil {
			return n, nil, false, true
		}
		if time.Now().After(deadline) {
			s.o.Logger.Error("record delivery outcomes: giving up; the messages will be retried", "count", len(outs), "err", err)
			return 0, nil, false, false
		}
		s.o.Logger.Warn("record delivery outcomes; retrying", "count", len(outs), "err", err)
		time.Sleep(500 * time.Millisecond)
	}
}
