package delivery

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Run starts the workers, the lease reaper and the replica heartbeat, and
// blocks until ctx is done. Each worker claims a batch in one round trip,
// sends its messages at once (each waits its turn within its connection's
// max_concurrency and max_per_second, and the process's MaxInFlight), and
// records their outcomes in one write, shared with the other workers'
// batches waiting at the same time when the store can (OwnersRecorder).
// (The retention purge is not run here: the scheduler runs Purge as its
// log_purge job, once per interval across replicas.) When ctx ends it
// stops claiming, lets the sends in progress finish (bounded by
// SendTimeout), hands the messages still waiting for their turn back to
// the queue, records the outcomes, closes the cached transports and
// returns. Call Run at most once at a time per Service.
func (s *Service) Run(ctx context.Context) {
	s.init()
	s.beat(ctx)
	stopRecorder := s.startRecorder()
	var wg, workers sync.WaitGroup
	wg.Go(func() { s.heartbeat(ctx) })
	for i := range s.Workers {
		owner := fmt.Sprintf("%s/w%d", s.Owner, i)
		workers.Go(func() { s.work(ctx, owner) })
	}
	wg.Go(func() { s.reap(ctx) })
	workers.Wait()
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

func (s *Service) work(ctx context.Context, owner string) {
	for ctx.Err() == nil {
		logs, err := s.Logs.ClaimLogs(ctx, owner, s.BatchSize, s.Lease)
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
		if len(logs) == s.BatchSize {
			// More may be waiting: let an idle worker look too.
			s.Wake()
		}
		s.processBatch(ctx, owner, logs)
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

// processBatch sends a claimed batch and records the outcomes in one
// write. While it runs, a ticker renews the batch's lease. When ctx ends
// (shutdown) the send in progress finishes, and the messages not yet tried
// go back to the queue untouched, so a stop never waits on a whole batch.
func (s *Service) processBatch(ctx context.Context, owner string, logs []*core.Log) {
	work := context.WithoutCancel(ctx) // what is in hand is finished and recorded
	ids := make([]int64, len(logs))
	for i, l := range logs {
		ids[i] = l.ID
	}
	stopRenew := s.renewWhileBusy(work, owner, ids)
	defer stopRenew()

	outs, alerts, err := s.decideBatch(work, ctx, logs)
	if err != nil {
		// Settings unreadable (database down): leave the batch to its
		// lease; the reaper requeues it.
		s.Logger.Warn("process batch", "err", err)
		return
	}
	// Alerts follow the record: an outcome that could not be written is
	// retried later, so it has not failed for good yet.
	if n, ok := s.record(work, owner, outs); ok {
		if n < len(outs) {
			alerts = s.recordedAlerts(work, alerts)
		}
		s.raise(work, alerts)
	}
}

// renewWhileBusy extends the lease on ids every Lease/3 until stopped.
func (s *Service) renewWhileBusy(ctx context.Context, owner string, ids []int64) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(s.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if _, err := s.Logs.ExtendLeases(ctx, owner, ids, s.Lease); err != nil {
					s.Logger.Warn("extend lease", "err", err)
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// record writes outcomes, retrying while the database is unreachable for
// up to one lease (after that the messages are requeued anyway). It
// reports whether the write succeeded and how many outcomes applied
// (those of logs the owner no longer held are skipped).
func (s *Service) record(ctx context.Context, owner string, outs []core.LogOutcome) (int, bool) {
	deadline := time.Now().Add(s.Lease)
	// First with the batches of the other workers, in one commit; on
	// failure, on its own.
	if n, ok, err := s.recordGrouped(owner, outs); ok && err == nil {
		return n, true
	} else if ok {
		s.Logger.Warn("record delivery outcomes with other batches; retrying alone", "count", len(outs), "err", err)
	}
	for {
		n, err := s.Logs.RecordOutcomes(ctx, owner, outs)
		if err == nil {
			return n, true
		}
		if time.Now().After(deadline) {
			s.Logger.Error("record delivery outcomes: giving up; the messages will be retried", "count", len(outs), "err", err)
			return 0, false
		}
		s.Logger.Warn("record delivery outcomes; retrying", "count", len(outs), "err", err)
		time.Sleep(500 * time.Millisecond)
	}
}

// decideBatch makes one attempt for each log, all at once (each waits
// its connection's turn), and decides their next states, with the alerts
// the outcomes call for. Once stop is done, the logs not yet sending are
// handed back unchanged.
func (s *Service) decideBatch(ctx, stop context.Context, logs []*core.Log) ([]core.LogOutcome, []core.Alert, error) {
	st, err := s.loadSettings(ctx)
	if err != nil {
		return nil, nil, err
	}
	conns := &connLookup{s: s, ctx: ctx, m: map[int64]*core.Connection{}, err: map[int64]error{}}
	outs := make([]core.LogOutcome, len(logs))
	var wg sync.WaitGroup
	for i, l := range logs {
		wg.Go(func() {
			if stop.Err() != nil {
				outs[i] = handBack(l)
				return
			}
			outs[i] = s.decide(ctx, stop, l, st, conns)
			s.countRetry(outs[i], conns)
		})
	}
	wg.Wait()
	var alerts []core.Alert
	if s.Alerts != nil {
		for i, l := range logs {
			alerts = append(alerts, outcomeAlerts(l, outs[i], st, conns)...)
		}
	}
	return outs, alerts, nil
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

// decide makes one attempt of l and returns its outcome. A message whose
// connection may not send before stop ends or for a long while goes back
// to the queue untried; one the provider answered "slow down" goes back
// without its attempt counting.
func (s *Service) decide(ctx, stop context.Context, l *core.Log, st settings, conns *connLookup) core.LogOutcome {
	if out, ok := s.suppressedOutcome(ctx, l); ok {
		return out
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
	case last.Outcome == core.OutcomeTemporary && out.PhaseAttempts <= st.maxRetries:
		out.Status = core.StatusQueued
		out.NextAttemptAt = now.Add(s.Backoff(out.PhaseAttempts))
	case s.fallbackApplies(l, connID, st, conns):
		out.Status = core.StatusQueued
		out.NextAttemptAt = now
		out.UsedFallback = true
		out.PhaseAttempts = 0
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
