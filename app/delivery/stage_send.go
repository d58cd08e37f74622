package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// sendStage makes the attempt of a message no stage before decided:
// through its own connection, else the fallback once the default failed
// it, else the default connection (sendConnection). It decides every
// message: delivered, retried after a back-off, handed to the fallback,
// partly delivered or failed, or back to the queue untried when its
// connection may not send now.
type sendStage struct{ e *engine }

// Decide implements Stage.
func (d sendStage) Decide(t *Turn) bool {
	s, l, st := d.e, t.Log, t.st
	connID := sendConnection(l, st)
	var out core.LogOutcome
	if l.ConnectionID != nil && !s.siteMayUse(t.ctx, l, *l.ConnectionID) {
		out = s.failedAttempt(l, *l.ConnectionID, core.Permanent(fmt.Errorf("connection %d does not exist", *l.ConnectionID)))
	} else if connID == nil {
		out = s.failedAttempt(l, 0, core.Permanent(fmt.Errorf("no connection: the message names none and no %s is set", map[bool]string{false: "default connection", true: "fallback connection"}[l.UsedFallback])))
	} else if conn, err := t.conns.get(*connID); err != nil {
		out = s.failedAttempt(l, *connID, err)
	} else {
		var made attemptMade
		out, made = s.attempt(t.ctx, t.stop, l, conn, st, l.UsedFallback, t.held)
		if made != attemptSent && t.admitted {
			// Not tried after all: the quota place is given back, and
			// the message is counted when it is.
			s.o.SiteQuotas.ReleaseSite(context.WithoutCancel(t.ctx), l.SiteID)
		}
		switch made {
		case attemptDeferred:
			t.Outcome = deferred(l, out.NextAttemptAt)
			return true
		case attemptRateLimited:
			out.Status = core.StatusQueued
			t.Outcome = out
			return true
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
	case s.fallbackApplies(l, connID, st, t.conns):
		out.Status = core.StatusQueued
		out.NextAttemptAt = now
		out.UsedFallback = true
		out.PhaseAttempts = 0
	case settlePartial(&out):
		out.Delete = !st.keepDelivered(l.Source)
	default:
		out.Status = core.StatusFailed
	}
	s.logIfFailed(l, &out, t.conns)
	t.Outcome = out
	return true
}

// sendConnection is the connection l goes through: the fallback once
// the default failed it, else its own, else the default (nil when that
// one is not set).
func sendConnection(l *core.Log, st settings) *int64 {
	switch {
	case l.UsedFallback:
		return st.fallbackConn
	case l.ConnectionID != nil:
		return l.ConnectionID
	default:
		return st.defaultConn
	}
}
