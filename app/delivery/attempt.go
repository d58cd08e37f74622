package delivery

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// engine is the room that decides one message: its stages (stages.go:
// the staging guard, an uncertain attempt's lookup, suppressions, the
// site's settings and quota, an add-on's choice of connections, the
// send with the fallback) and the attempt itself, which waits its turn
// in the connection's lane (lane.go) and the process's send slots. It
// keeps what attempts share: the cached transports and the lanes.
type engine struct {
	o          Options
	transports transportCache
	lanes      lanes
	// inFlight holds a slot per send in flight in this process
	// (MaxInFlight).
	inFlight chan struct{}
	// live is how many processes share the queue (Replicas).
	live atomic.Int64
	// stages are the decision's stages, in order (stages.go).
	stages stages
}

// newEngine returns the engine of o (defaults applied).
func newEngine(o Options) *engine {
	e := &engine{o: o, inFlight: make(chan struct{}, o.MaxInFlight)}
	e.live.Store(1)
	e.transports.env = o.Env
	e.stages = newStages(e, o.Stages)
	return e
}

// Backoff returns the delay before retry n (1-based): d/2 plus a random
// part below d/2, d = min(BackoffMax, BackoffBase·2^(n-1)).
func (s *engine) Backoff(n int) time.Duration {
	d := s.o.BackoffBase
	for i := 1; i < n && d < s.o.BackoffMax; i++ {
		d *= 2
	}
	if d > s.o.BackoffMax {
		d = s.o.BackoffMax
	}
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(half)
}

