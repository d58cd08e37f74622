// Package mandrill is the mail transport for Mailchimp Transactional
// (Mandrill). It registers itself as the driver "mandrill" when imported
// and sends each message with POST /api/1.0/messages/send, the API key in
// the JSON body as the API requires.
package mandrill

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of Mandrill connections.
const Slug = "mandrill"

// DefaultBaseURL is the real API, used when base_url is empty.
const DefaultBaseURL = "https://mandrillapp.com/api/1.0"

// MaxRecipients is the most recipients (To, Cc and Bcc) the driver puts
// in one call. Mandrill states no cap; 1,000 is mailsvc's choice.
const MaxRecipients = 1000

// MaxMessageBytes is Mandrill's cap on a whole message with its
// attachments: 25 MB.
const MaxMessageBytes = 25 << 20

// MetadataMessageID is the metadata key the driver sends the message's
// Message-ID header under; Mandrill echoes a message's metadata in its
// webhook events.
const MetadataMessageID = "mailsvc_message_id"

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:        Slug,
	Name:        "Mailchimp Transactional (Mandrill)",
	Description: "Send through the Mailchimp Transactional (Mandrill) API with an API key.",
	SetupHelp:   "In Mailchimp Transactional (mandrillapp.com), open Settings > SMTP & API Info and create a new API key.",
	APIKey:      apidriver.APIKeyField("API key", "A Mailchimp Transactional API key."),
	FromHelp:    "Sender address; its domain must be verified in Mandrill (Settings > Domains).",
	Extra: []core.Field{
		apidriver.Advanced(core.Field{Key: "webhook_key", Label: "Webhook key", Type: core.FieldPassword,
			Help: "Pro webhook receiver: the key Mandrill shows for the webhook (Settings > Webhooks), which signs its calls."}),
		apidriver.Advanced(core.Field{Key: "webhook_url", Label: "Webhook URL", Type: core.FieldString,
			Help: "Pro webhook receiver: the webhook URL exactly as entered in Mandrill; its signature covers it."}),
	},
	DefaultBaseURL: DefaultBaseURL,
	Hosts:          []string{"mandrillapp.com"},
	Caps:           core.RecipientCaps{PerMessage: MaxRecipients},
	Open: func(t *apidriver.JSONTransport, s core.Settings) (core.Transport, error) {
		t.Client.Refused = refused
		return Transport{t, s.String(apidriver.KeyAPIKey)}, nil
	},
}

// Driver returns the Mandrill driver description: schema, rules and
// constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one Mandrill connection. It is safe for
// concurrent use. Mandrill takes its key in each request's body.
type Transport struct {
	*apidriver.JSONTransport
	key string
}

// Verify implements core.Verifier with POST /users/ping, which only
// checks the key.
func (t Transport) Verify(ctx context.Context) error {
	return t.Client.Verify(ctx, http.MethodPost, "/users/ping", map[string]string{"key": t.key}, nil)
}

// permanentNames are Mandrill's error names a retry does not fix; its
// other errors (GeneralError, ServiceUnavailable, ...) are temporary.
var permanentNames = map[string]bool{"Invalid_Key": true, "ValidationError": true, "PaymentRequired": true,
	"Unknown_Subaccount": true, "Unknown_Template": true, "Unknown_Sender": true}

// refused classifies Mandrill's errors, which all come as HTTP 500
// {"status":"error","name":...}, by their name.
func refused(status int, body []byte) error {
	if status != http.StatusInternalServerError {
		return nil
	}
	var e struct{ Status, Name, Message string }
	if json.Unmarshal(body, &e) != nil || e.Status != "error" {
		return nil
	}
	err := fmt.Errorf("%s: %s", e.Name, e.Message)
	if permanentNames[e.Name] {
		return core.Permanent(err)
	}
	return core.Temporary(err)
}

type recipient struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
	Type  string `json:"type"`
}

type file struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Content string `json:"content"`
}

type message struct {
	HTML               string            `json:"html,omitempty"`
	Text               string            `json:"text,omitempty"`
	Subject            string            `json:"subject"`
	FromEmail          string            `json:"from_email"`
	FromName           string            `json:"from_name,omitempty"`
	To                 []recipient       `json:"to"`
	Headers            map[string]string `json:"headers,omitempty"`
	PreserveRecipients bool              `json:"preserve_recipients"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	Attachments        []file            `json:"attachments,omitempty"`
	Images             []file            `json:"images,omitempty"`
}

// Send implements core.Transport. Mandrill answers per recipient: those
// it rejects are refused, and the message fails only when it took none.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	if err := apidriver.CheckSize(msg, MaxMessageBytes); err != nil {
		return core.Receipt{}, err
	}
	msg = msg.ForEnvelope()
	from := t.Sender.Apply(msg.From)
	m := message{HTML: msg.HTML, Text: msg.Text, Subject: msg.Subject, FromEmail: from.Email, FromName: from.Name,
		Headers: apidriver.CustomHeaders(msg), PreserveRecipients: true}
	for _, l := range []struct {
		kind string
		list []core.Address
	}{{"to", msg.To}, {"cc", msg.Cc}, {"bcc", msg.Bcc}} {
		for _, a := range l.list {
			m.To = append(m.To, recipient{Email: a.Email, Name: a.Name, Type: l.kind})
		}
	}
	if len(msg.ReplyTo) > 0 { // Mandrill has no reply-to field: a header
		if m.Headers == nil {
			m.Headers = map[string]string{}
		}
		m.Headers["Reply-To"] = strings.Join(apidriver.Mailboxes(msg.ReplyTo), ", ")
	}
	if id := msg.MessageID(); id != "" {
		m.Metadata = map[string]string{MetadataMessageID: strings.Trim(id, "<> ")}
	}
	for _, a := range msg.Attachments {
		f := file{Type: apidriver.ContentType(a), Name: a.Filename, Content: apidriver.Base64(a.Data)}
		if apidriver.IsInline(a) && strings.HasPrefix(f.Type, "image/") {
			f.Name = a.ContentID // Mandrill's image name is its Content-ID
			m.Images = append(m.Images, f)
			continue
		}
		m.Attachments = append(m.Attachments, f)
	}
	var out []struct {
		Email        string `json:"email"`
		Status       string `json:"status"`
		RejectReason string `json:"reject_reason"`
		ID           string `json:"_id"`
	}
	if _, err := t.Client.Do(ctx, "send", http.MethodPost, "/messages/send", map[string]any{"key": t.key, "message": m}, &out); err != nil {
		return core.Receipt{}, err
	}
	var rc core.Receipt
	var outcomes core.RecipientOutcomes
	var lines []string
	taken := 0
	for _, r := range out {
		lines = append(lines, r.Email+" "+r.Status+" "+r.ID)
		o := core.RecipientOutcome{Email: r.Email, Status: core.RecipientDelivered}
		switch r.Status {
		case "rejected", "invalid":
			o.Status, o.Reply = core.RecipientRefused, r.Status+": "+r.RejectReason
		default: // sent, queued, scheduled
			taken++
			if rc.MessageID == "" {
				rc.MessageID = r.ID
			}
		}
		outcomes = append(outcomes, o)
	}
	rc.Response = strings.Join(lines, "; ")
	if taken == 0 {
		return core.Receipt{}, core.Permanent(fmt.Errorf("mandrill: send: every recipient was rejected: %s", rc.Response))
	}
	if taken < len(out) {
		rc.Recipients = outcomes
	}
	return rc, nil
}
