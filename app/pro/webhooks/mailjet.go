package webhooks

import (
	"strconv"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// verifyMailjet checks the HTTP Basic credentials of the event URL set
// in Mailjet (https://user:password@...) against each connection's
// webhook_password (and webhook_username when set), in constant time.
// Mailjet signs nothing and sends no timestamp: a replay is refused by
// the body's hash. The body is one event or a batch of them.
func verifyMailjet(req Request, secrets []core.Settings) (*batch, error) {
	if !basicAuthMatches(req, secrets, KeyWebhookUsername, KeyWebhookPassword) {
		return nil, unauthorized("The Mailjet webhook credentials do not match.")
	}
	return jsonEventBatch(req.Body, "Mailjet", mailjetEvent)
}

// mailjetEvent reads a Mailjet event. It finds its log by CustomID, the
// id the driver sent the message with and kept as its message id. Its
// own id is the event's name, Message_GUID (one per recipient) and time.
func mailjetEvent(e map[string]any) Event {
	name := str(e, "event")
	ev := Event{Provider: ProviderMailjet, Raw: e, ProviderEvent: name, MessageID: str(e, "CustomID"),
		Recipient: cleanAddress(str(e, "email")), At: unixTime(num(e, "time")), Reason: str(e, "error")}
	if guid := str(e, "Message_GUID"); guid != "" {
		ev.ID = name + ":" + guid + ":" + strconv.FormatFloat(num(e, "time"), 'f', 0, 64)
	}
	switch name {
	case "sent":
		ev.Kind = events.EventDelivered
	case "bounce":
		hard, _ := e["hard_bounce"].(bool)
		ev.Kind, ev.Permanent = events.EventBounced, hard
	case "spam":
		ev.Kind = events.EventComplained
	case "unsub":
		ev.Kind = events.EventUnsubscribed
	case "blocked":
		ev.Kind = events.EventDropped
	case "open":
		ev.Kind = events.EventOpened
	case "click":
		ev.Kind = events.EventClicked
	default:
		ev.Kind = events.EventOther
	}
	return ev
}
