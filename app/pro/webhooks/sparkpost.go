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
	switch name {
	case "delivery":
		ev.Kind = events.EventDelivered
	case "bounce", "out_of_band":
		ev.Kind = events.EventBounced
		ev.Permanent = sparkPostHardClasses[str(e, "bounce_class")]
		ev.ProviderEvent = name + "/" + str(e, "bounce_class")
	case "spam_complaint":
		ev.Kind = events.EventComplained
	case "list_unsubscribe", "link_unsubscribe":
		ev.Kind = events.EventUnsubscribed
	case "policy_rejection", "generation_failure", "generation_rejection":
		ev.Kind = events.EventDropped
	case "delay":
		ev.Kind = events.EventDeferred
	case "open", "initial_open", "amp_open", "amp_initial_open":
		ev.Kind = events.EventOpened
	case "click", "amp_click":
		ev.Kind = events.EventClicked
	default:
		ev.Kind = events.EventOther
	}
	return ev
}
