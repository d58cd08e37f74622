// Package mailersend is the mail transport for the MailerSend email API.
// It registers itself as the driver "mailersend" when imported and sends
// with POST /v1/email.
package mailersend

import (
	"context"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of MailerSend connections.
const Slug = "mailersend"

// DefaultBaseURL is the real MailerSend API, used when base_url is
// empty.
const DefaultBaseURL = "https://api.mailersend.com"

// Settings keys of a MailerSend connection beside the common ones.
const (
	// KeyWebhookSecret holds the webhook's signing secret.
	KeyWebhookSecret = "webhook_secret"
	// KeyCustomHeaders sends the message's own headers, which only
	// MailerSend's Professional and Enterprise plans take.
	KeyCustomHeaders = "custom_headers"
)

// Recipient caps of one MailerSend email.
const (
	MaxTo  = 50
	MaxCc  = 10
	MaxBcc = 10
)

// MaxMessageBytes is the largest message the driver sends: MailerSend
// takes 25 MB per email, attachments included.
const MaxMessageBytes = 25 << 20

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:        Slug,
	Name:        "MailerSend",
	Description: "Send through the MailerSend email API with an API token.",
	SetupHelp:   "In MailerSend, open Integrations > API tokens (or the domain's page) and generate a token with Email: Full access.",
	APIKey:      apidriver.APIKeyField("API token", "A MailerSend API token with the Email permission (mlsn....)."),
	FromHelp:    "Sender address; must be on a domain verified in MailerSend.",
	Extra: []core.Field{
		{Key: KeyCustomHeaders, Label: "Send custom headers", Type: core.FieldBoolean, Default: false, Advanced: true,
			Help: "Send the message's own headers (List-Unsubscribe, X-...). Only MailerSend's Professional and Enterprise plans take them; other plans refuse such a message."},
		{Key: KeyWebhookSecret, Label: "Webhook signing secret", Type: core.FieldPassword, Advanced: true,
			Help: "Pro webhook receiver: the signing secret shown on the webhook's page in MailerSend (Domains > Webhooks)."},
	},
	DefaultBaseURL:  DefaultBaseURL,
	Hosts:           []string{"api.mailersend.com"},
	Caps:            core.RecipientCaps{To: MaxTo, Cc: MaxCc, Bcc: MaxBcc, NeedsTo: true},
	MaxMessageBytes: MaxMessageBytes,
	Auth:            apidriver.BearerAuth,
	VerifyRead:      "/v1/api-quota",
	Open: func(t *apidriver.JSONTransport, s core.Settings) (core.Transport, error) {
		return Transport{t, s.Bool(KeyCustomHeaders, false)}, nil
	},
}

// Driver returns the MailerSend driver description: schema, rules and
// constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one MailerSend connection. It is safe for
// concurrent use.
type Transport struct {
	*apidriver.JSONTransport
	headers bool
}

// Send implements core.Transport with POST /v1/email, answered 202 with
// the message id in the X-Message-Id header.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	r, err := t.Post(ctx, msg, "/v1/email", t.build(msg), nil)
	if err != nil {
		return core.Receipt{}, err
	}
	response := r.StatusLine()
	if len(r.Body) > 0 {
		response += ": " + apidriver.Summary(r.Body) // warnings, e.g. suppressed recipients
	}
	return core.Receipt{MessageID: r.Header.Get("X-Message-Id"), Response: response}, nil
}

type address struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email"`
}

type header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type attachment struct {
	Content     string `json:"content"`
	Filename    string `json:"filename"`
	Disposition string `json:"disposition"`
	ID          string `json:"id,omitempty"`
}

type email struct {
	From        address      `json:"from"`
	To          []address    `json:"to"`
	Cc          []address    `json:"cc,omitempty"`
	Bcc         []address    `json:"bcc,omitempty"`
	ReplyTo     *address     `json:"reply_to,omitempty"`
	Subject     string       `json:"subject"`
	Text        string       `json:"text,omitempty"`
	HTML        string       `json:"html,omitempty"`
	Headers     []header     `json:"headers,omitempty"`
	Attachments []attachment `json:"attachments,omitempty"`
}

// build turns a message (the part its Envelope names) into MailerSend's
// body. MailerSend takes one reply_to, the message's first; the
// message's own headers go only when custom_headers is on; an inline
// image is an attachment with disposition inline and its Content-ID as
// id.
func (t Transport) build(msg *core.Message) email {
	msg = msg.ForEnvelope()
	e := email{From: address(t.Sender.Apply(msg.From)), To: apidriver.Each(msg.To, toAddress), Cc: apidriver.Each(msg.Cc, toAddress), Bcc: apidriver.Each(msg.Bcc, toAddress),
		Subject: msg.Subject, Text: msg.Text, HTML: msg.HTML}
	e.ReplyTo = apidriver.First(msg.ReplyTo, toAddress)
	if t.headers {
		for _, h := range msg.Headers {
			e.Headers = append(e.Headers, header(h))
		}
	}
	for _, a := range msg.Attachments {
		att := attachment{Content: apidriver.Base64(a.Data), Filename: a.Filename, Disposition: "attachment"}
		if a.Inline && a.ContentID != "" {
			att.Disposition, att.ID = "inline", a.ContentID
		}
		e.Attachments = append(e.Attachments, att)
	}
	return e
}

func toAddress(a core.Address) address { return address(a) }
