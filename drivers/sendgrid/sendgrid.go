// Package sendgrid is the mail transport for the SendGrid v3 Web API. It
// registers itself as the driver "sendgrid" when imported and sends
// through the official sendgrid-go SDK.
package sendgrid

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
	"github.com/sendgrid/rest"
	sg "github.com/sendgrid/sendgrid-go"
	"github.com/sendgrid/sendgrid-go/helpers/mail"
)

// Slug is the driver name of SendGrid connections.
const Slug = "sendgrid"

// DefaultBaseURL is the real SendGrid API, used when base_url is empty.
const DefaultBaseURL = "https://api.sendgrid.com"

// Settings keys of a SendGrid connection.
const (
	KeyAPIKey    = apidriver.KeyAPIKey
	KeyFromEmail = apidriver.KeyFromEmail
	KeyFromName  = apidriver.KeyFromName
	KeyBaseURL   = apidriver.KeyBaseURL
)

func init() {
	core.Register(Driver())
}

// Driver returns the SendGrid driver description: schema, rules and
// constructor.
func Driver() core.Driver {
	return core.Driver{
		Slug:               Slug,
		DefaultConcurrency: apidriver.DefaultConcurrency,
		// At most 1,000 recipients (to, cc and bcc) in one request.
		RecipientCaps: core.RecipientCaps{PerMessage: 1000},
		Name:          "SendGrid",
		Description:   "Send through the SendGrid v3 Web API with an API key that has the Mail Send permission.",
		SetupHelp:     "In SendGrid, open Settings → API Keys → Create API Key with the Mail Send permission; the key is shown once. The From address must be a verified Sender Identity (Settings → Sender Authentication).",
		Fields: []core.Field{
			apidriver.APIKeyField("API key",
				"A SendGrid API key with at least the Mail Send permission."),
			apidriver.FromEmailField("Sender address; must be a verified Sender Identity in SendGrid."),
			apidriver.FromNameField(),
			{Key: "webhook_public_key", Label: "Event Webhook verification key", Type: core.FieldPassword, Advanced: true,
				Help: "Pro webhook receiver: the base64 verification key of SendGrid's signed Event Webhook (Settings > Mail Settings > Event Webhook)."},
			apidriver.BaseURLField("Leave empty for "+DefaultBaseURL+" (use https://api.eu.sendgrid.com for EU data residency).",
				"api.sendgrid.com", "api.eu.sendgrid.com"),
		},
		Rules: []string{
			apidriver.SenderRule,
			"base_url, when empty, is " + DefaultBaseURL + ".",
		},
		New: New,
	}
}

// Transport sends through one SendGrid connection. It is safe for
// concurrent use.
type Transport struct {
	apiKey  string
	baseURL string
	sender  apidriver.Sender
	client  *rest.Client
}

// New builds the transport of a SendGrid connection from its effective
// settings.
func New(conn *core.Connection, env core.DriverEnv) (core.Transport, error) {
	s := conn.Settings
	key := s.String(KeyAPIKey)
	if key == "" {
		return nil, core.Invalid(map[string]string{KeyAPIKey: "This field is required."})
	}
	hc := apidriver.HTTPClient(env)
	return &Transport{
		apiKey:  key,
		baseURL: apidriver.BaseURL(s, DefaultBaseURL),
		sender:  apidriver.SenderOf(s),
		client:  &rest.Client{HTTPClient: hc},
	}, nil
}

// BaseURL returns the API base URL the transport talks to.
func (t *Transport) BaseURL() string { return t.baseURL }

// Send implements core.Transport with POST /v3/mail/send.
func (t *Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	req := sg.GetRequest(t.apiKey, "/v3/mail/send", t.baseURL)
	req.Method = rest.Post
	m, dropped := t.build(msg)
	req.Body = mail.GetRequestBody(m)
	resp, err := t.client.SendWithContext(ctx, req)
	if err != nil {
		return core.Receipt{}, t.scrub(core.Temporary(fmt.Errorf("sendgrid: send: %w", err)))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return core.Receipt{}, t.scrub(fmt.Errorf("sendgrid: send: %w", core.HTTPResponseError(resp.StatusCode, http.Header(resp.Headers), apidriver.Summary(resp.Body))))
	}
	id := http.Header(resp.Headers).Get("X-Message-Id")
	response := fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	if len(dropped) > 0 {
		response += "; empty attachments left out (SendGrid refuses an attachment without content): " + strings.Join(dropped, ", ")
	}
	return core.Receipt{MessageID: id, Response: response}, nil
}

