// Package emailit is the mail transport for the Emailit Email API (v2).
// It registers itself as the driver "emailit" when imported and sends
// each message with POST /v2/emails, with an Idempotency-Key made of its
// Message-ID (apidriver.IdempotencyKey).
package emailit

import (
	"context"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of Emailit connections.
const Slug = "emailit"

// DefaultBaseURL is the real API, used when base_url is empty.
const DefaultBaseURL = "https://api.emailit.com"

// MaxPerField is the most addresses Emailit takes in each of to, cc and
// bcc.
const MaxPerField = 50

// MaxMessageBytes caps a whole message: 20 MB (mailsvc's cap; Emailit
// states none).
const MaxMessageBytes = 20 << 20

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:           Slug,
	Name:           "Emailit",
	Description:    "Send through the Emailit Email API with an API key.",
	SetupHelp:      "In Emailit, open Credentials (API keys) and create a sending API key (it starts with secret_).",
	APIKey:         apidriver.APIKeyField("API key", "An Emailit API key."),
	FromHelp:       "Sender address; its domain must be a verified sending domain in Emailit.",
	DefaultBaseURL: DefaultBaseURL,
	Hosts:          []string{"api.emailit.com"},
	Caps:           core.RecipientCaps{To: MaxPerField, Cc: MaxPerField, Bcc: MaxPerField, NeedsTo: true},
	Auth:           apidriver.BearerAuth,
	VerifyRead:     "/v2/domains",
	Open:           func(t *apidriver.JSONTransport, _ core.Settings) (core.Transport, error) { return Transport{t}, nil },
}

// Driver returns the Emailit driver description: schema, rules and
// constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one Emailit connection. It is safe for
// concurrent use.
type Transport struct{ *apidriver.JSONTransport }

type attachment struct {
	Filename    string `json:"filename"`
	Content     string `json:"content"`
	ContentType string `json:"content_type"`
	ContentID   string `json:"content_id,omitempty"`
}

type request struct {
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

// Send implements core.Transport. The message's Message-ID, its
// recipients and its manual resends make the request's Idempotency-Key
// (apidriver.IdempotencyKey): Emailit sends a request it already took
// (within 24 hours) once.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	if err := apidriver.CheckSize(msg, MaxMessageBytes); err != nil {
		return core.Receipt{}, err
	}
	msg = msg.ForEnvelope()
	r := request{From: apidriver.Mailbox(t.Sender.Apply(msg.From)), To: apidriver.Mailboxes(msg.To), Cc: apidriver.Mailboxes(msg.Cc),
		Bcc: apidriver.Mailboxes(msg.Bcc), ReplyTo: apidriver.Mailboxes(msg.ReplyTo), Subject: msg.Subject, HTML: msg.HTML, Text: msg.Text,
		Headers: apidriver.CustomHeaders(msg)}
	if r.HTML == "" && r.Text == "" {
		r.Text = "\n" // Emailit requires html or text
	}
	for _, a := range msg.Attachments {
		att := attachment{Filename: a.Filename, Content: apidriver.Base64(a.Data), ContentType: apidriver.ContentType(a)}
		if apidriver.IsInline(a) {
			att.ContentID = a.ContentID
		}
		r.Attachments = append(r.Attachments, att)
	}
	header := apidriver.IdempotencyHeader(msg, keyChars, maxKeyLen)
	var out struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if _, err := t.Client.DoWithHeader(ctx, "send", http.MethodPost, "/v2/emails", header, &r, &out); err != nil {
		return core.Receipt{}, err
	}
	return core.Receipt{MessageID: out.ID, Response: strings.TrimSpace("200 " + out.Status + " " + out.ID)}, nil
}

// keyChars are the characters Emailit takes in an idempotency key:
// letters, digits, dashes and underscores; the "." and "@" of a
// Message-ID become underscores, anything else is dropped.
func keyChars(r rune) rune {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
		return r
	case r == '.' || r == '@':
		return '_'
	}
	return -1
}

// maxKeyLen is the longest idempotency key Emailit takes.
const maxKeyLen = 256
