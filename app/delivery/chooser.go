package delivery

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Choice is a ConnectionChooser's answer for one message: the connections
// to try, in order, and a description of what chose them (a routing rule,
// a sender group), which the engine writes at the start of each attempt's
// Response ("chosen by <Rule>: ..."). An empty ConnectionIDs list means no
// opinion: the default connection and the fallback apply as without a
// chooser.
type Choice struct {
	ConnectionIDs []int64
	Rule          string
}

// ConnectionChooser picks the connections of a message that names none
// (Pro: routing rules, then sender groups). Options.Chooser calls it
// before every attempt of such a message, so it must answer fast (from a
// short cache) and give the same list for the same message while its
// configuration is unchanged.
//
// The engine tries the list in order with the usual retries on each
// connection: a temporary failure is retried on the same connection (with
// backoff) up to the retry limit; a permanent failure, the retries
// running out, or a connection-level failure (see
// ConnectionFailureObserver) moves the message to the next connection of
// the list at once (its phase counter back to 0); after the last one the
// message fails. The list replaces "default connection, then fallback": the free
// fallback does not follow a chooser's list (a chooser that wants it
// appends it). Which entry is tried now is read from the log: a new
// message (no attempt yet, or resent) starts at the first; a retry stays
// on the log's SentConnectionID; a message moved on goes to the entry
// after SentConnectionID. A list that does not hold SentConnectionID
// starts again at its first entry.
//
// An error from Choose is taken as temporary: the attempt fails with it
// and the message is retried like a temporary send failure.
//
// The chooser hears of attempts through a chosen connection that failed
// at the connection level (ConnectionFailureObserver).
type ConnectionChooser interface {
	Choose(ctx context.Context, l *core.Log) (Choice, error)
	ConnectionFailureObserver
}

// ConnectionFailureObserver hears of attempts through a chosen
// connection that failed at the connection level (the provider
// unreachable, no answer in time, the credentials refused; see
// connectionLevel), so that it can stop choosing that connection at once
// (Pro: the sender group member is marked down; a chooser that keeps no
// such state does nothing). Whatever the observer does, such a failure
// moves the message on to the next connection of the list at once
// instead of retrying the failed connection (the last one of the list is
// retried as usual). ConnectionFailed is called on the delivery path: it
// must return fast.
type ConnectionFailureObserver interface {
	ConnectionFailed(ctx context.Context, connectionID int64, reason string)
}

// choiceIndex returns the entry of ids to try now for l (see
// ConnectionChooser); len(ids) when the list is used up.
func choiceIndex(l *core.Log, ids []int64) int {
	if l.Attempts == 0 || l.SentConnectionID == nil {
		return 0
	}
	i := slices.Index(ids, *l.SentConnectionID)
	switch {
	case i < 0:
		return 0
	case l.PhaseAttempts > 0:
		return i
	default:
		return i + 1
	}
}

// decideChosen makes one attempt of l, a message without an explicit
// connection, through the connections the Chooser picks. It reports false
// when there is no chooser or it has no opinion: the free logic applies.
// held is the send slot granted to l before its decision, or nil (see
// attempt).
func (s *engine) decideChosen(ctx, stop context.Context, l *core.Log, st settings, conns *connLookup, held *heldSlot) (core.LogOutcome, bool) {
	if s.o.Chooser == nil || l.ConnectionID != nil || l.UsedFallback {
		return core.LogOutcome{}, false
	}
	now := time.Now().UTC()
	choice, err := s.o.Chooser.Choose(ctx, l)
	if err != nil {
		out := s.failedAttempt(l, 0, core.Temporary(fmt.Errorf("choose a connection: %w", err)))
		out.Status = core.StatusQueued
		out.NextAttemptAt = now.Add(s.Backoff(out.PhaseAttempts))
		if out.PhaseAttempts > st.maxRetries {
			out.Status, out.NextAttemptAt = core.StatusFailed, time.Time{}
		}
		return out, true
	}
	if len(choice.ConnectionIDs) == 0 {
		return core.LogOutcome{}, false
	}
	i := choiceIndex(l, choice.ConnectionIDs)
	var out core.LogOutcome
	connDown := false
	if i >= len(choice.ConnectionIDs) {
		out = s.failedAttempt(l, 0, core.Permanent(fmt.Errorf("every connection chosen by %s has been tried", choice.Rule)))
	} else if conn, err := conns.get(choice.ConnectionIDs[i]); err != nil {
		out = s.failedAttempt(l, choice.ConnectionIDs[i], err)
	} else {
		var made attemptMade
		out, made = s.attempt(ctx, stop, l, conn, st, false, held)
		switch made {
		case attemptDeferred:
			return deferred(l, out.NextAttemptAt), true
		case attemptRateLimited:
			out.Status = core.StatusQueued
			out.History[0].Response = "chosen by " + choice.Rule
			return out, true
		}
		if a := out.History[0]; a.Outcome != core.OutcomeDelivered && a.Outcome != core.OutcomeSimulated && a.Outcome != core.OutcomeUncertain && connectionLevel(a.Error) {
			connDown = true
			s.o.Chooser.ConnectionFailed(ctx, conn.ID, a.Error)
		}
	}
	a := &out.History[len(out.History)-1]
	a.Response = "chosen by " + choice.Rule + ": " + a.Response
	switch {
	case a.Outcome == core.OutcomeDelivered || a.Outcome == core.OutcomeSimulated:
		out.Status = core.StatusDelivered
		out.Delete = !st.keepDelivered(l.Source)
	case a.Outcome == core.OutcomeUncertain:
		// Queued until the grace ends (markUncertain), on this connection.
	case a.Outcome == core.OutcomeTemporary && out.PhaseAttempts <= st.maxRetries && (!connDown || i+1 >= len(choice.ConnectionIDs)):
		out.Status = core.StatusQueued
		out.NextAttemptAt = now.Add(s.Backoff(out.PhaseAttempts))
	case i+1 < len(choice.ConnectionIDs):
		// Move on to the next connection of the list, at once (also after
		// a connection-level failure, which retries would only repeat).
		out.Status = core.StatusQueued
		out.NextAttemptAt = now
		out.PhaseAttempts = 0
	case settlePartial(&out):
		out.Delete = !st.keepDelivered(l.Source)
	default:
		out.Status = core.StatusFailed
	}
	return out, true
}
