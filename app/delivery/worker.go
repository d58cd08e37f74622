package delivery

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Run starts the workers, the lease reaper and the replica heartbeat, and
// blocks until ctx is done. It reads each connection's remembered
// concurrency level at start and writes the levels back while it runs
// and when it stops (LevelStore). Each worker holds BatchSize messages (more
// while its connections decide them fast: see handsize.go): it claims
// them in one round trip and sends them at once (each waits its turn
// within its connection's max_concurrency and max_per_second, and the
// process's MaxInFlight). As soon as half of what it holds is
// decided (or gatherLinger after the first outcome) it records those outcomes and claims as many new messages in
// their place, in one transaction (RecordClaimer), shared with the other
// workers' writes waiting at the same time (OwnersRecorder): the
// connections' send slots never wait for the slowest message of a batch,
// and a message costs its share of one commit. (The retention purge is
// not run here: the scheduler runs Purge as its log_purge job, once per
// interval across replicas.) When ctx ends it stops claiming, lets the
// sends in progress finish (bounded by SendTimeout), hands the messages
// still waiting for their turn back to the queue, records the outcomes,
// closes the cached transports and returns. Call Run at most once at a
// time per Service.
func (s *Service) Run(ctx context.Context) {
	s.init()
	s.beat(ctx)
	s.loadLevels(ctx)
	stopRecorder := s.startRecorder()
	var wg, workers sync.WaitGroup
	wg.Go(func() { s.heartbeat(ctx) })
	levelsDone := make(chan struct{})
	go func() { defer close(levelsDone); s.keepLevels(ctx) }()
	for i := range s.Workers {
		owner := fmt.Sprintf("%s/w%d", s.Owner, i)
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

// sleep waits d, or less when woken or when ctx is done.
func (s *Service) sleep(ctx context.Context, d time.Duration, wakeable bool) {
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
func (s *Service) work(ctx context.Context, owner string) {
	h := s.newHand(ctx, owner)
	defer h.close()
	for {
		if h.sending == 0 {
			if ctx.Err() != nil {
				return
			}
			logs, err := s.Logs.ClaimLogs(ctx, owner, h.size, s.Lease)
			if err != nil {
				if ctx.Err() == nil {
					s.Logger.Warn("claim queued messages", "owner", owner, "err", err)
					s.sleep(ctx, time.Second, false)
				}
				continue
			}
			if len(logs) == 0 {
				s.sleep(ctx, s.PollInterval, true)
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
func (s *Service) reap(ctx context.Context) {
	every := max(s.Lease/4, 100*time.Millisecond)
	for {
		s.sleep(ctx, every, false)
		if ctx.Err() != nil {
			return
		}
		n, err := s.Logs.ReleaseExpiredLeases(ctx)
		if err != nil {
			s.Logger.Warn("release expired leases", "err", err)
		} else if n > 0 {
			s.Logger.Info("requeued messages whose lease expired", "count", n)
			s.Wake()
		}
	}
}

// Purge deletes delivered and failed logs older than the retention: the
// log_retention_days setting passed through the mail_svc_log_retention_days
// filter; 0 keeps logs forever. It returns how many it deleted.
func (s *Service) Purge(ctx context.Context) (int, error) {
	s.init()
	st, err := s.loadSettings(ctx)
	if err != nil {
		return 0, err
	}
	days, ok := core.AsInt(s.Hooks.ApplyFilters(core.HookLogRetentionDays, st.retentionDays))
	if !ok || days <= 0 {
		return 0, nil
	}
	before := time.Now().UTC().Add(-time.Duration(days) * 24 * time.Hour)
	n, err := s.Logs.PurgeLogs(ctx, before, PurgeBatch)
	if err != nil {
		return n, fmt.Errorf("purge logs older than %d days: %w", days, err)
	}
	return n, nil
}

// connLookup resolves connections once per batch.
type connLookup struct {
	s   *Service
	ctx context.Context
	mu  sync.Mutex
	m   map[int64]*core.Connection
	err map[int64]error
}

func (c *connLookup) get(id int64) (*core.Connection, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if conn, ok := c.m[id]; ok {
		return conn, nil
	}
	if err, ok := c.err[id]; ok {
		return nil, err
	}
	conn, err := c.s.Connections.Effective(c.ctx, id)
	if err != nil {
		if core.ErrorCode(err) == core.ENOTFOUND {
			err = core.Permanent(fmt.Errorf("connection %d does not exist", id))
		}
		c.err[id] = err
		return nil, err
	}
	c.m[id] = conn
	return conn, nil
}

// processBatch sends a claimed batch and records all its outcomes in one
// write (no further claim). While it runs, a ticker renews the batch's
// lease. When ctx ends (shutdown) the send in progress finishes, and the
// messages not yet tried go back to the queue untouched, so a stop never
// waits on a whole batch.
func (s *Service) processBatch(ctx context.Context, owner string, logs []*core.Log) {
	h := s.newHand(ctx, owner)
	defer h.close()
	h.start(logs)
	for h.sending > 0 {
		h.flush(h.gather(h.sending), 0)
	}
}

// hand is the messages one worker holds under its lease: being sent, or
// decided and waiting for their outcome to be recorded. Only its worker
// calls start, gather and flush.
type hand struct {
	s     *Service
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
func (s *Service) newHand(stop context.Context, owner string) *hand {
	h := &hand{
		s: s, owner: owner, stop: stop, work: context.WithoutCancel(stop),
		results: make(chan decided, s.BatchSize*handGrowth),
		size:    s.BatchSize,
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
	t := time.NewTicker(h.s.Lease / 3)
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
			if _, err := h.s.Logs.ExtendLeases(h.work, h.owner, ids, h.s.Lease); err != nil {
				h.s.Logger.Warn("extend lease", "err", err)
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
		s.Logger.Warn("process batch", "err", err)
		return false
	}
	h.mu.Lock()
	for _, l := range logs {
		n := messageBytes(&l.Message)
		h.ids[l.ID] = n
		h.bytes += n
	}
	h.mu.Unlock()
	conns := &connLookup{s: s, ctx: h.work, m: map[int64]*core.Connection{}, err: map[int64]error{}}
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
				d.out = s.decide(h.work, h.stop, l, st, conns, listed)
				s.keepBody(h.work, l, &d.out, st)
				s.countRetry(d.out, conns)
			}
			if s.Alerts != nil {
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
		logs, err := s.Logs.ClaimLogs(h.stop, h.owner, claim, s.Lease)
		if err != nil && h.stop.Err() == nil {
			s.Logger.Warn("claim queued messages", "owner", h.owner, "err", err)
		}
		claimed = logs
	}
	return claimed
}

// record writes outcomes, retrying while the database is unreachable for
// up to one lease (after that the messages are requeued anyway), and
// claims up to claim messages for owner in the same transaction when the
// store can (tried). It reports whether the write succeeded and how many
// outcomes applied (those of logs the owner no longer held are skipped).
func (s *Service) record(ctx context.Context, owner string, outs []core.LogOutcome, claim int) (n int, claimed []*core.Log, tried, ok bool) {
	deadline := time.Now().Add(s.Lease)
	// First with the batches of the other workers, in one commit; on
	// failure, on its own.
	if n, claimed, tried, ok, err := s.recordGrouped(owner, outs, claim); ok && err == nil {
		return n, claimed, tried, true
	} else if ok {
		s.Logger.Warn("record delivery outcomes with other batches; retrying alone", "count", len(outs), "err", err)
	}
	for {
		n, err := s.Logs.RecordOutcomes(ctx, owner, outs)
		if err == nil {
			return n, nil, false, true
		}
		if time.Now().After(deadline) {
			s.Logger.Error("record delivery outcomes: giving up; the messages will be retried", "count", len(outs), "err", err)
			return 0, nil, false, false
		}
		s.Logger.Warn("record delivery outcomes; retrying", "count", len(outs), "err", err)
		time.Sleep(500 * time.Millisecond)
	}
}

// countRetry tells Metrics of a temporary failure that will be retried.
func (s *Service) countRetry(out core.LogOutcome, conns *connLookup) {
	if s.Metrics == nil || out.Status != core.StatusQueued || len(out.History) == 0 || out.SentConnectionID == nil {
		return
	}
	if out.History[len(out.History)-1].Outcome != core.OutcomeTemporary {
		return
	}
	conn, err := conns.get(*out.SentConnectionID)
	if err != nil {
		return
	}
	s.Metrics.Retried(conn.ID, conn.Driver)
}

// handBack returns l to the queue as it was claimed: due now, no attempt.
func handBack(l *core.Log) core.LogOutcome {
	return core.LogOutcome{
		LogID: l.ID, Status: core.StatusQueued, NextAttemptAt: time.Now().UTC(),
		Attempts: l.Attempts, PhaseAttempts: l.PhaseAttempts, UsedFallback: l.UsedFallback,
		Simulated: l.Simulated, SentConnectionID: l.SentConnectionID,
		ProviderMessageID: l.ProviderMessageID, LastError: l.LastError,
	}
}

// decide makes one attempt of l and returns its outcome. A message the
// capture guard (or simulation mode) holds is captured, not sent. A message whose
// connection may not send before stop ends or for a long while goes back
// to the queue untried; one the provider answered "slow down" goes back
// without its attempt counting.
func (s *Service) decide(ctx, stop context.Context, l *core.Log, st settings, conns *connLookup, listed suppressed) core.LogOutcome {
	if out, ok := s.captureOutcome(ctx, l, st); ok {
		return out
	}
	if uncertainPending(l) {
		if out, ok := s.resolveUncertain(ctx, l, st, conns); ok {
			return out
		}
		if l.PhaseAttempts > st.maxRetries {
			return s.uncertainSpent(l, st, conns)
		}
	}
	if out, ok := s.suppressedOutcome(l, listed); ok {
		return out
	}
	st = s.forSite(ctx, l, st)
	quotaOut, held, admitted := s.siteQuotaOutcome(ctx, l)
	if held {
		return quotaOut
	}
	if out, ok := s.decideChosen(ctx, stop, l, st, conns); ok {
		return out
	}
	var connID *int64
	switch {
	case l.UsedFallback:
		connID = st.fallbackConn
	case l.ConnectionID != nil:
		connID = l.ConnectionID
	default:
		connID = st.defaultConn
	}
	var out core.LogOutcome
	if connID == nil {
		out = s.failedAttempt(l, 0, core.Permanent(fmt.Errorf("no connection: the message names none and no %s is set", map[bool]string{false: "default connection", true: "fallback connection"}[l.UsedFallback])))
	} else if conn, err := conns.get(*connID); err != nil {
		out = s.failedAttempt(l, *connID, err)
	} else {
		var made attemptMade
		out, made = s.attempt(ctx, stop, l, conn, st, l.UsedFallback)
		if made != attemptSent && admitted {
			// Not tried after all: the quota place is given back, and
			// the message is counted when it is.
			s.SiteQuotas.ReleaseSite(context.WithoutCancel(ctx), l.SiteID)
		}
		switch made {
		case attemptDeferred:
			return deferred(l, out.NextAttemptAt)
		case attemptRateLimited:
			out.Status = core.StatusQueued
			return out
		}
	}
	last := out.History[len(out.History)-1]
	now := time.Now().UTC()
	switch {
	case last.Outcome == core.OutcomeDelivered || last.Outcome == core.OutcomeSimulated:
		out.Status = core.StatusDelivered
		out.Delete = !st.keepDelivered(l.Source)
	case last.Outcome == core.OutcomeUncertain:
		// Queued until the grace ends (markUncertain): never failed nor
		// handed to the fallback while the provider may hold it.
	case last.Outcome == core.OutcomeTemporary && out.PhaseAttempts <= st.maxRetries:
		out.Status = core.StatusQueued
		out.NextAttemptAt = now.Add(s.Backoff(out.PhaseAttempts))
	case s.fallbackApplies(l, connID, st, conns):
		out.Status = core.StatusQueued
		out.NextAttemptAt = now
		out.UsedFallback = true
		out.PhaseAttempts = 0
	case settlePartial(&out):
		out.Delete = !st.keepDelivered(l.Source)
	default:
		out.Status = core.StatusFailed
	}
	return out
}

// fallbackApplies reports whether the fallback connection takes over a
// message whose last try on its default connection failed.
func (s *Service) fallbackApplies(l *core.Log, used *int64, st settings, conns *connLookup) bool {
	if l.UsedFallback || l.ConnectionID != nil || st.fallbackConn == nil {
		return false
	}
	if used != nil && *used == *st.fallbackConn {
		return false
	}
	fb, err := conns.get(*st.fallbackConn)
	return err == nil && fb.IsActive
}

// failedAttempt records an attempt that could not reach a transport.
func (s *Service) failedAttempt(l *core.Log, connID int64, err error) core.LogOutcome {
	outcome := core.OutcomePermanent
	if core.IsTemporary(err) {
		outcome = core.OutcomeTemporary
	}
	var sent *int64
	if connID != 0 {
		sent = &connID
	}
	return core.LogOutcome{
		LogID:            l.ID,
		Attempts:         l.Attempts + 1,
		PhaseAttempts:    l.PhaseAttempts + 1,
		UsedFallback:     l.UsedFallback,
		SentConnectionID: sent,
		LastError:        err.Error(),
		History: []core.Attempt{{
			LogID: l.ID, ConnectionID: connID, At: time.Now().UTC(),
			Outcome: outcome, Error: err.Error(),
		}},
	}
}
