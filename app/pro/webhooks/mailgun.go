package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// SignMailgun returns the hex HMAC-SHA256 of timestamp || token under
// key: Mailgun's webhook signature.
func SignMailgun(key, timestamp, token string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(timestamp + token))
	return hex.EncodeToString(m.Sum(nil))
}

// mailgunPayload is a Mailgun webhook body.
type mailgunPayload struct {
	Signature struct {
		Timestamp string `json:"timestamp"`
		Token     string `json:"token"`
		Signature string `json:"signature"`
	} `json:"signature"`
	EventData map[string]any `json:"event-data"`
}

// verifyMailgun checks the HMAC against each connection's signing key
// (constant time) and the timestamp against the window; the token is the
// call's replay id.
func verifyMailgun(req Request, secrets []core.Settings, now time.Time) (*batch, error) {
	var p mailgunPayload
	if err := json.Unmarshal(req.Body, &p); err != nil {
		return nil, core.Errorf(core.EBADREQUEST, "The Mailgun payload must be a JSON object with signature and event-data.")
	}
	sig, err := hex.DecodeString(p.Signature.Signature)
	if p.Signature.Timestamp == "" || p.Signature.Token == "" || err != nil || len(sig) != sha256.Size {
		return nil, unauthorized("The Mailgun signature is missing.")
	}
	ok := false
	for _, s := range secrets {
		m := hmac.New(sha256.New, []byte(s.String(KeyMailgunSigningKey)))
		m.Write([]byte(p.Signature.Timestamp + p.Signature.Token))
		if hmac.Equal(m.Sum(nil), sig) {
			ok = true
			break
		}
	}
	if !ok {
		return nil, unauthorized("The Mailgun signature does not verify.")
	}
	sec, err := strconv.ParseInt(p.Signature.Timestamp, 10, 64)
	if err != nil || !fresh(time.Unix(sec, 0), now) {
		return nil, unauthorized("The Mailgun timestamp is outside the accepted window.")
	}
	b := &batch{requestID: "token:" + p.Signature.Token}
	if p.EventData != nil {
		b.events = append(b.events, mailgunEvent(p.EventData))
	}
	return b, nil
}

// mailgunKinds are the kinds of Mailgun's event names; a failure is
// deferred unless its severity is permanent.
var mailgunKinds = eventKinds{"delivered": events.EventDelivered, "failed": events.EventDeferred, "rejected": events.EventDropped,
	"opened": events.EventOpened, "clicked": events.EventClicked, "complained": events.EventComplained}

// mailgunEvent reads event-data. The message id is
// message.headers["message-id"], without angle brackets (as the log keeps
// it).
func mailgunEvent(e map[string]any) Event {
	name := str(e, "event")
	ev := Event{Provider: ProviderMailgun, Raw: e, ProviderEvent: name, Recipient: cleanAddress(str(e, "recipient")),
		At: unixTime(num(e, "timestamp"))}
	if msg, ok := e["message"].(map[string]any); ok {
		if h, ok := msg["headers"].(map[string]any); ok {
			ev.MessageID = strings.Trim(str(h, "message-id"), "<> ")
		}
	}
	ev.Reason = str(e, "reason")
	if ds, ok := e["delivery-status"].(map[string]any); ok {
		if d := str(ds, "description"); d != "" {
			ev.Reason = d
		} else if d := str(ds, "message"); d != "" {
			ev.Reason = d
		}
	}
	ev.Kind = mailgunKinds.of(name)
	if name == "failed" && str(e, "severity") == "permanent" {
		// A permanent failure is a hard bounce when its reason says so;
		// generic, old and other permanent failures: the message failed,
		// the address is not known bad.
		r := str(e, "reason")
		ev.Kind, ev.Permanent = events.EventBounced, r == "" || r == "bounce" || r == "suppress-bounce"
	}
	return ev
}
