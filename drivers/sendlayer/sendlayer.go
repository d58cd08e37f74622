// Package sendlayer is the mail transport for the SendLayer API. It
// registers itself as the driver "sendlayer" when imported and sends each
// message with POST /api/v1/email.
package sendlayer

import (
	"context"
	"net/http"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of SendLayer connections.
const Slug = "sendlayer"

// DefaultBaseURL is the real API, used when base_url is empty.
const DefaultBaseURL = "https://console.sendlayer.com"

// MaxRecipients is the most recipients (To, Cc and Bcc) the driver puts
// in one call. SendLayer states no cap; 50 is mailsvc's choice.
const MaxRecipients = 50

// MaxMessageBytes caps a whole message: 10 MB (mailsvc's cap; SendLayer
// states none).
const MaxMessageBytes = 10 << 20

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:           Slug,
	Name:           "SendLayer",
	Description:    "Send through the SendLayer API with an API key.",
	SetupHelp:      "In the SendLayer dashboard, open Settings > API Keys and copy the API key.",
	APIKey:         apidriver.APIKeyField("API key", "A SendLayer API key."),
	FromHelp:       "Sender address; its domain must be authorized in SendLayer.",
	DefaultBaseURL: DefaultBaseURL,
	Hosts:          []string{"console.sendlayer.com"},
	Caps:           core.RecipientCaps{PerMessage: MaxRecipients, NeedsTo: true},
	Auth:           apidriver.BearerAuth,
	VerifyRead:     "/api/v1/webhooks",
	Open:           func(t *apidriver.JSONTransport, _ core.Settings) (core.Transport, error) { return Transport{t}, nil },
}

// Driver returns the SendLayer driver description: schema, rules and
// constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one SendLayer connection. It is safe for
// concurrent use.
type Transport struct{ *apidriver.JSONTransport }

type address struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email"`
}

type attachment struct {
	Content     string `json:"Content"`
	Type        string `json:"Type"`
	Filename    string `json:"Filename"`
	Disposition string `json:"Disposition"`
	ContentID   string `json:"ContentId,omitempty"`
}

type request struct {
	From         address           `json:"From"`
	To           []address         `json:"To"`
	CC           []address         `json:"CC,omitempty"`
	BCC          []address         `json:"BCC,omitempty"`
	ReplyTo      []address         `json:"ReplyTo,omitempty"`
	Subject      string            `json:"Subject"`
	ContentType  string            `json:"ContentType"`
	HTMLContent  string            `json:"HTMLContent,omitempty"`
	PlainContent string            `json:"PlainContent,omitempty"`
	Headers      map[string]string `json:"Headers,omitempty"`
	Attachments  []attachment      `json:"Attachments,omitempty"`
}

func addresses(list []core.Address) []address {
	return apidriver.Each(list, func(a core.Address) address { return address{Name: a.Name, Email: a.Email} })
}

// Send implements core.Transport.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	if err := apidriver.CheckSize(msg, MaxMessageBytes); err != nil {
		return core.Receipt{}, err
	}
	msg = msg.ForEnvelope()
	from := t.Sender.Apply(msg.From)
	r := request{From: address{Name: from.Name, Email: from.Email}, To: addresses(msg.To), CC: addresses(msg.Cc), BCC: addresses(msg.Bcc),
		ReplyTo: addresses(msg.ReplyTo), Subject: msg.Subject, ContentType: "Text", PlainContent: msg.Text, Headers: apidriver.CustomHeaders(msg)}
	if msg.HTML != "" {
		r.ContentType, r.HTMLContent = "HTML", msg.HTML
	}
	for _, a := range msg.Attachments {
		att := attachment{Content: apidriver.Base64(a.Data), Type: apidriver.ContentType(a), Filename: a.Filename, Disposition: "attachment"}
		if apidriver.IsInline(a) {
			att.Disposition, att.ContentID = "inline", a.ContentID
		}
		r.Attachments = append(r.Attachments, att)
	}
	var out struct {
		MessageID string `json:"MessageID"`
	}
	if _, err := t.Client.Do(ctx, "send", http.MethodPost, "/api/v1/email", &r, &out); err != nil {
		return core.Receipt{}, err
	}
	return core.Receipt{MessageID: out.MessageID, Response: "200 OK " + out.MessageID}, nil
}
