package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// Headers of Resend's webhook calls, signed the Svix way.
const (
	SvixIDHeader        = "svix-id"
	SvixTimestampHeader = "svix-timestamp"
	SvixSignatureHeader = "svix-signature"
)

// SignSvix returns the "v1,<base64>" signature of a Svix-signed call:
// HMAC-SHA256 of id "." timestamp "." body under the secret's key (the
// base64 after "whsec_"). It reports false when the secret is not one.
func SignSvix(secret, id, timestamp string, body []byte) (string, bool) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(strings.TrimSpace(secret), "whsec_"))
	if err != nil || len(key) == 0 {
		return "", false
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + timestamp + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil)), true
}

// verifyResend checks the Svix signature of the call against each
// connection's webhook_secret (any of the space-separated v1 signatures
// may match, as during a secret's rotation) and the timestamp against
// the window; svix-id, which the signature covers, is the call's replay
// id.
func verifyResend(req Request, secrets []core.Settings, now time.Time) (*batch, error) {
	id, ts, sigs := req.Header.Get(SvixIDHeader), req.Header.Get(SvixTimestampHeader), req.Header.Get(SvixSignatureHeader)
	if id == "" || ts == "" || sigs == "" {
		return nil, unauthorized("The Resend signature headers are missing.")
	}
	ok := false
	for _, s := range secrets {
		want, valid := SignSvix(s.String(KeyWebhookSecret), id, ts, req.Body)
		for _, sig := range strings.Fields(sigs) {
			if valid && hmac.Equal([]byte(sig), []byte(want)) {
				ok = true
			}
		}
	}
	if !ok {
		return nil, unauthorized("The Resend signature does not verify.")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || !fresh(time.Unix(sec, 0), now) {
		return nil, unauthorized("The Resend timestamp is outside the accepted window.")
	}
	var e map[string]any
	if err := json.Unmarshal(req.Body, &e); err != nil || e == nil {
		return nil, core.Errorf(core.EBADREQUEST, "The Resend payload must be a JSON object.")
	}
	return &batch{requestID: "svix:" + id, events: []Event{resendEvent(e)}}, nil
}

// resendKinds are the kinds of Resend's event types.
var resendKinds = eventKinds{"email.delivered": events.EventDelivered, "email.bounced": events.EventBounced,
	"email.complained": events.EventComplained, "email.failed": events.EventDropped, "email.suppressed": events.EventDropped,
	"email.delivery_delayed": events.EventDeferred, "email.opened": events.EventOpened, "email.clicked": events.EventClicked}

// resendEvent reads a Resend event: its type and data, whose email_id is
// the id the send returned.
func resendEvent(e map[string]any) Event {
	name := str(e, "type")
	data, _ := e["data"].(map[string]any)
	ev := Event{Provider: ProviderResend, Raw: e, ProviderEvent: name, MessageID: str(data, "email_id")}
	if to, _ := data["to"].([]any); len(to) > 0 {
		first, _ := to[0].(string)
		ev.Recipient = cleanAddress(first)
	}
	if t, err := time.Parse(time.RFC3339Nano, str(e, "created_at")); err == nil {
		ev.At = t.UTC()
	}
	ev.Kind = resendKinds.of(name)
	switch name {
	case "email.bounced":
		bounce, _ := data["bounce"].(map[string]any)
		ev.Permanent, ev.Reason = str(bounce, "type") == "Permanent", str(bounce, "message")
		ev.ProviderEvent = name + "/" + str(bounce, "type")
	case "email.failed", "email.suppressed":
		if f, ok := data["failed"].(map[string]any); ok {
			ev.Reason = str(f, "reason")
		}
	}
	return ev
}
