package core

import (
	"context"
	"fmt"
	"reflect"
	"strings"
)

// Field types of a driver settings schema.
const (
	FieldString   = "string"   // free text
	FieldPassword = "password" // a secret; always sensitive
	FieldEmail    = "email"    // a bare email address
	FieldInteger  = "integer"  // a whole number, bounded by Min and Max
	FieldBoolean  = "boolean"
	FieldSelect   = "select" // one of Options
	FieldURL      = "url"
	FieldText     = "text" // multi-line text
)

// Field is one key of a driver's settings schema, as GET /transports
// serves it. Key is the connection settings key and the {KEY} part of the
// credential constant MAILSVC_{DRIVER}_{KEY}.
type Field struct {
	Key      string   `json:"key"`
	Label    string   `json:"label"`
	Type     string   `json:"type"`
	Required bool     `json:"required"`
	Default  any      `json:"default,omitempty"`
	Options  []string `json:"options,omitempty"`
	Min      *int64   `json:"min,omitempty"`
	Max      *int64   `json:"max,omitempty"`
	Help     string   `json:"help,omitempty"`
	// Advanced marks a field a first-time user need not see: the setup
	// wizard and the connection form show it under "Advanced".
	Advanced bool `json:"advanced,omitempty"`
	// Hosts, on a URL field that names one of the provider's endpoints
	// (base_url, oauth_base_url, SES custom_endpoint and imds_endpoint),
	// lists the provider's own hosts: unless MAILSVC_ALLOW_CUSTOM_ENDPOINTS
	// is true the field only takes a URL on one of them, over https unless
	// the entry says http:// (see CheckEndpoint for the patterns).
	Hosts []string `json:"hosts,omitempty"`
	// ConstantOnly marks a key only its constant sets (e.g. SES
	// imds_role_source, MAILSVC_AWS_ENABLE_IMDS_ROLE_SOURCE): a value other
	// than empty or the default given through the API is a validation
	// error, and a stored value is ignored.
	ConstantOnly bool `json:"constant_only,omitempty"`
	// RequiredWhen makes the field required only when every listed key has
	// the listed value (e.g. {"delivery_mode": "api"}).
	RequiredWhen map[string]string `json:"required_when,omitempty"`
	// Destination marks a field that says where the connection's secrets
	// go (a host, port, encryption or base URL). A stored secret is bound
	// to the destination it was entered for: a change of a destination
	// field drops or asks again for every stored secret of the connection.
	Destination bool `json:"destination,omitempty"`
	// Sensitive marks a value that is encrypted at rest and masked in every
	// output. Keys whose names match the spec's sensitive words are
	// sensitive whatever this says.
	Sensitive bool `json:"sensitive"`
	// Constant is the name of the constant that pins this key; the registry
	// fills it in.
	Constant string `json:"constant"`
}

// Preset is a named set of settings a user can start from (a well-known
// SMTP host, a regional API endpoint).
type Preset struct {
	Slug     string   `json:"slug"`
	Name     string   `json:"name"`
	Settings Settings `json:"settings"`
}

