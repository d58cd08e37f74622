// Package oauth runs the OAuth flows of the OAuth mail drivers (outlook,
// gmail, zoho): the authorization (consent URL, state, PKCE, callback),
// tokens stored encrypted on the connection, and their refresh — before
// they expire, when a provider refuses them, on demand and on schedule —
// with a history of every refresh attempt. The manual flow's callback and
// Pro's one-click callback (OneClick) complete through one path.
package oauth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Connections is the side of app.Connections the service reads through:
// Effective decrypts secrets and applies constants; List gives every
// connection (masked) to find the OAuth ones.
type Connections interface {
	Effective(ctx context.Context, id int64) (*core.Connection, error)
	List(ctx context.Context, offset, limit int) ([]*core.Connection, int, error)
}

// LeaseStore grants named, expiring leases shared by the replicas of one
// database; a refresh holds "oauth-refresh:<connection id>" so that one
// replica at a time refreshes a connection.
type LeaseStore interface {
	AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, owner string) (bool, error)
}

// SettingsReader gives the free settings (oauth_refresh_max_retries,
// oauth_refresh_interval); app.Settings implements it.
type SettingsReader interface {
	Get(ctx context.Context) (map[string]any, error)
}

// Service runs the OAuth flows and keeps tokens fresh. It implements
// core.TokenSource. Set its fields before the first call.
type Service struct {
	Connections Connections
	State       core.ConnectionStateStore
	// Cipher encrypts tokens and PKCE verifiers at rest, as app.Connections
	// encrypts sensitive settings (nil stores them as they are).
	Cipher  core.Cipher
	Client  core.OAuthClient
	States  core.OAuthStateStore
	History core.RefreshHistoryStore
	// Alerts raises oauth_refresh_failed; nil raises nothing.
	Alerts core.Alerter
	Leases LeaseStore
	// Settings gives oauth_refresh_max_retries and oauth_refresh_interval;
	// nil uses their defaults.
	Settings SettingsReader
	Hooks    *core.Hooks
	// Env is handed to a driver's Authorized hook.
	Env    core.DriverEnv
	Logger *slog.Logger

	// PublicURL is the base URL under which /wp-json/mailsvc/v1 reaches
	// this service (MAILSVC_PUBLIC_URL); "" uses the request's own.
	PublicURL string
	// AdminURL is the admin page a callback returns to (MAILSVC_ADMIN_URL);
	// "" uses {public URL}/admin/.
	AdminURL string
	// RelayURL is the hosted relay (MAILSVC_OAUTH_RELAY_URL); "" means
	// local redirects.
	RelayURL string
	// UseLocalRedirects is MAILSVC_USE_LOCAL_OAUTH_REDIRECTS.
	UseLocalRedirects bool
	// RedirectURIs holds the per-provider constants
	// (MAILSVC_{GOOGLE,MICROSOFT,ZOHO}_OAUTH_REDIRECT_URI) by provider.
	RedirectURIs map[string]string
	// RedirectOverride returns the value of the provider's
	// mail_svc_*_oauth_redirect_uri filter as the WordPress bridge synced
	// it ("" when the site has none); nil when no bridge runs.
	RedirectOverride func(ctx context.Context, provider string) (string, error)

	// Owner names this replica in leases; "" picks a random one.
	Owner string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// LeaseWait bounds how long a refresh waits for another replica's
	// refresh of the same connection (default 15s); LeasePoll is how often
	// it looks (default 50ms).
	LeaseWait, LeasePoll time.Duration
	// RetryBackoff is the pause before the nth retry of the scheduled
	// refresh, multiplied by n (default 2s).
	RetryBackoff time.Duration

	initOnce sync.Once
	locksMu  sync.Mutex
	locks    map[int64]*sync.Mutex
}

// Providers are the OAuth providers, in the order of the spec's routes.
var Providers = []string{core.ProviderGoogle, core.ProviderMicrosoft, core.ProviderZoho}

// KnownProvider reports whether p is one of Providers.
func KnownProvider(p string) bool {
	for _, k := range Providers {
		if k == p {
			return true
		}
	}
	return false
}

func (s *Service) init() {
	s.initOnce.Do(func() {
		if s.Owner == "" {
			s.Owner = "oauth-" + randomHex(8)
		}
		if s.Logger == nil {
			s.Logger = slog.Default()
		}
		s.locks = map[int64]*sync.Mutex{}
	})
}

func (s *Service) now() time.Time { return core.NowFrom(s.Now).UTC() }

// lock returns the in-process mutex of one connection's refreshes.
func (s *Service) lock(id int64) *sync.Mutex {
	s.locksMu.Lock()
	defer s.locksMu.Unlock()
	m, ok := s.locks[id]
	if !ok {
		m = &sync.Mutex{}
		s.locks[id] = m
	}
	return m
}

// oauthConnection returns the effective connection id and its driver,
// with a validation error (on field) when the driver has no OAuth.
func (s *Service) oauthConnection(ctx context.Context, id int64, field string) (*core.Connection, *core.Driver, error) {
	conn, err := s.Connections.Effective(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	d, ok := core.LookupDriver(conn.Driver)
	if !ok || d.OAuthProvider == "" {
		return nil, nil, core.InvalidField(field, fmt.Sprintf("Connection %d uses the driver %q, which does not use OAuth.", id, conn.Driver))
	}
	if err := usable(conn, field); err != nil {
		return nil, nil, err
	}
	return conn, d, nil
}

// usable refuses, with a validation error on field, a connection whose
// stored settings cannot be used (core.Connection.SettingsError: secrets
// that cannot be decrypted, or an endpoint off the provider's hosts), so
// that no authorization, code exchange or token check talks to it.
func usable(conn *core.Connection, field string) error {
	if conn.SettingsError != "" {
		return core.InvalidField(field, fmt.Sprintf("Connection %d cannot be used: %s", conn.ID, conn.SettingsError))
	}
	return nil
}

// encrypt encrypts a value for storage (as is without a Cipher).
func (s *Service) encrypt(v string) (string, error) {
	if s.Cipher == nil || v == "" {
		return v, nil
	}
	enc, err := s.Cipher.Encrypt(v)
	if err != nil {
		return "", fmt.Errorf("encrypt: %w", err)
	}
	return enc, nil
}

func (s *Service) decrypt(v string) (string, error) {
	if s.Cipher == nil || !s.Cipher.IsEncrypted(v) {
		return v, nil
	}
	return s.Cipher.Decrypt(v)
}

// sensitive reports whether a settings key of d is stored encrypted, as
// app.Connections decides it.
func sensitive(d *core.Driver, key string) bool {
	if f := d.Field(key); f != nil && f.Sensitive {
		return true
	}
	return core.IsSensitiveKey(key, nil)
}

func pinned(conn *core.Connection, key string) bool {
	for _, k := range conn.Pinned {
		if k == key {
			return true
		}
	}
	return false
}

// randomToken returns n random bytes, URL-safe base64 without padding.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// redact replaces every secret of conn found in msg by core.Mask.
func redact(msg string, secrets ...string) string {
	for _, v := range secrets {
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, core.Mask)
		}
	}
	return msg
}

func connSecrets(conn *core.Connection) []string {
	return []string{
		conn.Settings.String(core.KeyAccessToken),
		conn.Settings.String(core.KeyRefreshToken),
		conn.Settings.String("client_secret"),
	}
}
