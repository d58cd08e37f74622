// Package mailtrap is the mail transport for Mailtrap Email Sending. It
// registers itself as the driver "mailtrap" when imported and sends each
// message with POST /api/send on the transactional stream.
package mailtrap

import (
	"context"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of Mailtrap connections.
const Slug = "mailtrap"

// DefaultBaseURL is the transactional sending API, used when base_url is
// empty; BulkBaseURL is the bulk stream's.
const (
	DefaultBaseURL = "https://send.api.mailtrap.io"
	BulkBaseURL    = "https://bulk.api.mailtrap.io"
)

// AccountsURL is Mailtrap's general API, where the credentials check
// reads the token's accounts (the sending hosts serve no read).
const AccountsURL = "https://mailtrap.io"

// MaxPerField is the most addresses Mailtrap takes in each of to, cc and
// bcc.
const MaxPerField = 1000

// MaxMessageBytes is Mailtrap's cap on a whole message: 10 MB.
const MaxMessageBytes = 10 << 20

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:           Slug,
	Name:           "Mailtrap",
	Description:    "Send through Mailtrap Email Sending (the transactional stream) with an API token.",
	SetupHelp:      "In Mailtrap, open Sending Domains, choose your verified domain and copy the API token shown under Integration > API (or create one in Settings > API Tokens).",
	APIKey:         apidriver.APIKeyField("API token", "A Mailtrap API token with access to the sending domain."),
	FromHelp:       "Sender address; its domain must be a verified sending domain in Mailtrap.",
	DefaultBaseURL: DefaultBaseURL,
	BaseURLHelp:    "Leave empty for " + DefaultBaseURL + " (the transactional stream; " + BulkBaseURL + " for the bulk stream).",
	Hosts:          []string{"send.api.mailtrap.io", "bulk.api.mailtrap.io"},
	Caps:           core.RecipientCaps{To: MaxPerField, Cc: MaxPerField, Bcc: MaxPerField, NeedsTo: true},
	Auth:           apidriver.BearerAuth,
	Open: func(t *apidriver.JSONTransport, _ core.Settings) (core.Transport, error) {
		accounts := t.Client
		if accounts.BaseURL == DefaultBaseURL || accounts.BaseURL == BulkBaseURL {
			accounts.BaseURL = AccountsURL
		}
		return Transport{t, accounts}, nil
	},
}

// Driver returns the Mailtrap driver description: schema, rules and
// constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one Mailtrap connection. It is safe for
// concurrent use.
type Transport struct {
	*apidriver.JSONTransport
	accounts apidriver.JSONAPI
}

// Verify implements core.Verifier with GET /api/accounts on Mailtrap's
// general API (on base_url itself when it is not one of Mailtrap's
// sending hosts), which sends nothing.
func (t Transport) Verify(ctx context.Context) error {
	return t.accounts.Verify(ctx, http.MethodGet, "/api/accounts", nil, nil)
}

type address struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
}

type attachment struct {
	Content     string `json:"content"`
	Filename    string `json:"filename"`
	Type        string `json:"type,omitempty"`
	Disposition string `json:"disposition"`
	ContentID   string `json:"content_id,omitempty"`
}

type request struct {
	From        address           `json:"from"`
	To          []address         `json:"to"`
	Cc          []address         `json:"cc,omitempty"`
	Bcc         []address         `json:"bcc,omitempty"`
	ReplyTo     *address          `json:"reply_to,omitempty"`
	Subject     string            `json:"subject"`
	Text        string            `json:"text,omitempty"`
	HTML        string            `json:"html,omitempty"`
	Attachments []attachment      `json:"attachments,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
}

func addresses(list []core.Address) []address {
	return apidriver.Each(list, func(a core.Address) address { return address{Email: a.Email, Name: a.Name} })
}

// Send implements core.Transport. Mailtrap's reply_to takes one address;
// several go as a Reply-To header.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	if err := apidriver.CheckSize(msg, MaxMessageBytes); err != nil {
		return core.Receipt{}, err
	}
	msg = msg.ForEnvelope()
	from := t.Sender.Apply(msg.From)
	r := request{From: address{Email: from.Email, Name: from.Name}, To: addresses(msg.To), Cc: addresses(msg.Cc), Bcc: addresses(msg.Bcc),
		Subject: msg.Subject, Text: msg.Text, HTML: msg.HTML, Headers: apidriver.CustomHeaders(msg)}
	if len(msg.ReplyTo) == 1 {
		r.ReplyTo = &address{Email: msg.ReplyTo[0].Email, Name: msg.ReplyTo[0].Name}
	}
	r.Headers = apidriver.WithReplyTo(r.Headers, msg.ReplyTo)
	if r.Text == "" && r.HTML == "" {
		r.Text = "\n" // Mailtrap requires text or html
	}
	for _, a := range msg.Attachments {
		att := attachment{Content: apidriver.Base64(a.Data), Filename: a.Filename, Type: a.ContentType, Disposition: "attachment"}
		if apidriver.IsInline(a) {
			att.Disposition, att.ContentID = "inline", a.ContentID
		}
		r.Attachments = append(r.Attachments, att)
	}
	var out struct {
		Success    bool     `json:"success"`
		MessageIDs []string `json:"message_ids"`
	}
	if _, err := t.Client.Do(ctx, "send", http.MethodPost, "/api/send", &r, &out); err != nil {
		return core.Receipt{}, err
	}
	rc := core.Receipt{Response: "200 OK " + strings.Join(out.MessageIDs, ", ")}
	if len(out.MessageIDs) > 0 {
		rc.MessageID = out.MessageIDs[0]
	}
	return rc, nil
}
