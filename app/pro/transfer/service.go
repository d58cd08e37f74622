package transfer

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/core"
)

// Service exports and imports the site's configuration. Set its fields
// before the first call.
type Service struct {
	// Store is read by Export and Preview.
	Store Store
	// Tx runs an Import in one transaction.
	Tx Transactor
	// Site is the site URL written into a snapshot.
	Site string
	// Cipher, when set, also treats any value it recognises as encrypted
	// as a secret (so no ciphertext is ever exported).
	Cipher core.Cipher
	// SensitiveKeys are extra sensitive settings keys (configuration and
	// the mail_svc_sensitive_keys filter), as app.Connections has them.
	SensitiveKeys func() []string
	// Connections validates and writes imported connections: the
	// driver's schema and rules, constants, encryption. nil: one with
	// Cipher and SensitiveKeys and no constants.
	Connections *app.Connections
	// Sections replaces the registered sections (tests); nil uses
	// RegisterSection's.
	Sections []Section
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// connections returns what validates and writes imported connections.
func (s *Service) connections() *app.Connections {
	if s.Connections != nil {
		return s.Connections
	}
	var extra []string
	if s.SensitiveKeys != nil {
		extra = s.SensitiveKeys()
	}
	return &app.Connections{Cipher: s.Cipher, SensitiveKeys: extra}
}

func (s *Service) now() time.Time { return core.NowFrom(s.Now).UTC() }

// sensitive returns the test of a settings value that must not be
// exported: a field that fields (a driver's or channel type's; nil when
// it is not known) marks sensitive, or a secret.
func (s *Service) sensitive(fields func(key string) *core.Field) func(key string, v any) bool {
	return func(key string, v any) bool {
		if fields != nil {
			if f := fields(key); f != nil && f.Sensitive {
				return true
			}
		}
		return s.secret(key, v)
	}
}

// secret reports whether a settings value must not be exported: its key
// is sensitive by name or by configuration, or it is a ciphertext.
func (s *Service) secret(key string, v any) bool {
	var extra []string
	if s.SensitiveKeys != nil {
		extra = s.SensitiveKeys()
	}
	if core.IsSensitiveKey(key, extra) {
		return true
	}
	str, ok := v.(string)
	return ok && s.Cipher != nil && str != "" && s.Cipher.IsEncrypted(str)
}

// sections returns every section in import order: connections first
// (others refer to them), alert channels, then the registered ones.
func (s *Service) sections() []Section {
	extra := s.Sections
	if extra == nil {
		extra = registered()
	}
	return append([]Section{connectionSection{s}, channelSection{s}}, extra...)
}

// Export returns a snapshot of the connections, settings, Pro settings,
// email controls, alert channels and every registered section, without
// secrets.
func (s *Service) Export(ctx context.Context) (*Snapshot, error) {
	snap := &Snapshot{Version: Version, ExportedAt: s.now(), Site: s.Site, Sections: map[string][]Item{}}
	for _, name := range placeholderSections {
		snap.Sections[name] = []Item{}
	}
	for _, sec := range s.sections() {
		items, err := sec.Export(ctx, s.Store)
		if err != nil {
			return nil, err
		}
		if items == nil {
			items = []Item{}
		}
		snap.Sections[sec.Name()] = items
	}
	free, err := s.loadScope(ctx, core.ScopeFree, freeKeys())
	if err != nil {
		return nil, err
	}
	snap.Settings, snap.SettingsOmitted = withoutSecretsDropped(free, s.secret)
	if snap.ProSettings, err = s.loadScope(ctx, core.ScopePro, pro.SettingKeys()); err != nil {
		return nil, err
	}
	if snap.EmailControls, err = s.loadScope(ctx, core.ScopeEmailControls, emailControlKeys()); err != nil {
		return nil, err
	}
	return snap, nil
}

// loadScope returns the stored values of the known keys of a scope (a
// key never stored is not exported: the importing site keeps its
// default).
func (s *Service) loadScope(ctx context.Context, scope string, keys []string) (map[string]any, error) {
	stored, err := s.Store.LoadSettings(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("export %s settings: %w", scope, err)
	}
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := stored[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

func freeKeys() []string {
	keys := make([]string, len(core.FreeSettings))
	for i, d := range core.FreeSettings {
		keys[i] = d.Key
	}
	return keys
}

func emailControlKeys() []string {
	keys := make([]string, len(core.EmailControlKinds))
	for i, k := range core.EmailControlKinds {
		keys[i] = k.Kind
	}
	return keys
}

// withoutSecretsDropped returns settings without their secret keys, and
// those keys, sorted.
func withoutSecretsDropped(m map[string]any, secret func(string, any) bool) (map[string]any, []string) {
	out := map[string]any{}
	var omitted []string
	for k, v := range m {
		if secret(k, v) {
			omitted = append(omitted, k)
			continue
		}
		out[k] = v
	}
	sort.Strings(omitted)
	return out, omitted
}
