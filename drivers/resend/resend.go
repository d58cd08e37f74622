// Package resend is the mail transport for the Resend email API. It
// registers itself as the driver "resend" when imported and sends with
// POST /emails, with an Idempotency-Key made of the message's Message-ID
// (apidriver.IdempotencyKey), so that Resend sends a request it already
// took (within 24 hours) once.
package resend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of Resend connections.
const Slug = "resend"

// DefaultBaseURL is the real Resend API, used when base_url is empty.
const DefaultBaseURL = "https://api.resend.com"

// KeyWebhookSecret is the settings key of the webhook's signing secret
// (whsec_...).
const KeyWebhookSecret = "webhook_secret"

// DefaultConcurrency is the default max_concurrency of a Resend
// connection: Resend's default rate limit is 2 requests a second per
// team, and more sends at once would mostly meet 429s.
const DefaultConcurrency = 2

// MaxRecipients is the most recipients the driver puts in one call:
// Resend takes at most 50 addresses in to.
const MaxRecipients = 50

// MaxMessageBytes is the largest message the driver sends: Resend takes
// 40 MB per email after base64 encoding: 30 MB before it.
const MaxMessageBytes = 30 << 20

// MaxKeyLen is the longest idempotency key Resend takes: 256
// characters.
const MaxKeyLen = 256

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:        Slug,
	Name:        "Resend",
	Description: "Send through the Resend email API with an API key.",
	SetupHelp:   "In Resend, open API Keys and create a key (Sending access is enough; it starts with re_).",
	APIKey:      apidriver.APIKeyField("API key", "A Resend API key (re_...); Sending access is enough."),
	FromHelp:    "Sender address; must be on a domain verified in Resend.",
	Extra: []core.Field{{Key: KeyWebhookSecret, Label: "Webhook signing secret", Type: core.FieldPassword, Advanced: true,
		Help: "Pro webhook receiver: the signing secret (whsec_...) shown on the webhook's page in Resend (Webhooks)."}},
	DefaultBaseURL:  DefaultBaseURL,
	Hosts:           []string{"api.resend.com"},
	Caps:            core.RecipientCaps{PerMessage: MaxRecipients, NeedsTo: true},
	Concurrency:     DefaultConcurrency,
	MaxMessageBytes: MaxMessageBytes,
	Auth:            apidriver.BearerAuth,
	Open: func(t *apidriver.JSONTransport, _ core.Settings) (core.Transport, error) {
		t.Client.Refused = idempotencyConflict
		return Transport{t}, nil
	},
}

// Driver returns the Resend driver description: schema, rules and
// constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one Resend connection. It is safe for
// concurrent use.
type Transport struct{ *apidriver.JSONTransport }

// Send implements core.Transport with POST /emails. The message's
// Message-ID, its recipients and its manual resends make the request's
// Idempotency-Key: the resend of an uncertain attempt is answered with
// the first request's id and not sent again.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	var out struct {
		ID string `json:"id"`
	}
	header := apidriver.IdempotencyHeader(msg, keyChars, MaxKeyLen)
	r, err := t.PostWithHeader(ctx, msg, "/emails", header, t.build(msg), &out)
	if err != nil {
		return core.Receipt{}, err
	}
	return core.Receipt{MessageID: out.ID, Response: r.StatusLine()}, nil
}

// Verify implements core.Verifier with the authenticated read GET
// /domains, which sends nothing. A key with Sending access only may not
// read: Resend answers it 401 restricted_api_key, which proves the key
// valid.
func (t Transport) Verify(ctx context.Context) error {
	return t.Client.Verify(ctx, http.MethodGet, "/domains", nil, func(r *apidriver.Response) bool {
		return r.Status == http.StatusUnauthorized && bytes.Contains(r.Body, []byte(`"restricted_api_key"`))
	})
}

type attachment struct {
	Content     string `json:"content"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	ContentID   string `json:"content_id,omitempty"`
}

type email struct {
	From        string            `json:"from"`
	To          []string          `json:"to"`
	Cc          []string          `json:"cc,omitempty"`
	Bcc         []string          `json:"bcc,omitempty"`
	ReplyTo     []string          `json:"reply_to,omitempty"`
	Subject     string            `json:"subject"`
	HTML        string            `json:"html,omitempty"`
	Text        string            `json:"text,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Attachments []attachment      `json:"attachments,omitempty"`
}

// build turns a message (the part its Envelope names) into Resend's
// body: addresses as "Name <email>", an inline image as an attachment
// with its content_id.
func (t Transport) build(msg *core.Message) email {
	msg = msg.ForEnvelope()
	e := email{From: t.Sender.Apply(msg.From).String(), To: apidriver.Mailboxes(msg.To), Cc: apidriver.Mailboxes(msg.Cc), Bcc: apidriver.Mailboxes(msg.Bcc),
		ReplyTo: apidriver.Mailboxes(msg.ReplyTo), Subject: msg.Subject, HTML: msg.HTML, Text: msg.Text}
	e.Headers = apidriver.CustomHeaders(msg)
	for _, a := range msg.Attachments {
		att := attachment{Content: apidriver.Base64(a.Data), Filename: a.Filename, ContentType: apidriver.ContentType(a)}
		if a.Inline {
			att.ContentID = a.ContentID
		}
		e.Attachments = append(e.Attachments, att)
	}
	return e
}

// keyChars are the characters the driver keeps of a Message-ID in an
// idempotency key: letters, digits, "-", "_", "." and "@" (Resend states
// only the length, 1 to 256 characters; these are safe in any header).
func keyChars(r rune) rune {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == '@':
		return r
	}
	return -1
}

// idempotencyConflict classifies Resend's two 409 answers to a request
// whose Idempotency-Key it already holds
// (https://resend.com/docs/dashboard/emails/idempotency-keys):
// concurrent_idempotent_requests (the first request with the key is
// still in progress) is uncertain, for Resend may yet send that one: the
// engine looks the message up after the grace and sends it again with
// the same key, which Resend then answers with the first request's id;
// invalid_idempotent_request (the key came within 24 hours with another
// body, so Resend took this message's Message-ID and recipients already)
// fails for good, as Resend says a retry with the key is useless. Any
// other answer is left to its status.
func idempotencyConflict(status int, body []byte) error {
	if status != http.StatusConflict {
		return nil
	}
	var answer struct {
		Name    string `json:"name"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &answer) // not Resend's error shape: the status decides
	switch answer.Name {
	case "concurrent_idempotent_requests":
		return core.Uncertain(fmt.Errorf("provider answered HTTP 409 %s: a request with this message's Idempotency-Key is still in progress and may send it: %s",
			answer.Name, apidriver.Summary(answer.Message)))
	case "invalid_idempotent_request":
		return core.Permanent(fmt.Errorf("provider answered HTTP 409 %s: a request with this message's Idempotency-Key (its Message-ID and recipients) and another body came within 24 hours, so it is not sent again: %s",
			answer.Name, apidriver.Summary(answer.Message)))
	}
	return nil
}
