package webhooks

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// SendGrid's signed Event Webhook headers.
const (
	SendGridSignatureHeader = "X-Twilio-Email-Event-Webhook-Signature"
	SendGridTimestampHeader = "X-Twilio-Email-Event-Webhook-Timestamp"
)

// ParseSendGridKey reads a SendGrid verification key: base64 of a DER
// SubjectPublicKeyInfo holding an ECDSA P-256 key.
func ParseSendGridKey(b64 string) (*ecdsa.PublicKey, error) {
	der, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return nil, core.InvalidField(KeySendGridPublicKey, "Must be the base64 verification key SendGrid shows.")
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, core.InvalidField(KeySendGridPublicKey, "Must be the base64 verification key SendGrid shows.")
	}
	ek, ok := k.(*ecdsa.PublicKey)
	if !ok {
		return nil, core.InvalidField(KeySendGridPublicKey, "Must be an ECDSA key.")
	}
	return ek, nil
}

// VerifySendGrid reports whether signature (base64 of an ASN.1 ECDSA
// signature) signs SHA-256(timestamp || body) under key.
func VerifySendGrid(key *ecdsa.PublicKey, timestamp string, body []byte, signature string) bool {
	return verifySendGridDigest(key, sendGridDigest(timestamp, body), signature)
}

// sendGridDigest is SHA-256(timestamp || body): what a SendGrid
// signature signs.
func sendGridDigest(timestamp string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(timestamp))
	h.Write(body)
	return h.Sum(nil)
}

func verifySendGridDigest(key *ecdsa.PublicKey, digest []byte, signature string) bool {
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(signature))
	if err != nil {
		return false
	}
	return ecdsa.VerifyASN1(key, digest, sig)
}

// verifySendGrid checks the signature against each connection's key and
// the timestamp against the window, then reads the events. The call's
// replay id is the signed digest, not the signature: an ECDSA signature
// can be rewritten without the key (s → n−s, another base64 spelling of
// the same bytes) and still verify, so a key on its text would let a
// caller replay a seen call under a new spelling.
func verifySendGrid(req Request, secrets []core.Settings, now time.Time) (*batch, error) {
	sig := req.Header.Get(SendGridSignatureHeader)
	ts := req.Header.Get(SendGridTimestampHeader)
	if sig == "" || ts == "" {
		return nil, unauthorized("The SendGrid signature headers are missing.")
	}
	digest := sendGridDigest(ts, req.Body)
	ok := false
	for _, s := range secrets {
		key, err := ParseSendGridKey(s.String(KeySendGridPublicKey))
		if err == nil && verifySendGridDigest(key, digest, sig) {
			ok = true
			break
		}
	}
	if !ok {
		return nil, unauthorized("The SendGrid signature does not verify.")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || !fresh(time.Unix(sec, 0), now) {
		return nil, unauthorized("The SendGrid timestamp is outside the accepted window.")
	}
	var raw []map[string]any
	if err := json.Unmarshal(req.Body, &raw); err != nil {
		return nil, core.Errorf(core.EBADREQUEST, "The SendGrid payload must be a JSON array of events.")
	}
	b := &batch{requestID: "signed:" + hex.EncodeToString(digest)}
	for _, e := range raw {
		b.events = append(b.events, sendGridEvent(e))
	}
	return b, nil
}

// fresh reports whether a signed time is within Window of now.
func fresh(t, now time.Time) bool {
	d := now.Sub(t)
	return d <= Window && d >= -Window
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func num(m map[string]any, key string) float64 {
	switch v := m[key].(type) {
	case float64:
		return v
	case string:
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	return 0
}

// sendGridKinds are the kinds of SendGrid's event names.
var sendGridKinds = eventKinds{"delivered": events.EventDelivered, "bounce": events.EventBounced, "dropped": events.EventDropped,
	"deferred": events.EventDeferred, "open": events.EventOpened, "click": events.EventClicked, "spamreport": events.EventComplained}

// sendGridEvent reads one event of the array. sg_message_id is the
// X-Message-Id of the send followed by '.' and a suffix: the part before
// the first '.' is the log's provider message id.
func sendGridEvent(e map[string]any) Event {
	name := str(e, "event")
	ev := Event{Provider: ProviderSendGrid, Raw: e, ProviderEvent: name, Recipient: cleanAddress(str(e, "email")),
		At: unixTime(num(e, "timestamp")), ID: str(e, "sg_event_id")}
	ev.MessageID, _, _ = strings.Cut(str(e, "sg_message_id"), ".")
	ev.HeaderMessageID = strings.Trim(str(e, "smtp-id"), "<> ")
	ev.Reason = str(e, "reason")
	if ev.Reason == "" {
		ev.Reason = str(e, "response")
	}
	ev.Kind = sendGridKinds.of(name)
	// A bounce of type "blocked" is a refusal of this message, not of the
	// address.
	ev.Permanent = name == "bounce" && str(e, "type") != "blocked"
	return ev
}
