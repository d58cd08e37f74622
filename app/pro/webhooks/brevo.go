package webhooks

import (
	"net/http"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// verifyBrevo checks the token of Brevo's webhook authentication against
// each connection's webhook_token, in constant time: sent as
// "Authorization: Bearer <token>" (Brevo's token authentication) or as
// the password of HTTP Basic credentials in the webhook URL. Brevo signs
// nothing and sends no timestamp to check: a replay is refused by the
// body's hash. The body is one event or a batch of them.
func verifyBrevo(req Request, secrets []core.Settings) (*batch, error) {
	token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok {
		_, token, ok = (&http.Request{Header: req.Header}).BasicAuth()
	}
	if !ok || token == "" {
		return nil, unauthorized("The Brevo webhook token is missing.")
	}
	if !tokenMatches(token, secrets, KeyBrevoToken) {
		return nil, unauthorized("The Brevo webhook token does not match.")
	}
	return jsonEventBatch(req.Body, "Brevo", brevoEvent)
}

// brevoKinds are the kinds of Brevo's transactional event names.
var brevoKinds = eventKinds{"delivered": events.EventDelivered, "deferred": events.EventDeferred, "click": events.EventClicked,
	"hard_bounce": events.EventBounced, "invalid_email": events.EventBounced, "soft_bounce": events.EventBounced,
	"spam": events.EventComplained, "complaint": events.EventComplained, "unsubscribed": events.EventUnsubscribed,
	"blocked": events.EventDropped, "error": events.EventDropped,
	"opened": events.EventOpened, "unique_opened": events.EventOpened, "proxy_open": events.EventOpened, "unique_proxy_open": events.EventOpened}

// brevoEvent reads a Brevo transactional event. Its message-id is the
// messageId the send returned, angle brackets included, as the log
// keeps it; without them it is the message's Message-ID.
func brevoEvent(e map[string]any) Event {
	name := str(e, "event")
	mid := str(e, "message-id")
	ev := Event{Provider: ProviderBrevo, Raw: e, ProviderEvent: name, MessageID: mid,
		HeaderMessageID: strings.Trim(mid, "<> "), Recipient: cleanAddress(str(e, "email")), Reason: str(e, "reason")}
	if ms := num(e, "ts_epoch"); ms > 0 {
		ev.At = time.UnixMilli(int64(ms)).UTC()
	} else {
		ev.At = unixTime(num(e, "ts_event"))
	}
	ev.Kind = brevoKinds.of(name)
	ev.Permanent = name == "hard_bounce" || name == "invalid_email"
	return ev
}
