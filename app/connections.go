package app

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode"

	"github.com/mailsvc/mailsvc/core"
)

// PinFunc returns, for a driver and its settings keys, the keys pinned by
// constants. It is read-only configuration resolved once at boot.
type PinFunc func(driver string, keys []string) map[string]core.Pin

// ConnectionInput is a create or partial update of a connection. A nil
// field is left as it is (on create: defaulted or required).
type ConnectionInput struct {
	Name     *string
	Driver   *string
	IsActive *bool
	// Settings keys merge into the stored ones. A value equal to core.Mask
	// keeps the stored secret; null removes the key. A stored secret is
	// bound to its destination: when a field the driver marks Destination
	// changes, a kept secret is a validation error naming it, and OAuth
	// tokens are dropped.
	Settings map[string]any
}

// Connections manages connections: validation against the driver schema,
// constants that pin settings, encryption of secrets at rest and masking
// of secrets in every value it returns to a client.
type Connections struct {
	Store  core.ConnectionStore
	Cipher core.Cipher
	Pins   PinFunc
	Hooks  *core.Hooks
	// Settings, when set, guards deletes: a connection that the default or
	// fallback setting names cannot be deleted until the setting changes.
	Settings core.SettingsStore
	// SensitiveKeys are extra sensitive keys from configuration, the
	// configuration form of the mail_svc_sensitive_keys filter.
	SensitiveKeys []string
	// AllowCustomEndpoints (MAILSVC_ALLOW_CUSTOM_ENDPOINTS) lifts the
	// provider host check of endpoint fields (core.Field.Hosts). Off, a
	// create or update that sets one off the provider's hosts is a 422 on
	// the field, and a connection that has one stored (from before the
	// check, an import or the database) gets a SettingsError, so it
	// neither sends, verifies nor refreshes. A value pinned by a constant
	// is the site owner's and is never checked.
	AllowCustomEndpoints bool
}

// List returns one page of connections, masked, and the total count.
func (s *Connections) List(ctx context.Context, offset, limit int) ([]*core.Connection, int, error) {
	conns, total, err := s.Store.FindConnections(ctx, core.ConnectionFilter{Offset: offset, Limit: limit})
	if err != nil {
		return nil, 0, fmt.Errorf("list connections: %w", err)
	}
	out := make([]*core.Connection, len(conns))
	for i, c := range conns {
		out[i] = s.masked(s.effective(c))
	}
	return out, total, nil
}

// Get returns one connection, masked.
func (s *Connections) Get(ctx context.Context, id int64) (*core.Connection, error) {
	c, err := s.Effective(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.masked(c), nil
}

// Effective returns a connection with its secrets decrypted and its
// constants applied: what a transport is built from. It must never be
// returned to a client.
func (s *Connections) Effective(ctx context.Context, id int64) (*core.Connection, error) {
	c, err := s.Store.FindConnectionByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("get connection %d: %w", id, err)
	}
	return s.effective(c), nil
}

// Create validates and stores a new connection and returns it masked.
func (s *Connections) Create(ctx context.Context, in ConnectionInput) (*core.Connection, error) {
	c := &core.Connection{IsActive: true, Settings: core.Settings{}, HealthStatus: core.HealthUnknown}
	if in.Driver == nil || *in.Driver == "" {
		return nil, core.InvalidField("driver", "This field is required.")
	}
	if in.Name == nil {
		return nil, core.InvalidField("name", "This field is required.")
	}
	if _, err := s.apply(c, nil, in, modeEdit); err != nil {
		return nil, err
	}
	if err := s.Store.CreateConnection(ctx, c); err != nil {
		return nil, fmt.Errorf("create connection: %w", err)
	}
	return s.masked(s.effective(c)), nil
}

// Update applies a partial update to a connection and returns it masked.
func (s *Connections) Update(ctx context.Context, id int64, in ConnectionInput) (*core.Connection, error) {
	stored, err := s.Store.FindConnectionByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("get connection %d: %w", id, err)
	}
	current := s.decrypted(stored)
	if _, err := s.apply(stored, current, in, modeEdit); err != nil {
		return nil, err
	}
	if err := s.Store.UpdateConnection(ctx, stored); err != nil {
		return nil, fmt.Errorf("update connection %d: %w", id, err)
	}
	return s.masked(s.effective(stored)), nil
}

// ImportedConnection is a connection as a settings snapshot carries it:
// its settings hold no secret.
type ImportedConnection struct {
	Name     string
	Driver   string
	IsActive bool
	Settings core.Settings
}

