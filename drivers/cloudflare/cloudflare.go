// Package cloudflare is the mail transport for Cloudflare Email Service.
// It registers itself as the driver "cloudflare" when imported and sends
// each message through the Email Sending REST API, POST
// /client/v4/accounts/{account_id}/email/sending/send, with an API token.
// (Cloudflare also takes SMTP on smtp.mx.cloudflare.net:465 with the
// token as password: the smtp driver's "cloudflare" preset.)
package cloudflare

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of Cloudflare connections.
const Slug = "cloudflare"

// DefaultBaseURL is the Cloudflare API, used when base_url is empty.
const DefaultBaseURL = "https://api.cloudflare.com"

// KeyAccountID is the settings key of the Cloudflare account id.
const KeyAccountID = "account_id"

// MaxRecipients is the most recipients (to, cc and bcc together) one
// send takes.
const MaxRecipients = 50

// MaxMessageBytes is Cloudflare's cap on a whole message of a verified
// account (25 MiB; 5 MiB before the account is verified, over which
// Cloudflare refuses the message).
const MaxMessageBytes = 25 << 20

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:        Slug,
	Name:        "Cloudflare Email Service",
	Description: "Send through Cloudflare Email Service's Email Sending REST API with an API token.",
	SetupHelp:   "In the Cloudflare dashboard, copy the Account ID from the account home, then create an API token with the Account > Email Sending > Send permission (My Profile > API Tokens).",
	APIKey:      apidriver.APIKeyField("API token", "A Cloudflare API token with the Email Sending Send permission."),
	Account: []core.Field{{Key: KeyAccountID, Label: "Account ID", Type: core.FieldString, Required: true,
		Help: "The Cloudflare account that owns the sending domain."}},
	FromHelp:       "Sender address; its domain must be onboarded for sending in Cloudflare Email Service.",
	DefaultBaseURL: DefaultBaseURL,
	Hosts:          []string{"api.cloudflare.com"},
	Caps:           core.RecipientCaps{PerMessage: MaxRecipients, NeedsTo: true},
	Auth:           apidriver.BearerAuth,
	VerifyRead:     "/client/v4/user/tokens/verify",
	Open: func(t *apidriver.JSONTransport, s core.Settings) (core.Transport, error) {
		t.Client.Refused = refused
		return Transport{t, s.String(KeyAccountID)}, nil
	},
}

// Driver returns the Cloudflare driver description: schema, rules and
// constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one Cloudflare connection. It is safe for
// concurrent use.
type Transport struct {
	*apidriver.JSONTransport
	account string
}

// refused fails an answer of Cloudflare's envelope with success false,
// which may come with HTTP 200.
func refused(status int, body []byte) error {
	var env struct {
		Success *bool `json:"success"`
		Errors  []struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if status < 200 || status > 299 || json.Unmarshal(body, &env) != nil || env.Success == nil || *env.Success {
		return nil
	}
	return core.Permanent(fmt.Errorf("refused: %s", apidriver.Summary(body)))
}

type address struct {
	Address string `json:"address"`
	Name    string `json:"name,omitempty"`
}

type attachment struct {
	Content     string `json:"content"`
	Filename    string `json:"filename"`
	Type        string `json:"type"`
	Disposition string `json:"disposition"`
	ContentID   string `json:"content_id,omitempty"`
}

type request struct {
	From        address           `json:"from"`
	To          []string          `json:"to"`
	Cc          []string          `json:"cc,omitempty"`
	Bcc         []string          `json:"bcc,omitempty"`
	ReplyTo     *address          `json:"reply_to,omitempty"`
	Subject     string            `json:"subject"`
	HTML        string            `json:"html,omitempty"`
	Text        string            `json:"text,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Attachments []attachment      `json:"attachments,omitempty"`
}

func emails(list []core.Address) []string {
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, a.Email)
	}
	return out
}

// Send implements core.Transport. Cloudflare takes recipients as bare
// addresses (their names are not sent) and one reply_to; several
// Reply-To addresses go as a header. It answers per recipient: those in
// permanent_bounces are refused.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	if err := apidriver.CheckSize(msg, MaxMessageBytes); err != nil {
		return core.Receipt{}, err
	}
	msg = msg.ForEnvelope()
	from := t.Sender.Apply(msg.From)
	// Cloudflare's answer names no message id: the message goes with a
	// Message-ID, which the receipt keeps.
	if msg.MessageID() == "" {
		id, err := core.NewMessageID(from.Email)
		if err != nil {
			return core.Receipt{}, core.Temporary(err)
		}
		msg = msg.WithMessageID("<" + id + ">")
	}
	r := request{From: address{Address: from.Email, Name: from.Name}, To: emails(msg.To), Cc: emails(msg.Cc), Bcc: emails(msg.Bcc),
		Subject: msg.Subject, HTML: msg.HTML, Text: msg.Text, Headers: apidriver.CustomHeaders(msg)}
	if len(msg.ReplyTo) == 1 {
		r.ReplyTo = &address{Address: msg.ReplyTo[0].Email, Name: msg.ReplyTo[0].Name}
	}
	r.Headers = apidriver.WithReplyTo(r.Headers, msg.ReplyTo)
	if r.HTML == "" && r.Text == "" {
		r.Text = "\n"
	}
	for _, a := range msg.Attachments {
		att := attachment{Content: apidriver.Base64(a.Data), Filename: a.Filename, Type: apidriver.ContentType(a), Disposition: "attachment"}
		if apidriver.IsInline(a) {
			att.Disposition, att.ContentID = "inline", a.ContentID
		}
		r.Attachments = append(r.Attachments, att)
	}
	var out struct {
		Result struct {
			Delivered        []string `json:"delivered"`
			Queued           []string `json:"queued"`
			PermanentBounces []string `json:"permanent_bounces"`
		} `json:"result"`
	}
	path := "/client/v4/accounts/" + url.PathEscape(t.account) + "/email/sending/send"
	if _, err := t.Client.Do(ctx, "send", http.MethodPost, path, &r, &out); err != nil {
		return core.Receipt{}, err
	}
	res := out.Result
	rc := core.Receipt{MessageID: strings.Trim(msg.MessageID(), "<>"), Response: fmt.Sprintf("delivered %s; queued %s; permanent bounces %s",
		strings.Join(res.Delivered, ", "), strings.Join(res.Queued, ", "), strings.Join(res.PermanentBounces, ", "))}
	if len(res.PermanentBounces) == 0 {
		return rc, nil
	}
	if len(res.Delivered)+len(res.Queued) == 0 {
		return core.Receipt{}, core.Permanent(fmt.Errorf("cloudflare: send: every recipient bounced: %s", rc.Response))
	}
	for _, l := range []struct {
		status string
		list   []string
	}{{core.RecipientDelivered, res.Delivered}, {core.RecipientDelivered, res.Queued}, {core.RecipientRefused, res.PermanentBounces}} {
		for _, e := range l.list {
			o := core.RecipientOutcome{Email: e, Status: l.status}
			if l.status == core.RecipientRefused {
				o.Reply = "permanent bounce"
			}
			rc.Recipients = append(rc.Recipients, o)
		}
	}
	return rc, nil
}
