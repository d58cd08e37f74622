package delivery

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Uncertain attempts (docs/delivery.md "Uncertain attempts"). An attempt
// whose message left whole with no answer (core.IsUncertain) may have
// been taken by the provider. It is recorded with OutcomeUncertain, and
// the log stays queued for the uncertain_grace_minutes setting with its
// last_error beginning with uncertainMark and its provider_message_id
// holding the Message-ID the message was sent with (without brackets).
// When it is claimed again, the engine looks the message up before
// anything else: at the provider when the transport is a core.Finder,
// else among the provider's webhook events recorded for the log since
// the attempt (Options.Events). Found: the log is delivered (or failed,
// when the events say the provider bounced or dropped it) with no
// resend. Not found: the message is sent again, with the same
// Message-ID, if its retries allow (else the fallback or failure follow
// as after any failed attempt).

// DefaultUncertainGrace is the uncertain_grace_minutes default.
const DefaultUncertainGrace = 10 * time.Minute

// uncertainMark begins the last_error of a log whose last attempt was
// uncertain and not yet resolved.
const uncertainMark = "Uncertain outcome (looked up before any resend): "

// ProviderEvents finds the provider events recorded for a log (the Pro
// webhook receiver records them; the Pro add-on sets Options.Events to
// app/pro/events.Uncertain).
type ProviderEvents interface {
	// LatestEventSince returns, of the provider events recorded for the
	// log logID that happened at or after since, the one recorded last;
	// ok is false when there is none.
	LatestEventSince(ctx context.Context, logID int64, since time.Time) (ev ProviderEvent, ok bool, err error)
}

// ProviderEvent is what the engine needs of a provider event to resolve
// an uncertain attempt.
type ProviderEvent struct {
	// Kind is the event's kind as the provider's webhook told it
	// (delivered, bounced, opened, ...), for the attempt's response.
	Kind string
	// At is when the provider says it happened.
	At time.Time
	// MessageID is the provider's message id the event carries, if any.
	MessageID string
	// Refused is true when the event says the provider bounced or
	// dropped the message: the log fails rather than being delivered.
	Refused bool
}

// uncertainPending reports whether l's last attempt was uncertain and is
// not resolved yet.
func uncertainPending(l *core.Log) bool {
	return strings.HasPrefix(l.LastError, uncertainMark) && l.ProviderMessageID != ""
}

// withMessageID returns msg with the Message-ID header its attempt of l
// is sent with: the message's own, else the one of l's unresolved
// uncertain attempt (so that a resend is the same message to the
// provider and the receivers), else a new one. The Message-ID makes the
// message findable should the attempt end uncertain.
func withMessageID(l *core.Log, msg *core.Message) *core.Message {
	if msg.MessageID() != "" {
		return msg
	}
	if uncertainPending(l) {
		return msg.WithMessageID("<" + l.ProviderMessageID + ">")
	}
	id, err := core.NewMessageID(msg.From.Email)
	if err != nil {
		return msg // the driver makes one
	}
	return msg.WithMessageID("<" + id + ">")
}

// markUncertain completes an uncertain attempt's outcome: the Message-ID
// sent is kept as the log's provider message id (the handle of the
// lookup, and of the provider's webhook events that carry it), and the
// log waits out the grace.
func markUncertain(out *core.LogOutcome, msg *core.Message, grace time.Duration) {
	id := strings.Trim(msg.MessageID(), "<> ")
	a := &out.History[len(out.History)-1]
	a.ProviderMessageID = id
	out.ProviderMessageID = id
	out.LastError = uncertainMark + a.Error
	out.Status = core.StatusQueued
	out.NextAttemptAt = time.Now().UTC().Add(grace)
}

