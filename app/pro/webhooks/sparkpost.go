package webhooks

import (
	"encoding/json"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// sparkPostHardClasses are SparkPost's bounce classes that mean the
// address does not take mail: 10 invalid recipient, 30 generic bounce
// with no recipient, 90 unsubscribe.
var sparkPostHardClasses = map[string]bool{"10": true, "30": true, "90": true}

// verifySparkPost checks the HTTP Basic credentials of SparkPost's
// webhook authentication against each connection's webhook_password (and
// webhook_username when set), in constant time. SparkPost signs nothing
// and sends no timestamp: a replay is refused by the body's hash, and
// each event by its event_id.
func verifySparkPost(req Request, secrets []core.Settings) (*batch, error) {
	if !basicAuthMatches(req, secrets, KeyWebhookUsername, KeyWebhookPassword) {
		return nil, unauthorized("The SparkPost webhook credentials do not match.")
	}
	var list []map[string]any
	if err := json.Unmarshal(req.Body, &list); err != nil {
		return nil, core.Errorf(core.EBADREQUEST, "The SparkPost payload must be a JSON array of events.")
	}
	b := &batch{requestID: bodyID(req.Body)}
	for _, item := range list {
		msys, _ := item["msys"].(map[string]any)
		for _, group := range msys {
			if e, ok := group.(map[string]any); ok {
				b.events = append(b.events, sparkPostEvent(e))
			}
		}
	}
	return b, nil
}

// sparkPostKinds are the kinds of SparkPost's event types.
var sparkPostKinds = eventKinds{"delivery": events.EventDelivered, "bounce": events.EventBounced, "out_of_band": events.EventBounced,
	"spam_complaint": events.EventComplained, "list_unsubscribe": events.EventUnsubscribed, "link_unsubscribe": events.EventUnsubscribed,
	"policy_rejection": events.EventDropped, "generation_failure": events.EventDropped, "generation_rejection": events.EventDropped,
	"delay": events.EventDeferred, "open": events.EventOpened, "initial_open": events.EventOpened, "amp_open": events.EventOpened,
	"amp_initial_open": events.EventOpened, "click": events.EventClicked, "amp_click": events.EventClicked}

// sparkPostEvent reads one event of a msys group (message_event,
// track_event, unsubscribe_event, ...). It finds its log by
// transmission_id, the id the send returned.
func sparkPostEvent(e map[string]any) Event {
	name := str(e, "type")
	ev := Event{Provider: ProviderSparkPost, Raw: e, ProviderEvent: name, MessageID: str(e, "transmission_id"),
		Recipient: cleanAddress(str(e, "rcpt_to")), At: unixTime(num(e, "timestamp")), Reason: str(e, "reason"), ID: str(e, "event_id")}
	if ev.Reason == "" {
		ev.Reason = str(e, "raw_reason")
	}
	ev.Kind = sparkPostKinds.of(name)
	if ev.Kind == events.EventBounced {
		ev.Permanent = sparkPostHardClasses[str(e, "bounce_class")]
		ev.ProviderEvent = name + "/" + str(e, "bounce_class")
	}
	return ev
}