// Verify implements core.Verifier with the authenticated read GET
// /v3/scopes, which sends nothing.
func (t *Transport) Verify(ctx context.Context) error {
	req := sg.GetRequest(t.apiKey, "/v3/scopes", t.baseURL)
	req.Method = rest.Get
	resp, err := t.client.SendWithContext(ctx, req)
	if err != nil {
		return t.scrub(core.Temporary(fmt.Errorf("sendgrid: verify: %w", err)))
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		return nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return t.scrub(core.Permanent(fmt.Errorf("sendgrid: verify: the API key was rejected (HTTP %d): %s",
			resp.StatusCode, apidriver.Summary(resp.Body))))
	default:
		return t.scrub(fmt.Errorf("sendgrid: verify: %w", core.HTTPStatusError(resp.StatusCode, apidriver.Summary(resp.Body))))
	}
}

// build turns a message (the part its Envelope names) into the SDK's v3
// mail object, and returns the names of the zero-byte attachments it left
// out: SendGrid requires an attachment's content to be at least one
// character, and the SDK drops an empty one, which makes the whole
// request invalid. A message without a To recipient (Bcc only) goes as
// one personalization per recipient, each its own To, as SendGrid
// requires a To in every personalization: no recipient sees another.
func (t *Transport) build(msg *core.Message) (*mail.SGMailV3, []string) {
	msg = msg.ForEnvelope()
	from := t.sender.Apply(msg.From)
	m := mail.NewV3Mail()
	m.SetFrom(mail.NewEmail(from.Name, from.Email))
	m.Subject = msg.Subject
	if len(msg.To) > 0 {
		p := mail.NewPersonalization()
		p.AddTos(emails(msg.To)...)
		p.AddCCs(emails(msg.Cc)...)
		p.AddBCCs(emails(msg.Bcc)...)
		m.AddPersonalizations(p)
	} else {
		for _, a := range msg.Recipients() {
			p := mail.NewPersonalization()
			p.AddTos(mail.NewEmail(a.Name, a.Email))
			m.AddPersonalizations(p)
		}
	}
	switch len(msg.ReplyTo) {
	case 0:
	case 1:
		m.SetReplyTo(mail.NewEmail(msg.ReplyTo[0].Name, msg.ReplyTo[0].Email))
	default:
		m.SetReplyToList(emails(msg.ReplyTo))
	}
	if msg.Text != "" {
		m.AddContent(mail.NewContent("text/plain", msg.Text))
	}
	if msg.HTML != "" {
		m.AddContent(mail.NewContent("text/html", msg.HTML))
	}
	for _, h := range msg.Headers {
		if reserved(h.Name) {
			continue
		}
		m.SetHeader(h.Name, h.Value)
	}
	var dropped []string
	for _, a := range msg.Attachments {
		if len(a.Data) == 0 {
			dropped = append(dropped, a.Filename)
			continue
		}
		att := mail.NewAttachment()
		att.SetContent(base64.StdEncoding.EncodeToString(a.Data))
		att.SetFilename(a.Filename)
		if a.ContentType != "" {
			att.SetType(a.ContentType)
		}
		if a.Inline && a.ContentID != "" {
			att.SetDisposition("inline")
			att.SetContentID(a.ContentID)
		} else {
			att.SetDisposition("attachment")
		}
		m.AddAttachment(att)
	}
	return m, dropped
}

// reserved reports headers SendGrid refuses in "headers"; the message
// carries them in their own fields.
func reserved(name string) bool {
	switch strings.ToLower(name) {
	case "x-sg-id", "x-sg-eid", "received", "dkim-signature", "content-type",
		"content-transfer-encoding", "to", "from", "subject", "reply-to", "cc", "bcc":
		return true
	}
	return false
}

func emails(in []core.Address) []*mail.Email {
	out := make([]*mail.Email, 0, len(in))
	for _, a := range in {
		out = append(out, mail.NewEmail(a.Name, a.Email))
	}
	return out
}

// scrub returns err with the API key masked in its text.
func (t *Transport) scrub(err error) error { return apidriver.Scrub(err, t.apiKey) }
