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

// mailjetKinds are the kinds of Mailjet's event names.
var mailjetKinds = eventKinds{"sent": events.EventDelivered, "bounce": events.EventBounced, "spam": events.EventComplained,
	"unsub": events.EventUnsubscribed, "blocked": events.EventDropped, "open": events.EventOpened, "click": events.EventClicked}

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
	ev.Kind = mailjetKinds.of(name)
	if name == "bounce" {
		ev.Permanent, _ = e["hard_bounce"].(bool)
	}
	return ev
}