// input returns c as the input of a write that replaces every setting of
// a connection whose decrypted settings are current (nil: a new one):
// a stored key the snapshot lacks is removed, except secrets and their
// token's expiry (kept unless the destination changes) and keys pinned by
// a constant (the constant wins over the snapshot).
func (s *Connections) input(c ImportedConnection, current core.Settings) ConnectionInput {
	d, _ := core.LookupDriver(c.Driver)
	var pins map[string]core.Pin
	if d != nil {
		pins = s.pins(d)
	}
	settings := map[string]any{}
	for k, v := range c.Settings {
		if _, pinned := pins[k]; !pinned {
			settings[k] = v
		}
	}
	for k := range current {
		_, given := settings[k]
		_, pinned := pins[k]
		if !given && !pinned && !s.sensitive(d, k) && k != core.KeyTokenExpiry {
			settings[k] = nil
		}
	}
	return ConnectionInput{Name: &c.Name, Driver: &c.Driver, IsActive: &c.IsActive, Settings: settings}
}

// CheckImport returns the validation error Import would give c as a new
// connection (the driver's schema and rules, constants applied, secrets
// allowed to be missing), or nil. It writes nothing.
func (s *Connections) CheckImport(c ImportedConnection) error {
	_, err := s.apply(&core.Connection{Settings: core.Settings{}}, nil, s.input(c, nil), modeImport)
	return err
}

// Import writes a connection of a settings snapshot (Pro import) into
// store, the import's transaction: a new connection when id is 0, else
// it replaces connection id's name, driver, activity and settings. The
// settings are validated by the driver as Create does, constants
// applied, except that secrets may be missing: a snapshot carries none. A
// replaced connection keeps its stored secrets unless the snapshot
// changes its driver or one of its destination fields: then they are
// dropped, OAuth tokens included (the connection needs authorization
// again). Import returns the connection, masked, and the secrets it
// dropped, sorted.
func (s *Connections) Import(ctx context.Context, store core.ConnectionStore, id int64, c ImportedConnection) (*core.Connection, []string, error) {
	if id == 0 {
		conn := &core.Connection{IsActive: true, Settings: core.Settings{}, HealthStatus: core.HealthUnknown}
		if _, err := s.apply(conn, nil, s.input(c, nil), modeImport); err != nil {
			return nil, nil, err
		}
		if err := store.CreateConnection(ctx, conn); err != nil {
			return nil, nil, fmt.Errorf("import connection %q: %w", c.Name, err)
		}
		return s.masked(s.effective(conn)), nil, nil
	}
	conn, err := store.FindConnectionByID(ctx, id)
	if err != nil {
		return nil, nil, fmt.Errorf("replace connection %d: %w", id, err)
	}
	current, oldDriver := s.decrypted(conn), conn.Driver
	dropped, err := s.apply(conn, current, s.input(c, current), modeImport)
	if err != nil {
		return nil, nil, err
	}
	if conn.Driver != oldDriver {
		dropped = s.secretsOf(oldDriver, current) // another driver starts without them
	}
	if err := store.UpdateConnection(ctx, conn); err != nil {
		return nil, nil, fmt.Errorf("replace connection %d: %w", id, err)
	}
	return s.masked(s.effective(conn)), dropped, nil
}

