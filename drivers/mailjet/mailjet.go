// Package mailjet is the mail transport for Mailjet's Send API v3.1. It
// registers itself as the driver "mailjet" when imported and sends with
// POST /v3.1/send.
package mailjet

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of Mailjet connections.
const Slug = "mailjet"

// DefaultBaseURL is the real Mailjet API, used when base_url is empty.
const DefaultBaseURL = "https://api.mailjet.com"

// Settings keys of a Mailjet connection beside the common ones.
const (
	KeyAPISecret       = "api_secret"
	KeyWebhookUsername = "webhook_username"
	KeyWebhookPassword = "webhook_password"
)

// MaxRecipients is the most recipients (To, Cc and Bcc) of one message
// of the Send API v3.1.
const MaxRecipients = 50

// MaxMessageBytes is the largest message the driver sends: Mailjet
// takes 15 MB per message, attachments included.
const MaxMessageBytes = 15 << 20

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:        Slug,
	Name:        "Mailjet",
	Description: "Send through Mailjet's Send API v3.1 with an API key and its secret key.",
	SetupHelp:   "In Mailjet, open Account settings > REST API > API Key Management: the API key and the secret key are shown there.",
	APIKey:      apidriver.APIKeyField("API key", "The Mailjet API key (the public one)."),
	FromHelp:    "Sender address; must be a sender or domain validated in Mailjet.",
	Extra: []core.Field{
		{Key: KeyAPISecret, Label: "Secret key", Type: core.FieldPassword, Required: true,
			Help: "The secret key that goes with the API key."},
		{Key: KeyWebhookUsername, Label: "Webhook username", Type: core.FieldString, Advanced: true,
			Help: "Pro webhook receiver: the user name in the event URL set in Mailjet (https://user:password@.../pro/webhooks/mailjet)."},
		{Key: KeyWebhookPassword, Label: "Webhook password", Type: core.FieldPassword, Advanced: true,
			Help: "Pro webhook receiver: the password in the event URL set in Mailjet."},
	},
	DefaultBaseURL:  DefaultBaseURL,
	Hosts:           []string{"api.mailjet.com"},
	Caps:            core.RecipientCaps{PerMessage: MaxRecipients, NeedsTo: true},
	MaxMessageBytes: MaxMessageBytes,
	VerifyRead:      "/v3/REST/user",
	Open:            open,
}

// Driver returns the Mailjet driver description: schema, rules and
// constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one Mailjet connection. It is safe for
// concurrent use.
type Transport struct{ *apidriver.JSONTransport }

// open completes t with Mailjet's Basic authentication of the API key
// and its secret key (required).
func open(t *apidriver.JSONTransport, s core.Settings) (core.Transport, error) {
	key, secret := s.String(apidriver.KeyAPIKey), s.String(KeyAPISecret)
	if secret == "" {
		return nil, core.Invalid(map[string]string{KeyAPISecret: "This field is required."})
	}
	t.Client.Auth = func(h http.Header) {
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(key+":"+secret)))
	}
	t.Client.Secrets = append(t.Client.Secrets, secret)
	return Transport{t}, nil
}

// result is Mailjet's answer for one message.
type result struct {
	Status string `json:"Status"`
	To     []struct {
		MessageID   int64  `json:"MessageID"`
		MessageUUID string `json:"MessageUUID"`
	} `json:"To"`
	Errors []struct {
		ErrorMessage string `json:"ErrorMessage"`
	} `json:"Errors"`
}

// Send implements core.Transport with POST /v3.1/send. The message goes
// with a CustomID of its own, which is the receipt's message id: every
// event of every recipient carries it, where Mailjet's MessageID is one
// per recipient.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	id := newCustomID()
	var out struct {
		Messages []result `json:"Messages"`
	}
	r, err := t.Post(ctx, msg, "/v3.1/send", map[string][]message{"Messages": {t.build(msg, id)}}, &out)
	if err != nil {
		return core.Receipt{}, err
	}
	if len(out.Messages) != 1 || out.Messages[0].Status != "success" {
		return core.Receipt{}, core.Permanent(fmt.Errorf("mailjet: send: HTTP %d without success: %s", r.Status, apidriver.Summary(r.Body)))
	}
	response := r.StatusLine()
	if to := out.Messages[0].To; len(to) > 0 {
		response += fmt.Sprintf(" (MessageID %d)", to[0].MessageID)
	}
	return core.Receipt{MessageID: id, Response: response}, nil
}

type address struct {
	Name  string `json:"Name,omitempty"`
	Email string `json:"Email"`
}

type attachment struct {
	ContentType   string `json:"ContentType"`
	Filename      string `json:"Filename"`
	ContentID     string `json:"ContentID,omitempty"`
	Base64Content string `json:"Base64Content"`
}

type message struct {
	From               address           `json:"From"`
	To                 []address         `json:"To"`
	Cc                 []address         `json:"Cc,omitempty"`
	Bcc                []address         `json:"Bcc,omitempty"`
	ReplyTo            *address          `json:"ReplyTo,omitempty"`
	Subject            string            `json:"Subject"`
	TextPart           string            `json:"TextPart,omitempty"`
	HTMLPart           string            `json:"HTMLPart,omitempty"`
	Headers            map[string]string `json:"Headers,omitempty"`
	Attachments        []attachment      `json:"Attachments,omitempty"`
	InlinedAttachments []attachment      `json:"InlinedAttachments,omitempty"`
	CustomID           string            `json:"CustomID"`
}

// build turns a message (the part its Envelope names) into Mailjet's
// message. Mailjet takes one ReplyTo, the message's first; an inline
// image goes in InlinedAttachments with its ContentID.
func (t Transport) build(msg *core.Message, customID string) message {
	msg = msg.ForEnvelope()
	m := message{From: address(t.Sender.Apply(msg.From)), To: apidriver.Each(msg.To, toAddress), Cc: apidriver.Each(msg.Cc, toAddress), Bcc: apidriver.Each(msg.Bcc, toAddress),
		Subject: msg.Subject, TextPart: msg.Text, HTMLPart: msg.HTML, CustomID: customID}
	m.ReplyTo = apidriver.First(msg.ReplyTo, toAddress)
	m.Headers = apidriver.CustomHeaders(msg)
	for _, a := range msg.Attachments {
		att := attachment{ContentType: apidriver.ContentType(a), Filename: a.Filename, Base64Content: apidriver.Base64(a.Data)}
		if a.Inline && a.ContentID != "" {
			att.ContentID = a.ContentID
			m.InlinedAttachments = append(m.InlinedAttachments, att)
			continue
		}
		m.Attachments = append(m.Attachments, att)
	}
	return m
}

// newCustomID returns a fresh CustomID: "mailsvc-" and 32 hex digits.
func newCustomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand does not fail
	return "mailsvc-" + hex.EncodeToString(b)
}

func toAddress(a core.Address) address { return address(a) }
