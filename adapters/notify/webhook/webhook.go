// Package webhook is the "webhook" alert channel type: each alert is
// POSTed as JSON to a URL of the user's choice, signed with the channel's
// secret when it has one.
//
// The request:
//
//	POST <url>
//	Content-Type: application/json
//	User-Agent: mailsvc-alerts/1
//	X-Mailsvc-Event: <event, e.g. connection_down>
//	X-Mailsvc-Timestamp: <unix seconds when the request was signed>
//	X-Mailsvc-Signature: sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>
//
//	{"event":"connection_down","connection_id":3,"connection_name":"SES",
//	 "title":"...","message":"...","site":"https://example.com",
//	 "at":"2025-01-02T03:04:05Z","test":true}
//
// The body is core.Alert as JSON (connection_id, connection_name, log_id,
// site and test are left out when empty). X-Mailsvc-Signature is only
// sent when the channel has a secret. To check a request, a receiver
// computes HMAC-SHA256 with the secret as key over the exact bytes
// timestamp, ".", raw body, hex-encodes it (lower case), compares it in
// constant time with the header after its "sha256=" prefix (Verify does
// all of that), and rejects timestamps too far from its clock (five
// minutes, say) so a captured request cannot be replayed later.
//
// Any 2xx answer is success; 429 and 5xx are retried (honouring
// Retry-After), any other status is a permanent failure.
package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/core"
)

// Slug is the channel type's slug.
const Slug = "webhook"

// Settings keys.
const (
	KeyURL    = "url"
	KeySecret = "secret"
)

// Header names of the request.
const (
	HeaderEvent     = "X-Mailsvc-Event"
	HeaderTimestamp = "X-Mailsvc-Timestamp"
	HeaderSignature = "X-Mailsvc-Signature"
)

// signaturePrefix starts the X-Mailsvc-Signature value.
const signaturePrefix = "sha256="

func init() { core.RegisterChannelType(Type()) }

// Type returns the channel type as it is registered.
func Type() core.ChannelType {
	return core.ChannelType{
		Slug: Slug,
		Name: "Webhook",
		Fields: []core.Field{
			{Key: KeyURL, Label: "URL", Type: core.FieldURL, Required: true, Sensitive: true,
				Help: "Each alert is POSTed here as JSON. Loopback, link-local, private and other special-purpose addresses are refused unless MAILSVC_ALLOW_PRIVATE_WEBHOOKS is true."},
			{Key: KeySecret, Label: "Signing secret", Type: core.FieldPassword,
				Help: "When set, X-Mailsvc-Signature carries sha256=hex(HMAC-SHA256(secret, timestamp + \".\" + body)), timestamp being X-Mailsvc-Timestamp."},
		},
		Validate: func(s core.Settings) map[string]string { return notify.ValidateURL(s, KeyURL) },
		New:      New,
	}
}

// Notifier posts alerts to one webhook URL.
type Notifier struct {
	url    string
	secret string
	client *http.Client
	now    func() time.Time
}

// New returns the Notifier of a webhook channel.
func New(ch *core.NotificationChannel, env core.NotifierEnv) (core.Notifier, error) {
	u := ch.Settings.String(KeyURL)
	if u == "" {
		return nil, core.InvalidField(KeyURL, "This field is required.")
	}
	return &Notifier{url: u, secret: ch.Settings.String(KeySecret), client: notify.Client(env), now: time.Now}, nil
}

// Notify posts a as JSON, signed when the channel has a secret, and
// returns the receiver's status and answer in words.
func (n *Notifier) Notify(ctx context.Context, a core.Alert) (string, error) {
	body, err := json.Marshal(a)
	if err != nil {
		return "", core.Permanent(fmt.Errorf("webhook: encoding the alert: %w", err))
	}
	ts := strconv.FormatInt(n.now().Unix(), 10)
	h := http.Header{}
	h.Set(HeaderEvent, a.Event)
	h.Set(HeaderTimestamp, ts)
	if n.secret != "" {
		h.Set(HeaderSignature, Sign(n.secret, ts, body))
	}
	resp, err := notify.Post(ctx, n.client, "The webhook", n.url, body, h)
	if err != nil {
		return "", notify.Scrub(err, n.url, n.secret)
	}
	return notify.ScrubText(notify.AnswerText("The webhook", resp), n.url, n.secret), nil
}

// Sign returns the X-Mailsvc-Signature value of body sent at timestamp
// (the X-Mailsvc-Timestamp value): "sha256=" followed by the lower-case
// hex HMAC-SHA256, keyed with secret, of timestamp + "." + body.
func Sign(secret, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether signature (an X-Mailsvc-Signature value) is the
// signature of body sent at timestamp with secret. It compares in
// constant time. It does not judge the timestamp's age: receivers should
// also refuse old timestamps.
func Verify(secret, timestamp, body, signature string) bool {
	if secret == "" || !strings.HasPrefix(signature, signaturePrefix) {
		return false
	}
	got, err := hex.DecodeString(strings.TrimPrefix(signature, signaturePrefix))
	if err != nil {
		return false
	}
	want, _ := hex.DecodeString(strings.TrimPrefix(Sign(secret, timestamp, []byte(body)), signaturePrefix))
	return hmac.Equal(got, want)
}