// secretsOf returns the keys of settings (of a connection of driver) that
// hold a secret, sorted.
func (s *Connections) secretsOf(driver string, settings core.Settings) []string {
	d, _ := core.LookupDriver(driver)
	var out []string
	for k, v := range settings {
		if str, _ := v.(string); str != "" && s.sensitive(d, k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Delete removes one connection.
func (s *Connections) Delete(ctx context.Context, id int64) error {
	if err := s.checkNotInUse(ctx, "id", []int64{id}); err != nil {
		return err
	}
	n, err := s.Store.DeleteConnections(ctx, []int64{id})
	if err != nil {
		return fmt.Errorf("delete connection %d: %w", id, err)
	}
	if n == 0 {
		return core.Errorf(core.ENOTFOUND, "Connection %d does not exist.", id)
	}
	return nil
}

// DeleteMany removes the connections with the given ids and returns how
// many existed.
func (s *Connections) DeleteMany(ctx context.Context, ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, core.InvalidField("ids", "At least one id is required.")
	}
	if err := s.checkNotInUse(ctx, "ids", ids); err != nil {
		return 0, err
	}
	n, err := s.Store.DeleteConnections(ctx, ids)
	if err != nil {
		return 0, fmt.Errorf("delete connections: %w", err)
	}
	return n, nil
}

// checkNotInUse refuses to delete a connection that default_connection_id
// or fallback_connection_id names: every message without a connection of
// its own would fail. The error names field.
func (s *Connections) checkNotInUse(ctx context.Context, field string, ids []int64) error {
	if s.Settings == nil {
		return nil
	}
	stored, err := s.Settings.LoadSettings(ctx, core.ScopeFree)
	if err != nil {
		return fmt.Errorf("check connection use: %w", err)
	}
	for _, key := range []string{"default_connection_id", "fallback_connection_id"} {
		ref, ok := core.AsInt(stored[key])
		if !ok {
			continue
		}
		for _, id := range ids {
			if id == ref {
				return core.InvalidField(field, fmt.Sprintf("Connection %d is the %s; choose another one in the settings before deleting it.", id, strings.TrimSuffix(strings.ReplaceAll(key, "_", " "), " id")))
			}
		}
	}
	return nil
}

// writeMode says how apply treats the stored secrets of a connection
// whose destination changes.
type writeMode int

const (
	// modeEdit (POST, PUT): a stored secret kept across a change of
	// destination is refused, naming it to enter again; OAuth tokens are
	// dropped.
	modeEdit writeMode = iota
	// modeImport (a settings snapshot): such secrets are dropped, and
	// secrets may be missing (a snapshot carries none).
	modeImport
)

// apply validates in against c's driver and writes the result into c, with
// sensitive values encrypted. current holds c's decrypted settings (nil on
// create). It returns the stored secrets it dropped because the
// connection's destination changed (sorted).
func (s *Connections) apply(c *core.Connection, current core.Settings, in ConnectionInput, mode writeMode) ([]string, error) {
	fields := map[string]string{}
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		switch {
		case name == "":
			fields["name"] = "This field is required."
		case len(name) > 191:
			fields["name"] = "Must be at most 191 characters."
		}
		c.Name = name
	}
	if in.Driver != nil {
		if _, ok := core.LookupDriver(*in.Driver); !ok {
			fields["driver"] = fmt.Sprintf("Unknown driver %q.", *in.Driver)
		} else if current != nil && *in.Driver != c.Driver {
			current = core.Settings{} // a new driver starts from fresh settings
		}
		c.Driver = *in.Driver
	}
	if in.IsActive != nil {
		c.IsActive = *in.IsActive
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	d, _ := core.LookupDriver(c.Driver)
	merged := current.Clone()
	pins := s.pins(d)
	for k, v := range in.Settings {
		if pin, ok := pins[k]; ok {
			if v != core.Mask && core.Settings(in.Settings).String(k) != pin.Value {
				fields[k] = fmt.Sprintf("This setting is pinned by the constant %s and cannot be changed here.", pin.Constant)
			}
			continue
		}
		if f := d.Field(k); f != nil && f.ConstantOnly {
			if !emptyOrDefault(f, v) {
				fields[k] = fmt.Sprintf("Only a constant sets this (%s), in wp-config.php or the environment.",
					strings.Join(core.PinConstants(d.Slug, k), " or "))
			}
			continue
		}
		switch {
		case v == nil:
			delete(merged, k)
		case v == core.Mask && s.sensitive(d, k):
			// keep the stored secret
		default:
			merged[k] = v
		}
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	dropConstantOnly(d, merged, pins)
	effective := merged.Clone()
	for k, p := range pins {
		effective[k] = pinValue(d, k, p.Value)
	}
	dropped, tokensDropped := s.unbind(d, current, merged, effective, in.Settings, pins, mode, fields)
	verr := s.validate(d, effective, mode)
	if len(fields) > 0 {
		for k, msg := range core.ErrorFields(verr) {
			if _, ok := fields[k]; !ok {
				fields[k] = msg
			}
		}
		return nil, core.Invalid(fields)
	}
	if verr != nil {
		return nil, verr
	}
	if !s.AllowCustomEndpoints {
		if err := core.Invalid(d.CheckEndpoints(effective, isPinned(pins))); err != nil {
			return nil, err
		}
	}
	stored := core.Settings{}
	for k, v := range effective {
		if f := d.Field(k); f != nil && f.ConstantOnly {
			continue // its constant's, never stored
		}
		if _, pinned := pins[k]; pinned {
			if old, had := merged[k]; had {
				stored[k] = old // keep what was stored before the pin
			}
			continue
		}
		if _, given := merged[k]; given || mode != modeImport {
			stored[k] = v // an import stores what the file gives, not the defaults
		}
	}
	enc, err := s.encrypt(d, stored)
	if err != nil {
		return nil, err
	}
	c.OAuthStatus = oauthStatus(d, c.OAuthStatus, effective)
	if tokensDropped && effective.String(core.KeyRefreshToken) == "" {
		c.OAuthStatus = core.OAuthNeedsAuthorization
	}
	c.Settings = enc
	c.SettingsError = ""
	return dropped, nil
}

// unbind applies the rule that a stored secret is bound to the
// destination it was entered for. When a destination field of d changes
// between current and effective (both with constants applied), every
// secret kept from current (not entered again in input, not pinned by a
// constant) is dropped from merged and effective (modeImport), or named
// in fields to be entered again (modeEdit). OAuth tokens, which come from
// an authorization and cannot be typed in, are dropped in both modes,
// with the access token's expiry. It returns the dropped secrets, sorted,
// and whether an OAuth token was among them.
func (s *Connections) unbind(d *core.Driver, current, merged, effective core.Settings, input map[string]any, pins map[string]core.Pin, mode writeMode, fields map[string]string) ([]string, bool) {
	if current == nil {
		return nil, false
	}
	before := current.Clone()
	for k, p := range pins {
		before[k] = pinValue(d, k, p.Value)
	}
	if len(d.MovedDestinations(before, effective)) == 0 {
		return nil, false
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var dropped []string
	tokens := false
	for _, k := range keys {
		if str, _ := merged[k].(string); str == "" || !s.sensitive(d, k) {
			continue // a secret is a non-empty string
		}
		if _, pinned := pins[k]; pinned {
			continue // the site owner's, from a constant
		}
		if v, entered := input[k]; entered && v != core.Mask {
			continue // entered again with the new destination
		}
		token := d.OAuthProvider != "" && (k == core.KeyAccessToken || k == core.KeyRefreshToken)
		if mode == modeEdit && !token {
			fields[k] = fmt.Sprintf("Enter the %s again: the server changed.", secretName(d, k))
			continue
		}
		delete(merged, k)
		delete(effective, k)
		dropped = append(dropped, k)
		tokens = tokens || token
	}
	if tokens {
		delete(merged, core.KeyTokenExpiry)
		delete(effective, core.KeyTokenExpiry)
	}
	return dropped, tokens
}

// validate checks effective against d's schema and rules. On an import
// (modeImport) a secret may be missing: an empty secret a rule requires
// is given a stand-in for the check only, so the other rules still run.
func (s *Connections) validate(d *core.Driver, effective core.Settings, mode writeMode) error {
	err := d.ValidateSettings(effective)
	if mode != modeImport {
		return err
	}
	var standIns []string
	defer func() {
		for _, k := range standIns {
			delete(effective, k)
		}
	}()
	for err != nil {
		added := false
		for k := range core.ErrorFields(err) {
			if v := effective[k]; (v == nil || v == "") && s.sensitive(d, k) {
				effective[k] = "secret to enter"
				standIns = append(standIns, k)
				added = true
			}
		}
		if !added {
			return err
		}
		err = d.ValidateSettings(effective)
	}
	return nil
}

// secretName names a secret setting in a sentence: its schema label, with
// the first letter lowered unless the label starts with an acronym
// ("password", "client secret", "API key").
func secretName(d *core.Driver, key string) string {
	label := strings.ReplaceAll(key, "_", " ")
	if f := d.Field(key); f != nil && f.Label != "" {
		label = f.Label
	}
	r := []rune(label)
	if len(r) > 1 && unicode.IsUpper(r[0]) && !unicode.IsUpper(r[1]) {
		r[0] = unicode.ToLower(r[0])
	}
	return string(r)
}

// oauthStatus returns the OAuth status of a connection of driver d after
// an edit: "" for a driver without OAuth; pending until a refresh token is
// known (set by the OAuth flow, pasted, or pinned by a constant), then
// authorized. A needs_authorization verdict stays until a new token
// arrives through the OAuth routes.
func oauthStatus(d *core.Driver, current string, effective core.Settings) string {
	switch {
	case d.OAuthProvider == "":
		return ""
	case current == core.OAuthNeedsAuthorization || current == core.OAuthAuthorized:
		return current
	case effective.String(core.KeyRefreshToken) != "":
		return core.OAuthAuthorized
	}
	return core.OAuthPending
}

// emptyOrDefault reports whether v, given for field f, is empty (null or
// "") or f's default: what a form sends for a key it does not set.
func emptyOrDefault(f *core.Field, v any) bool {
	return v == nil || v == "" || reflect.DeepEqual(v, f.Default)
}

// dropConstantOnly removes from s the keys of d that only a constant
// sets and that pins does not pin: a stored value of such a key is
// ignored.
func dropConstantOnly(d *core.Driver, s core.Settings, pins map[string]core.Pin) {
	for _, f := range d.Fields {
		if _, pinned := pins[f.Key]; f.ConstantOnly && !pinned {
			delete(s, f.Key)
		}
	}
}

// isPinned returns whether a key is among pins.
func isPinned(pins map[string]core.Pin) func(string) bool {
	return func(k string) bool { _, ok := pins[k]; return ok }
}

// pins returns the settings keys of d pinned by constants.
func (s *Connections) pins(d *core.Driver) map[string]core.Pin {
	if s.Pins == nil {
		return nil
	}
	keys := make([]string, len(d.Fields))
	for i, f := range d.Fields {
		keys[i] = f.Key
	}
	return s.Pins(d.Slug, keys)
}

// pinValue converts a constant's PHP string form to the field's type.
func pinValue(d *core.Driver, key, v string) any {
	f := d.Field(key)
	if f == nil {
		return v
	}
	probe := core.Settings{key: v}
	switch f.Type {
	case core.FieldInteger:
		return probe.Int(key, 0)
	case core.FieldBoolean:
		return probe.Bool(key, false)
	}
	return v
}

// ExtraSensitiveKeys returns the sensitive keys beyond the built-in ones:
// configuration (SensitiveKeys) passed through the mail_svc_sensitive_keys
// filter. It is evaluated on each call, so a filter's change applies to
// the next request.
func (s *Connections) ExtraSensitiveKeys() []string {
	keys := append([]string(nil), s.SensitiveKeys...)
	if v, ok := s.Hooks.ApplyFilters(core.HookSensitiveKeys, keys).([]string); ok {
		keys = v
	}
	return keys
}

func (s *Connections) sensitive(d *core.Driver, key string) bool {
	if d != nil {
		if f := d.Field(key); f != nil && f.Sensitive {
			return true
		}
	}
	return core.IsSensitiveKey(key, s.ExtraSensitiveKeys())
}

func (s *Connections) encrypt(d *core.Driver, in core.Settings) (core.Settings, error) {
	return core.EncryptSecrets(s.Cipher, in, func(k string) bool { return s.sensitive(d, k) })
}

// decrypted returns c's settings with secrets decrypted. A value that
// cannot be decrypted becomes "" and sets c.SettingsError. Every encrypted
// value is decrypted, not only the keys sensitive now: a key that a
// mail_svc_sensitive_keys filter made sensitive when it was written stays
// readable after the filter is removed.
func (s *Connections) decrypted(c *core.Connection) core.Settings {
	out, bad := core.DecryptSecrets(s.Cipher, c.Settings, func(string) bool { return true })
	if len(bad) > 0 {
		c.SettingsError = fmt.Sprintf("Stored secrets (%s) cannot be decrypted: the encryption key changed. Enter them again.", strings.Join(bad, ", "))
	}
	return out
}

// effective returns a copy of c with secrets decrypted and constants applied.
func (s *Connections) effective(c *core.Connection) *core.Connection {
	out := *c
	out.Settings = s.decrypted(&out)
	out.Pinned = []string{}
	if d, ok := core.LookupDriver(c.Driver); ok {
		pins := s.pins(d)
		dropConstantOnly(d, out.Settings, pins)
		for k, p := range pins {
			out.Settings[k] = pinValue(d, k, p.Value)
			out.Pinned = append(out.Pinned, k)
		}
		if !s.AllowCustomEndpoints {
			if problem := core.EndpointProblem(d.CheckEndpoints(out.Settings, isPinned(pins))); problem != "" {
				out.SettingsError = strings.TrimSpace(out.SettingsError + " " + problem)
			}
		}
	}
	sort.Strings(out.Pinned)
	if out.HealthStatus == "" {
		out.HealthStatus = core.HealthUnknown
	}
	return &out
}

// masked returns c with every sensitive value replaced by core.Mask.
func (s *Connections) masked(c *core.Connection) *core.Connection {
	d, _ := core.LookupDriver(c.Driver)
	out := *c
	out.Settings = core.MaskSecrets(c.Settings, func(k string) bool { return s.sensitive(d, k) })
	return &out
}