// Driver describes one mail transport: its schema, presets, extra
// validation and the constructor of its Transport.
type Driver struct {
	Slug        string `json:"driver"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// SetupHelp tells a site owner, in one or two sentences, where the
	// provider's console shows the key or password this driver asks for.
	SetupHelp string   `json:"setup_help,omitempty"`
	Fields    []Field  `json:"fields"`
	Presets   []Preset `json:"presets"`
	// Rules lists, in words, the checks Validate makes beyond the schema.
	Rules []string `json:"rules,omitempty"`
	// Validate, when set, checks rules that span several fields. It gets
	// settings that already passed the schema and returns field → message.
	Validate func(s Settings) map[string]string `json:"-"`
	// New builds a transport for a connection's effective settings.
	New func(conn *Connection, env DriverEnv) (Transport, error) `json:"-"`
	// OAuthProvider names the authorization server of an OAuth driver
	// (ProviderGoogle, ProviderMicrosoft, ProviderZoho); "" for a driver
	// without OAuth.
	OAuthProvider string `json:"oauth_provider,omitempty"`
	// Authorized, when set, runs once a connection of an OAuth driver has
	// a new token (after the callback or POST oauth-token). It may check
	// the token against the provider and returns settings to store with it
	// (Zoho's account id), or an error that rejects the token.
	Authorized func(ctx context.Context, conn *Connection, accessToken string, env DriverEnv) (Settings, error) `json:"-"`
	// DefaultConcurrency is the default of the connection's
	// max_concurrency setting (sends in flight at once per process):
	// DefaultDriverConcurrency (10) when 0; HTTP API drivers set 50.
	DefaultConcurrency int `json:"default_concurrency,omitempty"`
	// RecipientCaps are the most recipients the provider takes in one
	// call; the delivery engine sends a message over them as several
	// calls. Zero: no cap (SMTP, whose server answers per recipient).
	RecipientCaps RecipientCaps `json:"recipient_caps"`
}

// Concurrency returns the sends a connection of this driver may have in
// flight at once in one process: its max_concurrency setting, else the
// driver's default.
func (d *Driver) Concurrency(s Settings) int {
	if n, ok := AsInt(s[SettingMaxConcurrency]); ok && n >= 1 {
		return int(min(n, MaxConnectionConcurrency))
	}
	if f := d.Field(SettingMaxConcurrency); f != nil {
		if n, ok := AsInt(f.Default); ok && n >= 1 {
			return int(n)
		}
	}
	if d.DefaultConcurrency > 0 {
		return d.DefaultConcurrency
	}
	return DefaultDriverConcurrency
}

// Field returns the schema field named key, or nil.
func (d *Driver) Field(key string) *Field {
	for i := range d.Fields {
		if d.Fields[i].Key == key {
			return &d.Fields[i]
		}
	}
	return nil
}

// MovedDestinations returns the keys of the destination fields whose
// value differs between before and after, sorted as the schema lists them.
// An absent or empty value counts as the field's default, and values are
// compared in their normalised form (587 and 587.0 are one port).
func (d *Driver) MovedDestinations(before, after Settings) []string {
	var out []string
	for i := range d.Fields {
		f := &d.Fields[i]
		if f.Destination && !reflect.DeepEqual(f.valueIn(before), f.valueIn(after)) {
			out = append(out, f.Key)
		}
	}
	return out
}

// valueIn returns the field's value in s, defaulted and normalised as
// ValidateSettings would store it; a value the field rejects is returned
// as it is.
func (f *Field) valueIn(s Settings) any {
	v := s[f.Key]
	if v == nil || v == "" {
		v = f.Default
	}
	if v == nil {
		return ""
	}
	if norm, msg := f.check(v); msg == "" {
		return norm
	}
	return v
}

// ConstantName returns the constant that pins a settings key of a driver:
// MAILSVC_{DRIVER}_{KEY}, both parts upper-cased.
func ConstantName(driver, key string) string {
	return "MAILSVC_" + strings.ToUpper(driver) + "_" + strings.ToUpper(key)
}

// drivers holds the registered drivers.
var drivers slugRegistry[Driver]

// Register makes a driver available by its slug. Drivers call it from
// init(). It panics if the slug is empty, already registered, or the
// driver has no constructor, as database/sql.Register does.
func Register(d Driver) {
	if d.Slug == "" || d.New == nil {
		panic("core: Register needs a slug and a constructor")
	}
	if !drivers.add(d.Slug, d, prepareDriver) {
		panic("core: Register called twice for driver " + d.Slug)
	}
}

// prepareDriver completes a driver being registered: its own copy of the
// fields, the rate fields it lacks, each field's constant and
// sensitivity, and an empty list of presets for none.
func prepareDriver(d *Driver) {
	d.Fields = append([]Field(nil), d.Fields...)
	for _, f := range rateFields(d.DefaultConcurrency) {
		if d.Field(f.Key) == nil {
			d.Fields = append(d.Fields, f)
		}
	}
	for i := range d.Fields {
		d.Fields[i].Constant = ConstantName(d.Slug, d.Fields[i].Key)
	}
	markSensitive(d.Fields)
	if d.Presets == nil {
		d.Presets = []Preset{}
	}
}

// LookupDriver returns the registered driver with the slug.
func LookupDriver(slug string) (*Driver, bool) { return drivers.lookup(slug) }

// Drivers returns every registered driver, sorted by slug.
func Drivers() []*Driver { return drivers.all() }

// sensitiveWords are the spec's words that make a settings key sensitive.
var sensitiveWords = []string{"key", "secret", "password", "token", "username"}

// IsSensitiveKey reports whether a settings key is sensitive: its name
// contains one of the spec's words, or it is listed in extra (the keys added
// through the mail_svc_sensitive_keys extension).
func IsSensitiveKey(key string, extra []string) bool {
	k := strings.ToLower(key)
	for _, w := range sensitiveWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	for _, e := range extra {
		if strings.EqualFold(e, key) {
			return true
		}
	}
	return false
}

// ValidateSettings checks settings against the driver's schema and its
// cross-field rules. It returns a validation error naming every failed
// field, or nil. Values are normalised in place: integral JSON numbers
// become int64, and absent fields with defaults get the default.
func (d *Driver) ValidateSettings(s Settings) error {
	return ValidateFields(d.Fields, d.Validate, "driver "+d.Slug, s)
}

// ValidateFields checks settings against a schema (fields) and its
// cross-field rules (validate, may be nil), as ValidateSettings does for a
// driver; owner names the schema in the message for an unknown key.
func ValidateFields(schema []Field, validate func(Settings) map[string]string, owner string, s Settings) error {
	field := func(key string) *Field {
		for i := range schema {
			if schema[i].Key == key {
				return &schema[i]
			}
		}
		return nil
	}
	fields := map[string]string{}
	for k := range s {
		if field(k) == nil {
			fields[k] = fmt.Sprintf("Unknown setting for %s.", owner)
		}
	}
	for i := range schema {
		f := &schema[i]
		v, present := s[f.Key]
		if !present || v == nil || v == "" {
			if f.Default != nil && !present {
				s[f.Key] = f.Default
				continue
			}
			if f.Required || f.requiredBy(s) {
				fields[f.Key] = "This field is required."
			}
			continue
		}
		norm, msg := f.check(v)
		if msg != "" {
			fields[f.Key] = msg
			continue
		}
		s[f.Key] = norm
	}
	if len(fields) == 0 && validate != nil {
		for k, v := range validate(s) {
			fields[k] = v
		}
	}
	return Invalid(fields)
}

func (f *Field) requiredBy(s Settings) bool {
	if len(f.RequiredWhen) == 0 {
		return false
	}
	for k, want := range f.RequiredWhen {
		if s.String(k) != want {
			return false
		}
	}
	return true
}

// check validates one present value and returns it normalised, or a message.
func (f *Field) check(v any) (any, string) {
	switch f.Type {
	case FieldInteger:
		n, ok := AsInt(v)
		if !ok {
			return nil, "Must be a whole number."
		}
		if f.Min != nil && n < *f.Min {
			return nil, fmt.Sprintf("Must be at least %d.", *f.Min)
		}
		if f.Max != nil && n > *f.Max {
			return nil, fmt.Sprintf("Must be at most %d.", *f.Max)
		}
		return n, ""
	case FieldBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, "Must be true or false."
		}
		return b, ""
	}
	s, ok := v.(string)
	if !ok {
		return nil, "Must be a string."
	}
	switch f.Type {
	case FieldEmail:
		if !ValidEmail(s) {
			return nil, "Must be a valid email address."
		}
	case FieldSelect:
		for _, o := range f.Options {
			if o == s {
				return s, ""
			}
		}
		return nil, "Must be one of: " + strings.Join(f.Options, ", ") + "."
	case FieldURL:
		if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
			return nil, "Must be an http or https URL."
		}
	}
	if len(s) > 65535 {
		return nil, "Too long."
	}
	return s, ""
}

// Int64 returns a pointer to n, for schema bounds.
func Int64(n int64) *int64 { return &n }
