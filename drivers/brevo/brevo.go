// Package brevo is the mail transport for Brevo's (formerly Sendinblue)
// transactional email API. It registers itself as the driver "brevo"
// when imported and sends with POST /v3/smtp/email.
package brevo

import (
	"context"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of Brevo connections.
const Slug = "brevo"

// DefaultBaseURL is the real Brevo API, used when base_url is empty.
const DefaultBaseURL = "https://api.brevo.com"

// MaxRecipients is the most recipients (to, cc and bcc) the driver puts
// in one call: Brevo documents 99 for a transactional email with an
// attachment.
const MaxRecipients = 99

// MaxMessageBytes is the largest message the driver sends: Brevo takes
// 20 MB in all, attachments included.
const MaxMessageBytes = 20 << 20

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:        Slug,
	Name:        "Brevo",
	Description: "Send through Brevo's (formerly Sendinblue) transactional email API with an API key.",
	SetupHelp:   "In Brevo, open your profile menu > SMTP & API > API keys and generate a v3 API key (it starts with xkeysib-).",
	APIKey:      apidriver.APIKeyField("API key", "A Brevo v3 API key (xkeysib-...)."),
	FromHelp:    "Sender address; must be a sender or domain verified in Brevo.",
	Extra: []core.Field{{Key: KeyWebhookToken, Label: "Webhook token", Type: core.FieldPassword, Advanced: true,
		Help: "Pro webhook receiver: the bearer token set in the webhook's authentication in Brevo (Transactional > Settings > Webhook)."}},
	DefaultBaseURL:  DefaultBaseURL,
	Hosts:           []string{"api.brevo.com", "api.sendinblue.com"},
	Caps:            core.RecipientCaps{PerMessage: MaxRecipients, NeedsTo: true},
	MaxMessageBytes: MaxMessageBytes,
	Auth:            apidriver.HeaderAuth("api-key"),
	VerifyRead:      "/v3/account",
	Open: func(t *apidriver.JSONTransport, _ core.Settings) (core.Transport, error) {
		t.Client.RateLimitReset = "X-Sib-Ratelimit-Reset"
		return Transport{t}, nil
	},
}

// KeyWebhookToken is the settings key of the token Brevo's webhook
// calls carry.
const KeyWebhookToken = "webhook_token"

// Driver returns the Brevo driver description: schema, rules and
// constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one Brevo connection. It is safe for
// concurrent use.
type Transport struct{ *apidriver.JSONTransport }

// Send implements core.Transport with POST /v3/smtp/email.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	var out struct {
		MessageID string `json:"messageId"`
	}
	r, err := t.Post(ctx, msg, "/v3/smtp/email", t.build(msg), &out)
	if err != nil {
		return core.Receipt{}, err
	}
	return core.Receipt{MessageID: out.MessageID, Response: r.StatusLine()}, nil
}

type address struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email"`
}

type attachment struct {
	Content string `json:"content"`
	Name    string `json:"name"`
}

type email struct {
	Sender      address           `json:"sender"`
	To          []address         `json:"to"`
	Cc          []address         `json:"cc,omitempty"`
	Bcc         []address         `json:"bcc,omitempty"`
	ReplyTo     *address          `json:"replyTo,omitempty"`
	Subject     string            `json:"subject"`
	HTMLContent string            `json:"htmlContent,omitempty"`
	TextContent string            `json:"textContent,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Attachment  []attachment      `json:"attachment,omitempty"`
}

// build turns a message (the part its Envelope names) into Brevo's
// body. Brevo takes one Reply-To address, the message's first, and has
// no Content-ID: an inline image goes as an attachment of its name.
func (t Transport) build(msg *core.Message) email {
	msg = msg.ForEnvelope()
	from := t.Sender.Apply(msg.From)
	e := email{
		Sender: address(from), To: apidriver.Each(msg.To, toAddress), Cc: apidriver.Each(msg.Cc, toAddress), Bcc: apidriver.Each(msg.Bcc, toAddress),
		Subject: msg.Subject, HTMLContent: msg.HTML, TextContent: msg.Text,
	}
	e.ReplyTo = apidriver.First(msg.ReplyTo, toAddress)
	e.Headers = apidriver.CustomHeaders(msg)
	for _, a := range msg.Attachments {
		e.Attachment = append(e.Attachment, attachment{Content: apidriver.Base64(a.Data), Name: a.Filename})
	}
	return e
}

func toAddress(a core.Address) address { return address(a) }
