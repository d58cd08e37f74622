package webhooks

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// verifyPostmark checks the HTTP Basic credentials of the call against
// each connection's webhook_password (and webhook_username when set), in
// constant time. Postmark signs nothing and sends no timestamp to check:
// a replay is refused by the body's hash, remembered for ReplayMemory.
func verifyPostmark(req Request, secrets []core.Settings) (*batch, error) {
	if _, _, ok := (&http.Request{Header: req.Header}).BasicAuth(); !ok {
		return nil, unauthorized("The Postmark webhook credentials are missing.")
	}
	if !basicAuthMatches(req, secrets, KeyPostmarkUsername, KeyPostmarkPassword) {
		return nil, unauthorized("The Postmark webhook credentials do not match.")
	}
	var e map[string]any
	if err := json.Unmarshal(req.Body, &e); err != nil {
		return nil, core.Errorf(core.EBADREQUEST, "The Postmark payload must be a JSON object.")
	}
	return &batch{requestID: bodyID(req.Body), events: []Event{postmarkEvent(e)}}, nil
}

// Postmark bounce type codes that mean the address does not take mail.
var postmarkHard = map[float64]bool{1: true, 100000: true} // HardBounce, BadEmailAddress

// Postmark bounce type codes of a temporary failure (Postmark retries).
var postmarkSoft = map[float64]bool{2: true, 256: true, 4096: true} // Transient, DnsError, SoftBounce

// postmarkKinds are the kinds of Postmark's record types; a Bounce is
// read by its type code.
var postmarkKinds = eventKinds{"Delivery": events.EventDelivered, "SpamComplaint": events.EventComplained,
	"Open": events.EventOpened, "Click": events.EventClicked}

// postmarkEvent reads a Postmark webhook object by its RecordType.
func postmarkEvent(e map[string]any) Event {
	rt := str(e, "RecordType")
	ev := Event{Provider: ProviderPostmark, Raw: e, ProviderEvent: rt, MessageID: str(e, "MessageID")}
	ev.Recipient = cleanAddress(str(e, "Recipient"))
	if ev.Recipient == "" {
		ev.Recipient = cleanAddress(str(e, "Email"))
	}
	for _, k := range []string{"DeliveredAt", "BouncedAt", "ReceivedAt", "ChangedAt"} {
		if t, err := time.Parse(time.RFC3339, str(e, k)); err == nil {
			ev.At = t.UTC()
			break
		}
	}
	ev.Reason = str(e, "Description")
	if ev.Reason == "" {
		ev.Reason = str(e, "Details")
	}
	ev.Kind = postmarkKinds.of(rt)
	if rt == "Bounce" {
		code := num(e, "TypeCode")
		inactive, _ := e["Inactive"].(bool)
		switch {
		case code == 100001 || strings.EqualFold(str(e, "Type"), "SpamComplaint"):
			ev.Kind = events.EventComplained
		case postmarkHard[code] || strings.EqualFold(str(e, "Type"), "HardBounce") || inactive:
			ev.Kind, ev.Permanent = events.EventBounced, true
		case postmarkSoft[code]:
			ev.Kind = events.EventDeferred
		}
		ev.ProviderEvent = rt + "/" + str(e, "Type")
	}
	return ev
}
