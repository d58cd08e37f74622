package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// MailerSendSignatureHeader carries the signature of MailerSend's
// webhook calls.
const MailerSendSignatureHeader = "Signature"

// SignMailerSend returns the hex HMAC-SHA256 of body under secret:
// MailerSend's webhook signature.
func SignMailerSend(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// verifyMailerSend checks the Signature header against each
// connection's webhook_secret, in constant time. MailerSend sends no
// timestamp to check: a replay is refused by the body's hash (which the
// signature covers) and each event by its activity id.
func verifyMailerSend(req Request, secrets []core.Settings) (*batch, error) {
	sig, err := hex.DecodeString(req.Header.Get(MailerSendSignatureHeader))
	if err != nil || len(sig) != sha256.Size {
		return nil, unauthorized("The MailerSend signature is missing.")
	}
	ok := false
	for _, s := range secrets {
		want, _ := hex.DecodeString(SignMailerSend(s.String(KeyWebhookSecret), req.Body))
		if hmac.Equal(sig, want) {
			ok = true
			break
		}
	}
	if !ok {
		return nil, unauthorized("The MailerSend signature does not verify.")
	}
	var e map[string]any
	if err := json.Unmarshal(req.Body, &e); err != nil || e == nil {
		return nil, core.Errorf(core.EBADREQUEST, "The MailerSend payload must be a JSON object.")
	}
	return &batch{requestID: bodyID(req.Body), events: []Event{mailerSendEvent(e)}}, nil
}

// mailerSendKinds are the kinds of MailerSend's activity event types.
var mailerSendKinds = eventKinds{"activity.delivered": events.EventDelivered,
	"activity.hard_bounced": events.EventBounced, "activity.soft_bounced": events.EventBounced,
	"activity.spam_complaint": events.EventComplained, "activity.unsubscribed": events.EventUnsubscribed,
	"activity.opened": events.EventOpened, "activity.opened_unique": events.EventOpened,
	"activity.clicked": events.EventClicked, "activity.clicked_unique": events.EventClicked}

// mailerSendEvent reads a MailerSend activity event. It finds its log by
// data.email.message.id, the X-Message-Id the send returned.
func mailerSendEvent(e map[string]any) Event {
	name := str(e, "type")
	data, _ := e["data"].(map[string]any)
	email, _ := data["email"].(map[string]any)
	message, _ := email["message"].(map[string]any)
	recipient, _ := email["recipient"].(map[string]any)
	ev := Event{Provider: ProviderMailerSend, Raw: e, ProviderEvent: name, MessageID: str(message, "id"),
		Recipient: cleanAddress(str(recipient, "email")), ID: str(data, "id")}
	if t, err := time.Parse(time.RFC3339Nano, str(data, "created_at")); err == nil {
		ev.At = t.UTC()
	}
	if morph, ok := data["morph"].(map[string]any); ok {
		ev.Reason = str(morph, "reason")
	}
	ev.Kind = mailerSendKinds.of(name)
	ev.Permanent = name == "activity.hard_bounced"
	return ev
}
