package webhooks

import (
	"fmt"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/app/pro/suppression"
	"github.com/mailsvc/mailsvc/core"
)

// Event is one provider event, in the receiver's own words.
type Event struct {
	Provider string
	// Kind is one of core's Event* names (delivered, bounced, ...).
	Kind string
	// ProviderEvent is the provider's own name of the event (e.g.
	// "spamreport", "failed", "Bounce").
	ProviderEvent string
	// MessageID is the provider message id the send returned, as the log
	// keeps it.
	MessageID string
	// HeaderMessageID is the message's own Message-ID header (without
	// brackets) when the event carries it (SendGrid's smtp-id, SES's
	// mail.commonHeaders.messageId). A log whose last attempt was
	// uncertain keeps that Message-ID as its provider message id until
	// the engine resolves it, so the event still finds its log.
	HeaderMessageID string
	Recipient       string
	At              time.Time
	// Permanent marks a hard bounce: the address does not take mail.
	Permanent bool
	// Reason is the provider's explanation (bounce reason, SMTP answer).
	Reason string
	// ID is the provider's unique id of the event, used to refuse the
	// same event twice; "" when the provider has none per event.
	ID string
	// Raw is the provider's event object as it arrived (the SES
	// notification for SES), for the host's mail_svc_pro_webhook_received.
	Raw map[string]any
}

// Transition is what an event does to its log and to the suppression
// list.
type Transition struct {
	// Status is the log's new status; "" leaves it as it is.
	Status    string
	LastError string
	// Suppress is the suppression reason for the recipient; "" adds
	// nothing.
	Suppress string
}

// TransitionOf maps an event to its effect (docs/pro.md, "Webhook
// receiver"):
//
//   - bounced, hard (permanent): the log becomes failed, the recipient is
//     suppressed;
//   - bounced, soft (the provider gave up on a temporary failure): failed,
//     not suppressed;
//   - complained: failed, the recipient is suppressed;
//   - dropped (the provider refused to send it): failed;
//   - unsubscribed (through the provider's link): the log stays as it
//     is, the recipient is suppressed;
//   - delivered, deferred, opened, clicked and others: recorded in the
//     log's events only; the log stays as it is (delivered means the
//     provider accepted it, which the log already says).
//
// Only a delivered or failed log moves: a queued or sending one (a
// resend in progress) keeps its state.
func TransitionOf(ev Event) Transition {
	reason := ev.Reason
	if reason != "" {
		reason = ": " + reason
	}
	switch ev.Kind {
	case events.EventBounced:
		if ev.Permanent {
			return Transition{Status: core.StatusFailed, LastError: fmt.Sprintf("bounced (hard) for %s%s", ev.Recipient, reason), Suppress: suppression.SuppressBounce}
		}
		return Transition{Status: core.StatusFailed, LastError: fmt.Sprintf("bounced (soft) for %s%s", ev.Recipient, reason)}
	case events.EventComplained:
		return Transition{Status: core.StatusFailed, LastError: fmt.Sprintf("complaint: %s reported the message as spam", ev.Recipient), Suppress: suppression.SuppressComplaint}
	case events.EventUnsubscribed:
		return Transition{Suppress: suppression.SuppressUnsubscribe}
	case events.EventDropped:
		return Transition{Status: core.StatusFailed, LastError: fmt.Sprintf("dropped by %s for %s%s", ev.Provider, ev.Recipient, reason)}
	}
	return Transition{}
}

// detail is what the log's event history keeps of ev.
func (ev Event) detail() map[string]any {
	d := map[string]any{"provider_event": ev.ProviderEvent, "message_id": ev.MessageID}
	if ev.Recipient != "" {
		d["recipient"] = ev.Recipient
	}
	if ev.Kind == events.EventBounced {
		d["permanent"] = ev.Permanent
	}
	if ev.Reason != "" {
		d["reason"] = truncate(ev.Reason, 1000)
	}
	if ev.ID != "" {
		d["event_id"] = ev.ID
	}
	return d
}

// payload is the event as mail_svc_pro_webhook_received hands it on.
func (ev Event) payload(logID int64, tr Transition) map[string]any {
	p := ev.detail()
	p["provider"] = ev.Provider
	p["event"] = ev.Kind
	p["at"] = ev.At.UTC().Format(time.RFC3339)
	p["log_id"] = logID
	p["status"] = tr.Status
	return p
}

// hostHook is the host's mail_svc_pro_webhook_received for ev: provider,
// event, log id (0 when no log matches), provider message id, recipient
// and the raw event.
func (ev Event) hostHook(logID int64) core.HostHook {
	raw := ev.Raw
	if raw == nil {
		raw = map[string]any{}
	}
	return core.HostHook{Name: core.HookWebhookReceived, Args: []any{ev.Provider, ev.Kind, logID, ev.MessageID, ev.Recipient, raw}}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// unixTime reads seconds since the epoch (integer or fractional);
// zero time when v is not a number.
func unixTime(v float64) time.Time {
	if v <= 0 {
		return time.Time{}
	}
	sec := int64(v)
	return time.Unix(sec, int64((v-float64(sec))*1e9)).UTC()
}

// eventKinds maps a provider's event names to the receiver's kinds
// (events.Event*).
type eventKinds map[string]string

// of is the kind of the provider's event name; a name the map does not
// list is events.EventOther.
func (k eventKinds) of(name string) string {
	if kind, ok := k[name]; ok {
		return kind
	}
	return events.EventOther
}

// cleanAddress lower-cases and trims an address from a payload.
func cleanAddress(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
