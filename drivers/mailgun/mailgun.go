// Package mailgun is the mail transport for the Mailgun v3 Messages API. It
// registers itself as the driver "mailgun" when imported and sends through
// the official mailgun-go SDK.
package mailgun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"regexp"
	"strings"

	mg "github.com/mailgun/mailgun-go/v4"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of Mailgun connections.
const Slug = "mailgun"

// API bases of Mailgun's two regions, /v3 included.
const (
	BaseURLUS = mg.APIBaseUS
	BaseURLEU = mg.APIBaseEU
)

// Settings keys of a Mailgun connection.
const (
	KeyAPIKey    = apidriver.KeyAPIKey
	KeyDomain    = "domain"
	KeyRegion    = "region"
	KeyFromEmail = apidriver.KeyFromEmail
	KeyFromName  = apidriver.KeyFromName
	KeyBaseURL   = apidriver.KeyBaseURL
)

// Regions a connection may choose.
const (
	RegionUS = "us"
	RegionEU = "eu"
)

func init() {
	core.Register(Driver())
}

// domainPattern is a DNS name with at least two labels.
var domainPattern = regexp.MustCompile(`^(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$`)

// Driver returns the Mailgun driver description: schema, presets, rules
// and constructor.
func Driver() core.Driver {
	return core.Driver{
		Slug:               Slug,
		DefaultConcurrency: apidriver.DefaultConcurrency,
		// At most 1,000 recipients (to, cc and bcc) per message, and a
		// to in every call.
		RecipientCaps: core.RecipientCaps{PerMessage: 1000, NeedsTo: true},
		Name:          "Mailgun",
		Description:   "Send through the Mailgun Messages API with a private API key and a verified sending domain.",
		SetupHelp:     "In the Mailgun dashboard, open Send → Sending → Domain settings → Sending API keys (or your account menu → API Security) to create the key; the sending domain is listed under Send → Sending → Domains.",
		Fields: []core.Field{
			apidriver.APIKeyField("Private API key",
				"The account's private API key (or a domain sending key)."),
			{Key: KeyDomain, Label: "Sending domain", Type: core.FieldString, Required: true,
				Help: "The domain as added in Mailgun, e.g. mg.example.com."},
			{Key: KeyRegion, Label: "Region", Type: core.FieldSelect, Options: []string{RegionUS, RegionEU}, Default: RegionUS,
				Help: "The region the domain was created in: us (api.mailgun.net) or eu (api.eu.mailgun.net)."},
			apidriver.FromEmailField("Sender address, normally on the sending domain."),
			apidriver.FromNameField(),
			{Key: "webhook_signing_key", Label: "HTTP webhook signing key", Type: core.FieldPassword, Advanced: true,
				Help: "Pro webhook receiver: Mailgun's HTTP webhook signing key (Sending > Webhooks)."},
			apidriver.BaseURLField("Overrides the region's API address; /v3 is added unless the URL already ends with it.",
				"api.mailgun.net", "api.eu.mailgun.net"),
		},
		Presets: []core.Preset{
			{Slug: "mailgun-us", Name: "Mailgun (US region)", Settings: core.Settings{KeyRegion: RegionUS}},
			{Slug: "mailgun-eu", Name: "Mailgun (EU region)", Settings: core.Settings{KeyRegion: RegionEU}},
		},
		Rules: []string{
			"domain must be a DNS name such as mg.example.com (no scheme, path or @).",
			"base_url, when set, overrides region; otherwise region us uses " + BaseURLUS + " and eu uses " + BaseURLEU + ".",
			apidriver.SenderRule,
		},
		Validate: validate,
		New:      New,
	}
}

func validate(s core.Settings) map[string]string {
	out := map[string]string{}
	if d := s.String(KeyDomain); !domainPattern.MatchString(d) {
		out[KeyDomain] = "Must be a domain name such as mg.example.com."
	}
	return out
}

// Transport sends through one Mailgun connection. It is safe for
// concurrent use.
type Transport struct {
	apiKey  string
	domain  string
	baseURL string
	sender  apidriver.Sender
	client  *http.Client
}