// resolveUncertain looks up the message of l, whose last attempt was
// uncertain, and returns its outcome when it was found (delivered, or
// failed when the provider's events say it bounced or dropped it); ok is
// false when it was not found, and the caller sends it again.
func (s *engine) resolveUncertain(ctx context.Context, l *core.Log, st settings, conns *connLookup) (out core.LogOutcome, ok bool) {
	if l.SentConnectionID == nil {
		return out, false
	}
	conn, err := conns.get(*l.SentConnectionID)
	if err != nil {
		return out, false
	}
	msg := l.Message
	applyFrom(&msg, st)
	sent := withMessageID(l, &msg)
	found, how := core.Receipt{}, ""
	refused := false
	if tr, err := s.transports.get(conn); err == nil {
		if f, isFinder := tr.(core.Finder); isFinder {
			fctx, cancel := context.WithTimeout(ctx, s.o.SendTimeout)
			rc, hit, err := f.Find(fctx, sent)
			cancel()
			switch {
			case err != nil:
				s.o.Logger.Warn("look up a message after an uncertain attempt; sending it again", "log", l.ID, "connection", conn.ID, "err", err)
			case hit:
				found, how = rc, "found at the provider by its Message-ID"
			}
		}
	}
	if how == "" && s.o.Events != nil {
		if ev, hit := s.eventSince(ctx, l); hit {
			refused = ev.Refused
			found.MessageID = ev.MessageID
			how = fmt.Sprintf("the provider reported it %s (webhook event)", ev.Kind)
		}
	}
	if how == "" {
		return out, false
	}
	if found.MessageID == "" {
		found.MessageID = l.ProviderMessageID
	}
	a := core.Attempt{
		LogID: l.ID, ConnectionID: conn.ID, At: time.Now().UTC(), Outcome: core.OutcomeDelivered,
		Response:          strings.TrimSpace("After the uncertain attempt, " + how + ". " + found.Response),
		ProviderMessageID: found.MessageID,
	}
	out = core.LogOutcome{
		LogID: l.ID, Status: core.StatusDelivered,
		Attempts: l.Attempts, PhaseAttempts: l.PhaseAttempts, UsedFallback: l.UsedFallback,
		SentConnectionID: l.SentConnectionID, ProviderMessageID: found.MessageID,
	}
	if refused {
		a.Outcome = core.OutcomePermanent
		a.Error = a.Response
		a.Response = ""
		out.Status = core.StatusFailed
		out.LastError = a.Error
	} else {
		out.Delete = !st.keepDelivered(l.Source)
	}
	out.History = []core.Attempt{a}
	return out, true
}

// uncertainSpent is the outcome of l, whose uncertain attempt was its
// last allowed one on its connection and whose message was not found
// after the grace: the fallback connection takes over when it applies,
// else the log fails. Nothing is sent.
func (s *engine) uncertainSpent(l *core.Log, st settings, conns *connLookup) core.LogOutcome {
	var connID int64
	if l.SentConnectionID != nil {
		connID = *l.SentConnectionID
	}
	reason := "not found at the provider after the uncertain attempt, and no retries are left"
	out := core.LogOutcome{
		LogID: l.ID, Status: core.StatusFailed,
		Attempts: l.Attempts, PhaseAttempts: l.PhaseAttempts, UsedFallback: l.UsedFallback,
		SentConnectionID: l.SentConnectionID, LastError: reason,
		History: []core.Attempt{{LogID: l.ID, ConnectionID: connID, At: time.Now().UTC(), Outcome: core.OutcomePermanent, Error: reason}},
	}
	if s.fallbackApplies(l, l.SentConnectionID, st, conns) {
		out.Status = core.StatusQueued
		out.NextAttemptAt = time.Now().UTC()
		out.UsedFallback = true
		out.PhaseAttempts = 0
	}
	return out
}

// eventSince returns the latest provider event recorded for l since its
// last attempt (the uncertain one), if any.
func (s *engine) eventSince(ctx context.Context, l *core.Log) (ProviderEvent, bool) {
	full, err := s.o.Logs.FindLogByID(ctx, l.ID)
	if err != nil || len(full.History) == 0 {
		return ProviderEvent{}, false
	}
	since := full.History[len(full.History)-1].At.Add(-time.Minute) // the provider's clock may lag
	ev, ok, err := s.o.Events.LatestEventSince(ctx, l.ID, since)
	if err != nil {
		s.o.Logger.Warn("read provider events after an uncertain attempt; sending it again", "log", l.ID, "err", err)
		return ProviderEvent{}, false
	}
	return ev, ok
}
