// Package smtp2go is the mail transport for the SMTP2GO API. It
// registers itself as the driver "smtp2go" when imported and sends with
// POST /v3/email/send.
package smtp2go

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of SMTP2GO connections.
const Slug = "smtp2go"

// DefaultBaseURL is the real SMTP2GO API, used when base_url is empty.
const DefaultBaseURL = "https://api.smtp2go.com"

// MaxPerList is the most addresses SMTP2GO takes in each of to, cc and
// bcc.
const MaxPerList = 100

// MaxMessageBytes is the largest message the driver sends: SMTP2GO
// takes 50 MB per email.
const MaxMessageBytes = 50 << 20

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:            Slug,
	Name:            "SMTP2GO",
	Description:     "Send through the SMTP2GO API with an API key.",
	SetupHelp:       "In SMTP2GO, open Sending > API Keys and add a key with the Email and Statistics permissions (it starts with api-).",
	APIKey:          apidriver.APIKeyField("API key", "An SMTP2GO API key (api-...) with the /email/send and /stats permissions."),
	FromHelp:        "Sender address; must be on a sender domain or a single sender verified in SMTP2GO.",
	DefaultBaseURL:  DefaultBaseURL,
	Hosts:           []string{"api.smtp2go.com"},
	Caps:            core.RecipientCaps{To: MaxPerList, Cc: MaxPerList, Bcc: MaxPerList, NeedsTo: true},
	MaxMessageBytes: MaxMessageBytes,
	Auth:            apidriver.HeaderAuth("X-Smtp2go-Api-Key"),
	Open:            func(t *apidriver.JSONTransport, _ core.Settings) (core.Transport, error) { return Transport{t}, nil },
}

// Driver returns the SMTP2GO driver description: schema, rules and
// constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one SMTP2GO connection. It is safe for
// concurrent use.
type Transport struct{ *apidriver.JSONTransport }

// Send implements core.Transport with POST /v3/email/send. SMTP2GO
// answers 200 with the count of recipients it took: a call that took
// none, or failed any, is a permanent failure.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	var out struct {
		Data struct {
			Succeeded int      `json:"succeeded"`
			Failed    int      `json:"failed"`
			Failures  []string `json:"failures"`
			EmailID   string   `json:"email_id"`
		} `json:"data"`
	}
	r, err := t.Post(ctx, msg, "/v3/email/send", t.build(msg), &out)
	if err != nil {
		return core.Receipt{}, err
	}
	if out.Data.Succeeded == 0 || out.Data.Failed > 0 {
		return core.Receipt{}, core.Permanent(fmt.Errorf("smtp2go: send: %d recipients failed: %s", out.Data.Failed, apidriver.Summary(r.Body)))
	}
	return core.Receipt{MessageID: out.Data.EmailID, Response: r.StatusLine()}, nil
}

// Verify implements core.Verifier with the authenticated read POST
// /v3/stats/email_summary (SMTP2GO's reads are POSTs), which sends
// nothing.
func (t Transport) Verify(ctx context.Context) error {
	return t.Client.Verify(ctx, http.MethodPost, "/v3/stats/email_summary", struct{}{}, nil)
}

type header struct {
	Header string `json:"header"`
	Value  string `json:"value"`
}

type file struct {
	Filename string `json:"filename"`
	Fileblob string `json:"fileblob"`
	Mimetype string `json:"mimetype"`
}

type email struct {
	Sender        string   `json:"sender"`
	To            []string `json:"to"`
	Cc            []string `json:"cc,omitempty"`
	Bcc           []string `json:"bcc,omitempty"`
	Subject       string   `json:"subject"`
	HTMLBody      string   `json:"html_body,omitempty"`
	TextBody      string   `json:"text_body,omitempty"`
	CustomHeaders []header `json:"custom_headers,omitempty"`
	Attachments   []file   `json:"attachments,omitempty"`
	Inlines       []file   `json:"inlines,omitempty"`
}

// build turns a message (the part its Envelope names) into SMTP2GO's
// body. SMTP2GO has no Reply-To field: the addresses go in a Reply-To
// custom header, as its docs advise. An inline image goes in inlines,
// named by its Content-ID.
func (t Transport) build(msg *core.Message) email {
	msg = msg.ForEnvelope()
	e := email{Sender: t.Sender.Apply(msg.From).String(), To: apidriver.Mailboxes(msg.To), Cc: apidriver.Mailboxes(msg.Cc), Bcc: apidriver.Mailboxes(msg.Bcc),
		Subject: msg.Subject, HTMLBody: msg.HTML, TextBody: msg.Text}
	if len(msg.ReplyTo) > 0 {
		e.CustomHeaders = append(e.CustomHeaders, header{"Reply-To", strings.Join(apidriver.Mailboxes(msg.ReplyTo), ", ")})
	}
	for _, h := range msg.Headers {
		e.CustomHeaders = append(e.CustomHeaders, header{h.Name, h.Value})
	}
	for _, a := range msg.Attachments {
		f := file{Filename: a.Filename, Fileblob: apidriver.Base64(a.Data), Mimetype: apidriver.ContentType(a)}
		if a.Inline && a.ContentID != "" {
			f.Filename = a.ContentID
			e.Inlines = append(e.Inlines, f)
			continue
		}
		e.Attachments = append(e.Attachments, f)
	}
	return e
}
