package apidriver

import (
	"net/http"

	"github.com/mailsvc/mailsvc/core"
)

// JSONDriver describes a driver of a provider's JSON API: what its
// connections screen shows and how its transport is built. Driver
// returns its core.Driver, with the fields every JSON API driver has
// (api_key, from_email, from_name, force_from and the advanced
// base_url); New builds the JSONTransport every such driver shares and
// hands it to Open, the driver's own part.
type JSONDriver struct {
	// Slug, Name, Description and SetupHelp are the core.Driver's.
	Slug, Name, Description, SetupHelp string
	// APIKey is the api_key field (APIKeyField).
	APIKey core.Field
	// Account are the provider's fields shown right after api_key
	// (Cloudflare's account_id).
	Account []core.Field
	// FromHelp is the first sentence of from_email's help: the sender
	// addresses the provider takes.
	FromHelp string
	// Extra are the provider's fields shown after force_from and before
	// base_url (a region, a secret, webhook settings).
	Extra []core.Field
	// DefaultBaseURL is the API used when base_url is empty.
	DefaultBaseURL string
	// BaseURLHelp is base_url's help; empty: "Leave empty for
	// <DefaultBaseURL>.".
	BaseURLHelp string
	// Hosts are the provider's own API hosts base_url takes.
	Hosts []string
	// Caps are the provider's recipient caps.
	Caps core.RecipientCaps
	// MaxMessageBytes is the provider's size cap of a message, which
	// JSONTransport.CheckSize applies; 0: none.
	MaxMessageBytes int
	// Concurrency is the default max_concurrency; 0: DefaultConcurrency.
	Concurrency int
	// Presets are the core.Driver's presets.
	Presets []core.Preset
	// Rules are the schema rules; empty: SenderRule and the base_url
	// default.
	Rules []string
	// Auth makes the setter of a request's credentials from the api_key;
	// nil for an API that takes its key in the body.
	Auth func(key string) func(http.Header)
	// VerifyRead is the credentials check, an authenticated GET that
	// sends nothing, as its path under the base URL ("/v3/account"):
	// JSONTransport.Verify makes it. Empty for a driver whose transport
	// checks its credentials its own way.
	VerifyRead string
	// DefaultBaseURLOf, when set, is the base URL of a connection whose
	// base_url is empty, in place of DefaultBaseURL (a region's).
	DefaultBaseURLOf func(s core.Settings) string
	// Open returns a connection's transport around t, built from its
	// common settings: the provider's own request and answer (Send) and
	// credentials check (Verify). It may read the connection's other
	// settings s and set t's provider-specific parts.
	Open func(t *JSONTransport, s core.Settings) (core.Transport, error)
}

// Driver returns the driver's description: schema, rules and
// constructor (New).
func (d JSONDriver) Driver() core.Driver {
	baseHelp := d.BaseURLHelp
	if baseHelp == "" {
		baseHelp = "Leave empty for " + d.DefaultBaseURL + "."
	}
	fields := append([]core.Field{d.APIKey}, d.Account...)
	fields = append(fields, FromEmailField(d.FromHelp), FromNameField(), ForceFromField())
	fields = append(append(fields, d.Extra...), BaseURLField(baseHelp, d.Hosts...))
	rules := d.Rules
	if len(rules) == 0 {
		rules = []string{SenderRule, "base_url, when empty, is " + d.DefaultBaseURL + "."}
	}
	concurrency := d.Concurrency
	if concurrency == 0 {
		concurrency = DefaultConcurrency
	}
	return core.Driver{
		Slug:               d.Slug,
		Name:               d.Name,
		Description:        d.Description,
		SetupHelp:          d.SetupHelp,
		DefaultConcurrency: concurrency,
		RecipientCaps:      d.Caps,
		Fields:             fields,
		Presets:            d.Presets,
		Rules:              rules,
		New:                d.New,
	}
}

// New builds the transport of a connection from its effective settings:
// the JSONTransport of its api_key (a field error when empty; see
// NewJSONAPI), base_url and sender override, completed by Open.
func (d JSONDriver) New(conn *core.Connection, env core.DriverEnv) (core.Transport, error) {
	def := d.DefaultBaseURL
	if d.DefaultBaseURLOf != nil {
		def = d.DefaultBaseURLOf(conn.Settings)
	}
	api, _, err := NewJSONAPI(d.Slug, def, conn.Settings, env, d.Auth)
	if err != nil {
		return nil, err
	}
	return d.Open(&JSONTransport{Client: api, Sender: SenderOf(conn.Settings), MaxMessageBytes: d.MaxMessageBytes, VerifyRead: d.VerifyRead}, conn.Settings)
}
