// Package elasticemail is the mail transport for the Elastic Email REST
// API v4. It registers itself as the driver "elasticemail" when imported
// and sends each message with POST /v4/emails/transactional.
package elasticemail

import (
	"context"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of Elastic Email connections.
const Slug = "elasticemail"

// DefaultBaseURL is the real API, used when base_url is empty.
const DefaultBaseURL = "https://api.elasticemail.com"

// MaxRecipients is the most recipients (To, Cc and Bcc) the driver puts
// in one call. Elastic Email states no cap for a transactional send; 50
// keeps one call within what its sending reputation checks treat as one
// transactional message.
const MaxRecipients = 50

// MaxMessageBytes is Elastic Email's cap on a whole message with its
// attachments: 20 MB.
const MaxMessageBytes = 20 << 20

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:        Slug,
	Name:        "Elastic Email",
	Description: "Send through the Elastic Email REST API v4 with an API key.",
	SetupHelp:   "In Elastic Email, open Settings > Manage API Keys and create a key with the Send Email access (and Settings: view, for the credentials check).",
	APIKey:      apidriver.APIKeyField("API key", "An Elastic Email API key with the Send Email access."),
	FromHelp:    "Sender address; its domain must be verified in Elastic Email.",
	Extra: []core.Field{{Key: "webhook_token", Label: "Notification URL token", Type: core.FieldPassword, Advanced: true,
		Help: "Pro webhook receiver: a random token you add as ?token=... to the notification URL set in Elastic Email (Settings > Notifications)."}},
	DefaultBaseURL: DefaultBaseURL,
	Hosts:          []string{"api.elasticemail.com"},
	Caps:           core.RecipientCaps{PerMessage: MaxRecipients, NeedsTo: true},
	Auth:           apidriver.HeaderAuth("X-ElasticEmail-ApiKey"),
	VerifyRead:     "/v4/domains",
	Open:           func(t *apidriver.JSONTransport, _ core.Settings) (core.Transport, error) { return Transport{t}, nil },
}

// Driver returns the Elastic Email driver description: schema, rules and
// constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one Elastic Email connection. It is safe for
// concurrent use.
type Transport struct{ *apidriver.JSONTransport }

type bodyPart struct {
	ContentType string `json:"ContentType"`
	Content     string `json:"Content"`
	Charset     string `json:"Charset"`
}

type attachment struct {
	BinaryContent string `json:"BinaryContent"`
	Name          string `json:"Name"`
	ContentType   string `json:"ContentType,omitempty"`
}

type request struct {
	Recipients struct {
		To  []string `json:"To"`
		CC  []string `json:"CC,omitempty"`
		BCC []string `json:"BCC,omitempty"`
	} `json:"Recipients"`
	Content struct {
		Body        []bodyPart        `json:"Body,omitempty"`
		Attachments []attachment      `json:"Attachments,omitempty"`
		Headers     map[string]string `json:"Headers,omitempty"`
		From        string            `json:"From"`
		ReplyTo     string            `json:"ReplyTo,omitempty"`
		Subject     string            `json:"Subject"`
	} `json:"Content"`
}

// Send implements core.Transport. Elastic Email's message has no
// Content-ID for a part: an inline image goes as an attachment.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	if err := apidriver.CheckSize(msg, MaxMessageBytes); err != nil {
		return core.Receipt{}, err
	}
	msg = msg.ForEnvelope()
	var r request
	r.Recipients.To = apidriver.Mailboxes(msg.To)
	r.Recipients.CC = apidriver.Mailboxes(msg.Cc)
	r.Recipients.BCC = apidriver.Mailboxes(msg.Bcc)
	c := &r.Content
	c.From = apidriver.Mailbox(t.Sender.Apply(msg.From))
	if len(msg.ReplyTo) > 0 {
		c.ReplyTo = strings.Join(apidriver.Mailboxes(msg.ReplyTo), ", ")
	}
	c.Subject = msg.Subject
	if msg.HTML != "" {
		c.Body = append(c.Body, bodyPart{ContentType: "HTML", Content: msg.HTML, Charset: "utf-8"})
	}
	if msg.Text != "" || msg.HTML == "" {
		c.Body = append(c.Body, bodyPart{ContentType: "PlainText", Content: msg.Text, Charset: "utf-8"})
	}
	c.Headers = apidriver.CustomHeaders(msg)
	for _, a := range msg.Attachments {
		c.Attachments = append(c.Attachments, attachment{BinaryContent: apidriver.Base64(a.Data), Name: a.Filename, ContentType: apidriver.ContentType(a)})
	}
	var out struct {
		TransactionID string `json:"TransactionID"`
		MessageID     string `json:"MessageID"`
	}
	if _, err := t.Client.Do(ctx, "send", http.MethodPost, "/v4/emails/transactional", &r, &out); err != nil {
		return core.Receipt{}, err
	}
	id := out.MessageID
	if id == "" {
		id = out.TransactionID
	}
	return core.Receipt{MessageID: id, Response: "200 OK transaction " + out.TransactionID}, nil
}
