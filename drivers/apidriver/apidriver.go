// Package apidriver holds what the mail drivers for the providers' HTTP
// APIs (sendgrid, mailgun, postmark, ses) do alike: the connection's sender
// override (from_email, from_name) and its schema fields, the optional
// base_url setting, the host's HTTP client, shortening a provider's answer
// for an error message, and keeping a connection's secrets out of error
// text. What differs between the providers stays in their own packages.
package apidriver

import (
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Settings keys that several API drivers share, with the same meaning.
const (
	KeyAPIKey    = "api_key"
	KeyFromEmail = "from_email"
	KeyFromName  = "from_name"
	KeyBaseURL   = "base_url"
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

// BaseURLField returns the base_url field with its help text.
func BaseURLField(help string) core.Field {
	return core.Field{Key: KeyBaseURL, Label: "API base URL", Type: core.FieldURL, Help: help}
}

// Sender is a connection's sender override: a non-empty Email or Name
// replaces that part of every message's sender.
type Sender struct {
	Email string
	Name  string
}

// SenderOf reads the sender override (from_email, from_name) of settings.
func SenderOf(s core.Settings) Sender {
	return Sender{Email: s.String(KeyFromEmail), Name: s.String(KeyFromName)}
}

// Apply returns from with the override's non-empty parts in place.
func (o Sender) Apply(from core.Address) core.Address {
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

// HTTPClient returns the host's HTTP client of env, or
// http.DefaultClient when the host gave none.
func HTTPClient(env core.DriverEnv) *http.Client {
	if env.HTTPClient != nil {
		return env.HTTPClient
	}
	return http.DefaultClient
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
// secrets: when its text holds one, err is wrapped in an error whose text
// shows core.Mask in place of every secret and whose chain (and so its
// temporary or permanent class) is err's. A nil err stays nil.
func Scrub(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range secrets {
		if s != "" && strings.Contains(msg, s) {
			return &scrubbedError{err: err, secrets: secrets}
		}
	}
	return err
}

// scrubbedError hides secrets in the text of the error it wraps, keeping
// its chain intact.
type scrubbedError struct {
	err     error
	secrets []string
}

func (e *scrubbedError) Error() string {
	msg := e.err.Error()
	for _, s := range e.secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, core.Mask)
		}
	}
	return msg
}

func (e *scrubbedError) Unwrap() error { return e.err }
