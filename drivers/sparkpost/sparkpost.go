// Package sparkpost is the mail transport for the SparkPost
// Transmissions API, in its US and EU regions. It registers itself as
// the driver "sparkpost" when imported and sends with POST
// /api/v1/transmissions.
package sparkpost

import (
	"context"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of SparkPost connections.
const Slug = "sparkpost"

// Regions of a SparkPost account and their API addresses.
const (
	KeyRegion = "region"
	RegionUS  = "us"
	RegionEU  = "eu"
	BaseURLUS = "https://api.sparkpost.com"
	BaseURLEU = "https://api.eu.sparkpost.com"
)

// KeyWebhookUsername and KeyWebhookPassword are the settings keys of the
// HTTP Basic credentials set on the webhook in SparkPost.
const (
	KeyWebhookUsername = "webhook_username"
	KeyWebhookPassword = "webhook_password"
)

// MaxRecipients is the most recipients the driver puts in one
// transmission.
const MaxRecipients = 1000

// MaxMessageBytes is the largest message the driver sends: SparkPost
// takes 20 MB per message.
const MaxMessageBytes = 20 << 20

func init() {
	core.Register(Driver())
}

var driver = apidriver.JSONDriver{
	Slug:        Slug,
	Name:        "SparkPost",
	Description: "Send through the SparkPost Transmissions API (US or EU region) with an API key.",
	SetupHelp:   "In SparkPost, open Configuration > API Keys and create a key with the Transmissions: Read/Write and Account: Read-only permissions.",
	APIKey:      apidriver.APIKeyField("API key", "A SparkPost API key with the Transmissions: Read/Write and Account: Read-only permissions."),
	FromHelp:    "Sender address; must be on a sending domain verified in SparkPost.",
	Extra: []core.Field{
		{Key: KeyRegion, Label: "Region", Type: core.FieldSelect, Options: []string{RegionUS, RegionEU}, Default: RegionUS,
			Help: "The region of the SparkPost account: us (app.sparkpost.com) or eu (app.eu.sparkpost.com)."},
		{Key: KeyWebhookUsername, Label: "Webhook username", Type: core.FieldString, Advanced: true,
			Help: "Pro webhook receiver: the user name of the webhook's Basic authentication in SparkPost (Configuration > Webhooks)."},
		{Key: KeyWebhookPassword, Label: "Webhook password", Type: core.FieldPassword, Advanced: true,
			Help: "Pro webhook receiver: the password of the webhook's Basic authentication in SparkPost."},
	},
	DefaultBaseURL: BaseURLUS,
	DefaultBaseURLOf: func(s core.Settings) string {
		if s.String(KeyRegion) == RegionEU {
			return BaseURLEU
		}
		return BaseURLUS
	},
	BaseURLHelp: "Overrides the region's API address.",
	Hosts:       []string{"api.sparkpost.com", "api.eu.sparkpost.com"},
	Caps:        core.RecipientCaps{PerMessage: MaxRecipients, NeedsTo: true},
	Presets: []core.Preset{
		{Slug: "sparkpost-us", Name: "SparkPost (US region)", Settings: core.Settings{KeyRegion: RegionUS}},
		{Slug: "sparkpost-eu", Name: "SparkPost (EU region)", Settings: core.Settings{KeyRegion: RegionEU}},
	},
	Rules: []string{
		"base_url, when set, overrides region; otherwise region us uses " + BaseURLUS + " and eu uses " + BaseURLEU + ".",
		apidriver.SenderRule,
	},
	MaxMessageBytes: MaxMessageBytes,
	Auth:            apidriver.HeaderAuth("Authorization"),
	VerifyRead:      "/api/v1/account",
	Open:            func(t *apidriver.JSONTransport, _ core.Settings) (core.Transport, error) { return Transport{t}, nil },
}

// Driver returns the SparkPost driver description: schema, presets,
// rules and constructor.
func Driver() core.Driver { return driver.Driver() }

// Transport sends through one SparkPost connection. It is safe for
// concurrent use.
type Transport struct{ *apidriver.JSONTransport }

// Send implements core.Transport with POST /api/v1/transmissions. The
// receipt's message id is the transmission id, which SparkPost's events
// carry as transmission_id.
func (t Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	var out struct {
		Results struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	r, err := t.Post(ctx, msg, "/api/v1/transmissions", t.build(msg), &out)
	if err != nil {
		return core.Receipt{}, err
	}
	return core.Receipt{MessageID: out.Results.ID, Response: r.StatusLine()}, nil
}

type address struct {
	Name     string `json:"name,omitempty"`
	Email    string `json:"email"`
	HeaderTo string `json:"header_to,omitempty"`
}

type recipient struct {
	Address address `json:"address"`
}

type file struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Data string `json:"data"`
}

type content struct {
	From         address           `json:"from"`
	Subject      string            `json:"subject"`
	Text         string            `json:"text,omitempty"`
	HTML         string            `json:"html,omitempty"`
	ReplyTo      string            `json:"reply_to,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	Attachments  []file            `json:"attachments,omitempty"`
	InlineImages []file            `json:"inline_images,omitempty"`
}

type transmission struct {
	Recipients []recipient `json:"recipients"`
	Content    content     `json:"content"`
}

// build turns a message (the part its Envelope names) into a
// transmission. SparkPost builds the To header from the recipients
// without header_to; a Cc or Bcc recipient carries the To header in
// header_to, and the Cc ones are listed in the CC header. An inline
// image goes in inline_images, named by its Content-ID.
func (t Transport) build(msg *core.Message) transmission {
	msg = msg.ForEnvelope()
	from := t.Sender.Apply(msg.From)
	c := content{From: address{Name: from.Name, Email: from.Email}, Subject: msg.Subject, Text: msg.Text, HTML: msg.HTML,
		ReplyTo: strings.Join(apidriver.Mailboxes(msg.ReplyTo), ", "), Headers: apidriver.CustomHeaders(msg)}
	if len(msg.Cc) > 0 {
		if c.Headers == nil {
			c.Headers = map[string]string{}
		}
		c.Headers["CC"] = strings.Join(apidriver.Mailboxes(msg.Cc), ", ")
	}
	to := strings.Join(apidriver.Mailboxes(msg.To), ", ")
	var rs []recipient
	for _, a := range msg.To {
		rs = append(rs, recipient{address{Name: a.Name, Email: a.Email}})
	}
	for _, a := range append(append([]core.Address(nil), msg.Cc...), msg.Bcc...) {
		rs = append(rs, recipient{address{Name: a.Name, Email: a.Email, HeaderTo: to}})
	}
	for _, a := range msg.Attachments {
		if a.Inline && a.ContentID != "" {
			c.InlineImages = append(c.InlineImages, file{Name: a.ContentID, Type: apidriver.ContentType(a), Data: apidriver.Base64(a.Data)})
			continue
		}
		c.Attachments = append(c.Attachments, file{Name: a.Filename, Type: apidriver.ContentType(a), Data: apidriver.Base64(a.Data)})
	}
	return transmission{Recipients: rs, Content: c}
}
