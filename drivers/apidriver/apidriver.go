// Package apidriver holds what the mail drivers for the providers' HTTP
// APIs do alike: the connection's sender override (from_email, from_name,
// force_from) and its schema fields, the optional base_url setting, the
// host's HTTP client, shortening a provider's answer for an error message,
// and keeping a connection's secrets out of error text; and, for the
// drivers without an SDK, the one JSON API client (JSONAPI), the transport
// core around it (JSONTransport) and the message parts the JSON APIs take
// alike. What differs between the providers stays in their own packages.
package apidriver

import (
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Settings keys that several API drivers share, with the same meaning.
const (
	KeyAPIKey    = "api_key"
	KeyFromEmail = "from_email"
	KeyFromName  = "from_name"
	KeyBaseURL   = "base_url"
	KeyForceFrom = "force_from"
)

// SenderRule is the schema rule of the sender override fields.
const SenderRule = "from_email, when set, replaces the sender address of every message; from_name likewise replaces the sender name."

// APIKeyField returns the required api_key field, a password, with the
// provider's label and help text for it.
func APIKeyField(label, help string) core.Field {
	return core.Field{Key: KeyAPIKey, Label: label, Type: core.FieldPassword, Required: true, Help: help}
}

// FromEmailField returns the from_email field. help is the first sentence
// of its help text, saying which sender addresses the provider accepts;
// "Empty: the message's own sender." follows it.
func FromEmailField(help string) core.Field {
	return core.Field{Key: KeyFromEmail, Label: "From email", Type: core.FieldEmail,
		Help: help + " Empty: the message's own sender."}
}

// FromNameField returns the from_name field.
func FromNameField() core.Field {
	return core.Field{Key: KeyFromName, Label: "From name", Type: core.FieldString,
		Help: "Sender display name. Empty: the message's own sender name."}
}

// BaseURLField returns the base_url field with its help text and the
// provider's own API hosts (core.Field.Hosts), the only ones it takes
// unless MAILSVC_ALLOW_CUSTOM_ENDPOINTS is true. It is a destination: the
// connection's secrets go to it; and advanced: a first-time user leaves it
// empty.
func BaseURLField(help string, hosts ...string) core.Field {
	return core.Field{Key: KeyBaseURL, Label: "API base URL", Type: core.FieldURL, Help: help,
		Hosts: hosts, Destination: true, Advanced: true}
}

// ForceFromField returns the force_from field: true (the default, as
// the API drivers always did) makes from_email and from_name replace the
// sender of every message; false uses them only for a message without a
// sender.
func ForceFromField() core.Field {
	return core.Field{Key: KeyForceFrom, Label: "Force from", Type: core.FieldBoolean, Default: true,
		Help: "On: From email and From name replace the sender of every message. Off: they are used only when a message has no sender."}
}

// Sender is a connection's sender override: a non-empty Email or Name
// replaces that part of every message's sender, or only of a message
// without a sender when Keep is set.
type Sender struct {
	Email string
	Name  string
	// Keep is force_from off: a message's own sender is kept.
	Keep bool
}

// SenderOf reads the sender override (from_email, from_name, force_from,
// true when absent) of settings.
func SenderOf(s core.Settings) Sender {
	return Sender{Email: s.String(KeyFromEmail), Name: s.String(KeyFromName), Keep: !s.Bool(KeyForceFrom, true)}
}

// Apply returns from with the override's non-empty parts in place.
func (o Sender) Apply(from core.Address) core.Address {
	if o.Keep && from.Email != "" {
		return from
	}
	if o.Email != "" {
		from.Email = o.Email
	}
	if o.Name != "" {
		from.Name = o.Name
	}
	return from
}

// BaseURL returns the base_url setting without trailing slashes, or def
// when it is empty.
func BaseURL(s core.Settings, def string) string {
	if base := strings.TrimRight(s.String(KeyBaseURL), "/"); base != "" {
		return base
	}
	return def
}

// DefaultConcurrency is the default max_concurrency of the HTTP API
// drivers.
const DefaultConcurrency = 50

// SharedTransport is the HTTP transport every API driver's connections
// share when the host gives no transport of its own: connections kept
// alive and reused (up to 500 idle per provider host, so a connection's
// max_concurrency sends each keep theirs), HTTP/2 where the provider
// speaks it.
var SharedTransport = newSharedTransport()

func newSharedTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ForceAttemptHTTP2 = true
	t.MaxIdleConns = 2000
	t.MaxIdleConnsPerHost = core.MaxConnectionConcurrency
	t.IdleConnTimeout = 90 * time.Second
	return t
}

// sharedClient is http.DefaultClient over SharedTransport.
var sharedClient = &http.Client{Transport: UnansweredTransport{Base: SharedTransport}}

// HTTPClient returns the host's HTTP client of env, its transport
// wrapped in UnansweredTransport (a send written whole with no answer is
// core.Uncertain). A client without a transport of its own (nil,
// http.DefaultClient) sends through SharedTransport instead of
// http.DefaultTransport, whose two idle connections per host would make
// concurrent sends dial again and again.
func HTTPClient(env core.DriverEnv) *http.Client {
	c := env.HTTPClient
	switch {
	case c == nil || c == http.DefaultClient:
		return sharedClient
	case c.Transport == nil:
		cp := *c
		cp.Transport = UnansweredTransport{Base: SharedTransport}
		return &cp
	}
	if _, ok := c.Transport.(UnansweredTransport); ok {
		return c
	}
	cp := *c
	cp.Transport = UnansweredTransport{Base: c.Transport}
	return &cp
}

// UnansweredTransport marks the failure of a request that may have
// reached the provider: a POST, PUT or PATCH whose request and body were
// written whole, after which the response never came (a timeout, a
// connection reset or closed) fails with a core.Uncertain error, so that
// the engine looks the message up before sending it again. A failure
// before the request was written whole (a refused connection, a DNS or
// TLS failure) is returned as it is. Reads (GET) are never uncertain.
type UnansweredTransport struct {
	// Base makes the requests.
	Base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (u UnansweredTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return u.Base.RoundTrip(req)
	}
	var written atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		written.Store(info.Err == nil)
	}}
	resp, err := u.Base.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil && written.Load() {
		return nil, core.Uncertain(fmt.Errorf("the request was sent and no response came: %w", err))
	}
	return resp, err
}

// summaryLimit is how many bytes of a provider's answer an error keeps.
const summaryLimit = 500

// Summary shortens a provider's response body for an error message: spaces
// trimmed, and cut to 500 bytes followed by "..." when longer.
func Summary[T ~string | ~[]byte](body T) string {
	s := strings.TrimSpace(string(body))
	if len(s) > summaryLimit {
		s = s[:summaryLimit] + "..."
	}
	return s
}

// Scrub returns err so that its text never shows any of the non-empty
// secrets, its chain (and so its temporary or permanent class) kept: it
// is core.Scrub.
func Scrub(err error, secrets ...string) error { return core.Scrub(err, secrets...) }