// New builds the transport of a Mailgun connection from its effective
// settings.
func New(conn *core.Connection, env core.DriverEnv) (core.Transport, error) {
	s := conn.Settings
	fields := map[string]string{}
	key := s.String(KeyAPIKey)
	if key == "" {
		fields[KeyAPIKey] = "This field is required."
	}
	domain := s.String(KeyDomain)
	if !domainPattern.MatchString(domain) {
		fields[KeyDomain] = "Must be a domain name such as mg.example.com."
	}
	region := s.String(KeyRegion)
	if region != "" && region != RegionUS && region != RegionEU {
		fields[KeyRegion] = "Must be one of: us, eu."
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	hc := apidriver.HTTPClient(env)
	return &Transport{
		apiKey:  key,
		domain:  domain,
		baseURL: APIBase(region, s.String(KeyBaseURL)),
		sender:  apidriver.SenderOf(s),
		client:  hc,
	}, nil
}

// APIBase returns the API base (with /v3) for a region and an optional
// base URL override.
func APIBase(region, override string) string {
	if o := strings.TrimRight(override, "/"); o != "" {
		if strings.HasSuffix(o, "/v3") {
			return o
		}
		return o + "/v3"
	}
	if region == RegionEU {
		return BaseURLEU
	}
	return BaseURLUS
}

// BaseURL returns the API base (with /v3) the transport talks to.
func (t *Transport) BaseURL() string { return t.baseURL }

func (t *Transport) sdk() *mg.MailgunImpl {
	c := mg.NewMailgun(t.domain, t.apiKey)
	c.SetAPIBase(t.baseURL)
	c.SetClient(t.client)
	return c
}

// Send implements core.Transport with POST /v3/{domain}/messages.
func (t *Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	c := t.sdk()
	m, err := t.build(msg)
	if err != nil {
		return core.Receipt{}, t.scrub(core.Permanent(fmt.Errorf("mailgun: build message: %w", err)))
	}
	status, id, err := c.Send(ctx, m)
	if err != nil {
		return core.Receipt{}, t.scrub(fmt.Errorf("mailgun: send: %w", classify(err)))
	}
	// Mailgun answers "<id@domain>"; its events and webhooks carry the id
	// without the angle brackets, so the receipt does too.
	return core.Receipt{MessageID: strings.TrimSuffix(strings.TrimPrefix(id, "<"), ">"), Response: status}, nil
}

// Verify implements core.Verifier with the authenticated read GET
// /v3/domains/{domain}, which also proves the domain exists in the chosen
// region.
func (t *Transport) Verify(ctx context.Context) error {
	_, err := t.sdk().GetDomain(ctx, t.domain)
	if err == nil {
		return nil
	}
	var ue *mg.UnexpectedResponseError
	if errors.As(err, &ue) {
		switch ue.Actual {
		case http.StatusUnauthorized, http.StatusForbidden:
			return t.scrub(core.Permanent(fmt.Errorf("mailgun: verify: the API key was rejected (HTTP %d): %s", ue.Actual, apidriver.Summary(ue.Data))))
		case http.StatusNotFound:
			return t.scrub(core.Permanent(fmt.Errorf("mailgun: verify: domain %q was not found in this region (HTTP 404): %s", t.domain, apidriver.Summary(ue.Data))))
		}
	}
	return t.scrub(fmt.Errorf("mailgun: verify: %w", classify(err)))
}

// classify marks an SDK error temporary or permanent: provider statuses by
// core.HTTPStatusError, an invalid message as permanent, anything else
// (network errors, timeouts) as temporary.
func classify(err error) error {
	var ue *mg.UnexpectedResponseError
	switch {
	case errors.As(err, &ue):
		return core.HTTPStatusError(ue.Actual, apidriver.Summary(ue.Data))
	case errors.Is(err, mg.ErrInvalidMessage):
		return core.Permanent(err)
	default:
		return core.Temporary(err)
	}
}

// build turns a message into the SDK's message.
func (t *Transport) build(msg *core.Message) (*mg.Message, error) {
	msg = msg.ForEnvelope()
	from := t.sender.Apply(msg.From)
	m := mg.NewMessage(from.String(), msg.Subject, msg.Text)
	for _, a := range msg.To {
		if err := m.AddRecipient(a.String()); err != nil {
			return nil, fmt.Errorf("add recipient: %w", err)
		}
	}
	for _, a := range msg.Cc {
		m.AddCC(a.String())
	}
	for _, a := range msg.Bcc {
		m.AddBCC(a.String())
	}
	if msg.HTML != "" {
		m.SetHTML(msg.HTML)
	}
	if len(msg.ReplyTo) > 0 {
		list := make([]string, 0, len(msg.ReplyTo))
		for _, a := range msg.ReplyTo {
			list = append(list, a.String())
		}
		m.SetReplyTo(strings.Join(list, ", "))
	}
	for _, h := range msg.Headers {
		if strings.EqualFold(h.Name, "Reply-To") {
			continue
		}
		m.AddHeader(h.Name, h.Value)
	}
	for _, a := range msg.Attachments {
		if a.Inline && a.ContentID != "" {
			// Mailgun names an inline part's content id by its filename.
			m.AddReaderInline(a.ContentID, io.NopCloser(bytes.NewReader(a.Data)))
			continue
		}
		m.AddBufferAttachment(filename(a), a.Data)
	}
	return m, nil
}

// filename returns the attachment's name, with an extension for its content
// type added when it has none: Mailgun types attachments by extension.
func filename(a core.Attachment) string {
	name := a.Filename
	if name == "" {
		name = "attachment"
	}
	if path.Ext(name) != "" || a.ContentType == "" {
		return name
	}
	if exts, err := mime.ExtensionsByType(a.ContentType); err == nil && len(exts) > 0 {
		return name + exts[0]
	}
	return name
}

// scrub returns err with the API key masked in its text.
func (t *Transport) scrub(err error) error { return apidriver.Scrub(err, t.apiKey) }
