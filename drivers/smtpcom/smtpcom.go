// Package smtpcom is the mail transport for the SMTP.com API v4. It
// registers itself as the driver "smtpcom" when imported and sends each
// message with POST /v4/messages through one of the account's sender
// channels.
package smtpcom

import (
	"context"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of SMTP.com connections.
const Slug = "smtpcom"

// DefaultBaseURL is the real API, used when base_url is empty.
const DefaultBaseURL = "https://api.smtp.com"

// KeyChannel is the settings key of the sender channel (SMTP.com's
// "sender name") the messages go through.
const KeyChannel = "channel"

// MaxRecipients is the most recipients (To, Cc and Bcc) the driver puts
// in one call. SMTP.com states no cap; 50 is mailsvc's choice.
const MaxRecipients = 50

// MaxMessageBytes caps a whole message: 20 MB (mailsvc's cap; SMTP.com
// states none for the API).
const MaxMessageBytes = 20 << 20

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:        Slug,
	Name:        "SMTP.com",
	Description: "Send through the SMTP.com API v4 with an API key and a sender channel.",
	SetupHelp:   "In SMTP.com, open Account > Settings > API Access for the API key, and Senders for the sender name (channel) to send through.",
	APIKey:      apidriver.APIKeyField("API key", "An SMTP.com API key."),
	Account: []core.Field{{Key: KeyChannel, Label: "Sender name (channel)", Type: core.FieldString, Required: true,
		Help: "The sender (channel) name in SMTP.com that the messages go through."}},
	FromHelp:       "Sender address; it must be allowed for the channel in SMTP.com.",
	DefaultBaseURL: DefaultBaseURL,
	Hosts:          []string{"api.smtp.com"},
	Caps:           core.RecipientCaps{PerMessage: MaxRecipients, NeedsTo: true},
	Auth:           apidriver.BearerAuth,
	VerifyRead:     "/v4/channels",
	Open: func(t *apidriver.JSONTransport, s core.Settings) (core.Transport, error) {
		return Transport{t, s.String(KeyChannel)}, nil
	},
}

// Driver returns the SMTP.com driver description: schema, rules and
// constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one SMTP.com connection. It is safe for
// concurrent use.
type Transport struct {
	*apidriver.JSONTransport
	channel string
}

type address struct {
	Name    string `json:"name,omitempty"`
	Address string `json:"address"`
}

type part struct {
	Type     string `json:"type"`
	Charset  string `json:"charset"`
	Encoding string `json:"encoding"`
	Content  string `json:"content"`
}

type attachment struct {
	Content     string `json:"content"`
	Type        string `json:"type"`
	Encoding    string `json:"encoding"`
	Filename    string `json:"filename"`
	Disposition string `json:"disposition"`
	CID         string `json:"cid,omitempty"`
}

type request struct {
	Channel    string `json:"channel"`
	Recipients struct {
		To  []address `json:"to"`
		Cc  []address `json:"cc,omitempty"`
		Bcc []address `json:"bcc,omitempty"`
	} `json:"recipients"`
	Originator struct {
		From    address  `json:"from"`
		ReplyTo *address `json:"reply_to,omitempty"`
	} `json:"originator"`
	Subject string `json:"subject"`
	Body    struct {
		Parts       []part       `json:"parts"`
		Attachments []attachment `json:"attachments,omitempty"`
	} `json:"body"`
	CustomHeaders map[string]string `json:"custom_headers,omitempty"`
}

func addresses(list []core.Address) []address {
	return apidriver.Each(list, func(a core.Address) address { return address{Name: a.Name, Address: a.Email} })
}

// Send implements core.Transport. SMTP.com's reply_to takes one
// address; several go as a Reply-To custom header.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	if err := apidriver.CheckSize(msg, MaxMessageBytes); err != nil {
		return core.Receipt{}, err
	}
	msg = msg.ForEnvelope()
	from := t.Sender.Apply(msg.From)
	r := request{Channel: t.channel, Subject: msg.Subject, CustomHeaders: apidriver.CustomHeaders(msg)}
	r.Recipients.To, r.Recipients.Cc, r.Recipients.Bcc = addresses(msg.To), addresses(msg.Cc), addresses(msg.Bcc)
	r.Originator.From = address{Name: from.Name, Address: from.Email}
	if len(msg.ReplyTo) == 1 {
		r.Originator.ReplyTo = &address{Name: msg.ReplyTo[0].Name, Address: msg.ReplyTo[0].Email}
	}
	r.CustomHeaders = apidriver.WithReplyTo(r.CustomHeaders, msg.ReplyTo)
	// The content goes as it is, UTF-8: "8bit" says so.
	if msg.Text != "" || msg.HTML == "" {
		r.Body.Parts = append(r.Body.Parts, part{Type: "text/plain", Charset: "UTF-8", Encoding: "8bit", Content: msg.Text})
	}
	if msg.HTML != "" {
		r.Body.Parts = append(r.Body.Parts, part{Type: "text/html", Charset: "UTF-8", Encoding: "8bit", Content: msg.HTML})
	}
	for _, a := range msg.Attachments {
		att := attachment{Content: apidriver.Base64(a.Data), Type: apidriver.ContentType(a), Encoding: "base64", Filename: a.Filename, Disposition: "attachment"}
		if apidriver.IsInline(a) {
			att.Disposition, att.CID = "inline", a.ContentID
		}
		r.Body.Attachments = append(r.Body.Attachments, att)
	}
	var out struct {
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	}
	if _, err := t.Client.Do(ctx, "send", http.MethodPost, "/v4/messages", &r, &out); err != nil {
		return core.Receipt{}, err
	}
	// The answer's data.message reads "... msg_id: <id>".
	_, id, _ := strings.Cut(out.Data.Message, "msg_id: ")
	return core.Receipt{MessageID: strings.TrimSpace(id), Response: "200 OK " + out.Data.Message}, nil
}