// fallbackApplies reports whether the fallback connection takes over a
// message whose last try on its default connection failed.
func (s *engine) fallbackApplies(l *core.Log, used *int64, st settings, conns *connLookup) bool {
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
func (s *engine) failedAttempt(l *core.Log, connID int64, err error) core.LogOutcome {
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

// attemptMade says what attempt did.
type attemptMade int

const (
	// attemptSent: the attempt was made; its outcome is in History.
	attemptSent attemptMade = iota
	// attemptDeferred: nothing was tried; the message goes back to the
	// queue, due at the outcome's NextAttemptAt (shutdown, a long
	// rate-limit pause, a spent quota).
	attemptDeferred
	// attemptRateLimited: the provider answered "slow down"; History
	// holds a rate_limited attempt, the counters are unchanged, and the
	// message is due again at NextAttemptAt.
	attemptRateLimited
)

// attempt makes one delivery attempt of l through conn
// and returns an outcome with the counters and history filled in; the
// caller sets Status, NextAttemptAt and Delete (see attemptMade for the
// outcomes that need none of that). The send waits its turn in the
// connection's lane (in held when it is a slot of that lane; held goes
// back first when it is not); when stop ends first, nothing is tried.
func (s *engine) attempt(ctx, stop context.Context, l *core.Log, conn *core.Connection, st settings, fallback bool, held *heldSlot) (core.LogOutcome, attemptMade) {
	start := time.Now().UTC()
	a := core.Attempt{LogID: l.ID, ConnectionID: conn.ID, At: start}
	out := core.LogOutcome{
		LogID:             l.ID,
		Attempts:          l.Attempts + 1,
		PhaseAttempts:     l.PhaseAttempts + 1,
		UsedFallback:      fallback,
		SentConnectionID:  &conn.ID,
		ProviderMessageID: l.ProviderMessageID,
	}
	msg := l.Message
	applyFrom(&msg, st)
	msg = *withMessageID(l, &msg)
	msg.Resends = l.Resends // a resend by hand is a new sending: its own idempotency key
	made := attemptSent
	switch {
	case !conn.IsActive:
		a.Outcome = core.OutcomePermanent
		a.Error = fmt.Sprintf("connection %d is inactive", conn.ID)
		s.metrics().SendFinished(conn.ID, conn.Driver, a.Outcome, 0)
	default:
		tr, err := s.transports.get(conn)
		if err == nil {
			ln := s.lanes.get(conn, int(s.live.Load()))
			ln.readLimits(ctx, tr, s)
			release, epoch, until, ok := s.gate(stop, ln, conn, held)
			if !ok {
				return core.LogOutcome{NextAttemptAt: until}, attemptDeferred
			}
			start = time.Now().UTC()
			a.At = start
			s.metrics().SendStarted(conn.ID, conn.Driver)
			sctx, cancel := context.WithTimeout(ctx, s.o.SendTimeout)
			res := sendRecipients(sctx, tr, &msg, l, driverCaps(conn.Driver))
			cancel()
			rc := res.receipt
			err = res.err
			atFloor := ln.finished(epoch, time.Since(start), err)
			release()
			out.Recipients = rc.Recipients
			out.ProviderMessageIDs = res.ids
			if err == nil {
				ln.sent()
				a.Outcome = core.OutcomeDelivered
				a.Response = rc.Response
				a.ProviderMessageID = rc.MessageID
				out.ProviderMessageID = rc.MessageID
				out.LastError = ""
				if l.Recipients != nil && l.ProviderMessageID != "" {
					// A retry of the deferred recipients: the log keeps its
					// first id, and this attempt's ids are added.
					out.ProviderMessageID = l.ProviderMessageID
					if out.ProviderMessageIDs == nil && rc.MessageID != "" {
						out.ProviderMessageIDs = []string{rc.MessageID}
					}
				}
				if rc.Recipients != nil {
					// Accepted for some: deferred ones make it a temporary
					// outcome (retried alone), refusals are noted.
					a.Outcome, out.LastError = recipientsOutcome(rc.Recipients)
					a.Error = out.LastError
				}
				s.metrics().SendFinished(conn.ID, conn.Driver, a.Outcome, time.Since(start))
				break
			}
			if rc.Recipients != nil {
				if o, _ := recipientsOutcome(rc.Recipients); o == core.OutcomeTemporary {
					err = core.Temporary(err)
				}
			}
			if wait, limited := core.AsRateLimited(err); limited {
				// The lane's level was lowered (finished); only when it
				// cannot go lower, or the provider named a wait, does the
				// connection pause.
				if wait <= 0 && atFloor {
					wait = DefaultRateLimitPause
				}
				until := time.Now().UTC().Add(wait)
				if wait > 0 {
					ln.pause(until)
				}
				a.Outcome = core.OutcomeRateLimited
				out.Attempts, out.PhaseAttempts = l.Attempts, l.PhaseAttempts
				out.NextAttemptAt = until
				made = attemptRateLimited
			}
			s.metrics().ProviderError(conn.ID, conn.Driver, errorClass(conn.Driver, err))
		}
		a.Error = err.Error()
		if a.Outcome == "" {
			switch {
			case core.IsUncertain(err):
				a.Outcome = core.OutcomeUncertain
			case core.IsTemporary(err):
				a.Outcome = core.OutcomeTemporary
			default:
				a.Outcome = core.OutcomePermanent
			}
		}
		s.metrics().SendFinished(conn.ID, conn.Driver, a.Outcome, time.Since(start))
	}
	if a.Error != "" && a.Outcome != core.OutcomeDelivered {
		out.LastError = a.Error
	}
	a.DurationMS = time.Since(start).Milliseconds()
	out.History = []core.Attempt{a}
	if a.Outcome == core.OutcomeUncertain {
		markUncertain(&out, &msg, st.uncertainGrace)
	} else if uncertainPending(l) && made == attemptRateLimited {
		// Not sent: the resend still owes the uncertain Message-ID.
		out.LastError = l.LastError
	} else if uncertainPending(l) {
		// The lookup after the grace did not find the message: this is
		// its resend, with the same Message-ID.
		out.History[0].Response = strings.TrimSpace("Not found at the provider after the uncertain attempt: sent again. " + a.Response)
	}
	if s.o.SendHealth != nil {
		s.o.SendHealth.Attempt(conn, out.History[0])
	}
	s.debugAttempt(l, conn, &msg, out.History[0])
	return out, made
}

// gate waits for conn's turn: a send slot of its lane and of the process,
// a token of its rate limit, the end of a pause. It returns the release
// of the slots and the lane's epoch to report the outcome with
// (lane.finished), or ok false and when the message should be tried
// again (the wait would pass HandBackAfter, its daily quota is spent, or
// stop ended).
func (s *engine) gate(stop context.Context, ln *lane, conn *core.Connection, held *heldSlot) (release func(), epoch int64, until time.Time, ok bool) {
	now := time.Now().UTC()
	if t := ln.quotaSpentUntil(); !t.IsZero() {
		return nil, 0, t, false
	}
	if p := ln.pausedUntil(); p.Sub(now) > HandBackAfter {
		return nil, 0, p, false
	}
	epoch, ok = held.take(ln)
	if !ok {
		held.giveBack()
		var err error
		if epoch, err = ln.acquire(stop); err != nil {
			return nil, 0, now, false
		}
	}
	select {
	case s.inFlight <- struct{}{}:
	case <-stop.Done():
		ln.release()
		return nil, 0, now, false
	}
	if stop.Err() != nil {
		// The slot came as the stop did: a send not begun stays untried.
		<-s.inFlight
		ln.release()
		return nil, 0, now, false
	}
	release = func() { <-s.inFlight; ln.release() }
	wait := ln.reserve(time.Now())
	for wait > 0 {
		if wait > HandBackAfter {
			ln.unreserve()
			release()
			return nil, 0, time.Now().UTC().Add(wait), false
		}
		s.metrics().RateLimitWait(conn.ID, conn.Driver, wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-stop.Done():
			t.Stop()
			release()
			return nil, 0, time.Now().UTC(), false
		}
		// A rate-limit answer may have paused the lane meanwhile.
		wait = time.Until(ln.pausedUntil())
	}
	return release, epoch, time.Time{}, true
}

// deferred hands l back to the queue untried, due at next.
func deferred(l *core.Log, next time.Time) core.LogOutcome {
	out := handBack(l)
	if !next.IsZero() {
		out.NextAttemptAt = next
	}
	return out
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

// debugAttempt fires the mail_svc_api_debug event with one attempt's
// payload (the MAIL_SVC_DEBUG_MAILER channel writes it); without a
// listener it builds nothing.
func (s *engine) debugAttempt(l *core.Log, conn *core.Connection, msg *core.Message, a core.Attempt) {
	if !s.o.Hooks.HasAction(core.HookAPIDebug) {
		return
	}
	rcpts := make([]string, 0, len(msg.To)+len(msg.Cc)+len(msg.Bcc))
	for _, r := range msg.Recipients() {
		rcpts = append(rcpts, r.Email)
	}
	s.o.Hooks.DoAction(core.HookAPIDebug, map[string]any{
		"log_id":              l.ID,
		"connection_id":       conn.ID,
		"driver":              conn.Driver,
		"from":                msg.From.Email,
		"recipients":          rcpts,
		"subject":             msg.Subject,
		"attachments":         len(msg.Attachments),
		"outcome":             a.Outcome,
		"response":            a.Response,
		"error":               a.Error,
		"provider_message_id": a.ProviderMessageID,
		"duration_ms":         a.DurationMS,
	})
}

// keepBody sets what the log keeps of l's body (the log_body settings)
// on an outcome that makes it final, unless the log is deleted. The
// message was sent whole; only the log's copy changes.
func (s *engine) keepBody(ctx context.Context, l *core.Log, out *core.LogOutcome, st settings) {
	if out.Delete || (out.Status != core.StatusDelivered && out.Status != core.StatusFailed) {
		return
	}
	out.Body = st.body.Keep(&l.Message, l.Source, s.o.Redaction.Redactor(ctx))
}

// SiteQuotas admits a network site's messages within its quota
// (network.Service).
type SiteQuotas interface {
	AdmitSite(ctx context.Context, site int64) (core.SiteAdmission, error)
	ReleaseSite(ctx context.Context, site int64)
}

// SiteSettings gives the free settings a network site set for itself
// (default_connection_id, fallback_connection_id, from_email, from_name;
// absent: the network's) (network.Service).
type SiteSettings interface {
	SiteOverrides(ctx context.Context, site int64) (core.SiteOverrides, error)
}

// forSite returns st with the settings l's site set for itself when the
// site overrides the network's, and without the default and fallback
// connections l's site may not use (ConnectionUse): set before the rule
// (or by hand), a site's own that names another site's connection gives
// way to the network's, and a network's that does counts as unset.
func (s *engine) forSite(ctx context.Context, l *core.Log, st settings) settings {
	netDefault, netFallback := st.defaultConn, st.fallbackConn
	st = s.siteOwn(ctx, l, st)
	if s.o.ConnectionUse != nil {
		st.defaultConn = s.usableConn(ctx, l, st.defaultConn, netDefault)
		st.fallbackConn = s.usableConn(ctx, l, st.fallbackConn, netFallback)
	}
	return st
}

// siteOwn returns st with the settings l's site set for itself when the
// site overrides the network's.
func (s *engine) siteOwn(ctx context.Context, l *core.Log, st settings) settings {
	if s.o.SiteSettings == nil {
		return st
	}
	own, err := s.o.SiteSettings.SiteOverrides(ctx, l.SiteID)
	if err != nil {
		s.o.Logger.Warn("site settings unavailable: the network's are used", "log_id", l.ID, "site", l.SiteID, "error", err.Error())
		return st
	}
	if own.DefaultConnectionID != nil {
		st.defaultConn = own.DefaultConnectionID
	}
	if own.FallbackConnectionID != nil {
		st.fallbackConn = own.FallbackConnectionID
	}
	if own.FromEmail != nil {
		st.fromEmail = *own.FromEmail
	}
	if own.FromName != nil {
		st.fromName = *own.FromName
	}
	return st
}

// usableConn returns chosen when l's site may use it, else the
// network's (network) when it may use that, else nil.
func (s *engine) usableConn(ctx context.Context, l *core.Log, chosen, network *int64) *int64 {
	for _, id := range []*int64{chosen, network} {
		if id != nil && s.siteMayUse(ctx, l, *id) {
			return id
		}
	}
	return nil
}

// siteMayUse reports whether l's site may send through connection id
// (ConnectionUse; always on a single site). When the rule cannot be
// checked it answers yes, with a warning: the routes refuse another
// site's connection before it is stored, this is the second guard.
func (s *engine) siteMayUse(ctx context.Context, l *core.Log, id int64) bool {
	if s.o.ConnectionUse == nil {
		return true
	}
	ok, err := s.o.ConnectionUse.ConnectionUsable(ctx, l.SiteID, id)
	if err != nil {
		s.o.Logger.Warn("connection use unchecked", "log_id", l.ID, "site", l.SiteID, "connection_id", id, "error", err.Error())
		return true
	}
	if !ok {
		s.o.Logger.Warn("another site's connection not used", "log_id", l.ID, "site", l.SiteID, "connection_id", id)
	}
	return ok
}

// siteQuotaOutcome checks a message's site quota before its first
// attempt: within it, the message goes on (ok false, admitted true); past
// it, the message waits in the queue for the next period or fails, as the
// network chose. A message tried before was counted then.
func (s *engine) siteQuotaOutcome(ctx context.Context, l *core.Log) (out core.LogOutcome, ok, admitted bool) {
	if s.o.SiteQuotas == nil || l.Attempts > 0 || l.UsedFallback {
		return out, false, false
	}
	a, err := s.o.SiteQuotas.AdmitSite(ctx, l.SiteID)
	if err != nil {
		// The count is not available: try again shortly rather than
		// send past a quota.
		s.o.Logger.Warn("site quota check failed", "log_id", l.ID, "site", l.SiteID, "error", err.Error())
		return deferred(l, time.Now().UTC().Add(time.Minute)), true, false
	}
	if a.Allowed {
		return out, false, true
	}
	if a.Fail {
		out = s.failedAttempt(l, 0, core.Permanent(fmt.Errorf("%s", a.Reason)))
		out.Status = core.StatusFailed
		return out, true, false
	}
	out = deferred(l, a.Until)
	out.LastError = a.Reason
	return out, true, false
}

// connLookup resolves connections once per batch.
type connLookup struct {
	s   *engine
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
	conn, err := c.s.o.Connections.Effective(c.ctx, id)
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

// countRetry tells Metrics of a temporary failure that will be retried.
func (s *engine) countRetry(out core.LogOutcome, conns *connLookup) {
	if s.o.Metrics == nil || out.Status != core.StatusQueued || len(out.History) == 0 || out.SentConnectionID == nil {
		return
	}
	if out.History[len(out.History)-1].Outcome != core.OutcomeTemporary {
		return
	}
	conn, err := conns.get(*out.SentConnectionID)
	if err != nil {
		return
	}
	s.o.Metrics.Retried(conn.ID, conn.Driver)
}
