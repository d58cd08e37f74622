package oauth_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/oauth"
	"github.com/mailsvc/mailsvc/core"
)

func init() {
	fields := []core.Field{
		{Key: "client_id", Type: core.FieldString},
		{Key: "client_secret", Type: core.FieldPassword},
		{Key: core.KeyAccessToken, Type: core.FieldPassword},
		{Key: core.KeyRefreshToken, Type: core.FieldPassword},
		{Key: core.KeyTokenExpiry, Type: core.FieldString},
		{Key: "account_id", Type: core.FieldString},
		{Key: "oauth_base_url", Type: core.FieldURL, Hosts: []string{"accounts.google.com"}, Destination: true},
	}
	newT := func(*core.Connection, core.DriverEnv) (core.Transport, error) { return nil, nil }
	core.Register(core.Driver{Slug: "oauthgoogletest", Fields: fields, New: newT, OAuthProvider: core.ProviderGoogle,
		Authorized: func(_ context.Context, c *core.Connection, tok string, _ core.DriverEnv) (core.Settings, error) {
			if tok == "refuse-me" {
				return nil, errors.New("mailbox not found")
			}
			return core.Settings{"account_id": "acct-for-" + c.Name}, nil
		}})
	core.Register(core.Driver{Slug: "oauthmstest", Fields: fields, New: newT, OAuthProvider: core.ProviderMicrosoft})
	core.Register(core.Driver{Slug: "plaintest", Fields: []core.Field{{Key: "api_key", Type: core.FieldString}}, New: newT})
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// countingState counts settings writes, to prove "one write".
type countingState struct {
	*apptest.ConnectionStore
	mu     sync.Mutex
	writes []core.Settings
}

func (c *countingState) UpdateConnectionSettings(ctx context.Context, id int64, patch core.Settings, status string) error {
	c.mu.Lock()
	c.writes = append(c.writes, patch.Clone())
	c.mu.Unlock()
	return c.ConnectionStore.UpdateConnectionSettings(ctx, id, patch, status)
}

func (c *countingState) Writes() []core.Settings {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]core.Settings(nil), c.writes...)
}

type fixture struct {
	svc     *oauth.Service
	conns   *apptest.ConnectionStore
	connApp *app.Connections
	state   *countingState
	states  *apptest.OAuthStateStore
	history *apptest.RefreshHistoryStore
	client  *apptest.OAuthClient
	alerts  *apptest.AlertRecorder
	leases  *apptest.LeaseStore
	clock   *clock
	pins    map[string]core.Pin
}

var admin = &core.User{ID: 1, Login: "admin"}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		conns:   apptest.NewConnectionStore(),
		states:  apptest.NewOAuthStateStore(),
		history: &apptest.RefreshHistoryStore{},
		client:  &apptest.OAuthClient{},
		alerts:  &apptest.AlertRecorder{},
		leases:  apptest.NewLeaseStore(),
		clock:   &clock{t: time.Now().UTC().Truncate(time.Second)},
		pins:    map[string]core.Pin{},
	}
	f.states.Now = f.clock.Now
	f.state = &countingState{ConnectionStore: f.conns}
	f.connApp = &app.Connections{Store: f.conns, Cipher: apptest.Cipher{Key: "k"}, Hooks: &core.Hooks{},
		Pins: func(driver string, keys []string) map[string]core.Pin { return f.pins }}
	f.svc = f.newService()
	return f
}

// newService returns a Service over the fixture's stores: another replica.
func (f *fixture) newService() *oauth.Service {
	return &oauth.Service{
		Connections: f.connApp, State: f.state, Cipher: apptest.Cipher{Key: "k"}, Client: f.client,
		States: f.states, History: f.history, Alerts: f.alerts, Leases: f.leases, Hooks: &core.Hooks{},
		PublicURL: "https://site.example", AdminURL: "https://site.example/wp-admin/admin.php?page=mailsvc",
		RelayURL: "https://relay.example/callback", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: f.clock.Now, RetryBackoff: time.Millisecond, LeasePoll: time.Millisecond,
	}
}

func (f *fixture) create(t *testing.T, name, driver string, settings map[string]any) int64 {
	t.Helper()
	c, err := f.connApp.Create(context.Background(), app.ConnectionInput{Name: &name, Driver: &driver, Settings: settings})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return c.ID
}

func (f *fixture) googleConn(t *testing.T, extra map[string]any) int64 {
	s := map[string]any{"client_id": "cid", "client_secret": "csecret"}
	for k, v := range extra {
		s[k] = v
	}
	return f.create(t, "g", "oauthgoogletest", s)
}

func (f *fixture) effective(t *testing.T, id int64) *core.Connection {
	t.Helper()
	c, err := f.connApp.Effective(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// authorize runs Authorize and returns the state sent to the provider.
func (f *fixture) authorize(t *testing.T, provider string, id int64) (consent *url.URL, state string) {
	t.Helper()
	to, err := f.svc.Authorize(context.Background(), oauth.AuthorizeInput{User: admin, Provider: provider, ConnectionID: fmt.Sprint(id)})
	if err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	u, err := url.Parse(to)
	if err != nil {
		t.Fatal(err)
	}
	return u, u.Query().Get("state")
}

func flags(t *testing.T, to string) url.Values {
	t.Helper()
	u, err := url.Parse(to)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(to, "https://site.example/wp-admin/admin.php?") || u.Query().Get("page") != "mailsvc" {
		t.Fatalf("callback went to %s, want the admin page", to)
	}
	return u.Query()
}

func TestRedirectURIPrecedence(t *testing.T) {
	tests := []struct {
		name       string
		setup      func(s *oauth.Service)
		want       string
		wantRelay  bool
		wantLocal  bool
		provider   string
		overrideOK bool
	}{
		{"relay by default", func(*oauth.Service) {}, "https://relay.example/callback", true, false, core.ProviderGoogle, false},
		{"local redirects", func(s *oauth.Service) { s.UseLocalRedirects = true }, "https://site.example/wp-json/mailsvc/v1/oauth/google/callback", false, true, core.ProviderGoogle, false},
		{"no relay configured is local", func(s *oauth.Service) { s.RelayURL = "" }, "https://site.example/wp-json/mailsvc/v1/oauth/google/callback", false, true, core.ProviderGoogle, false},
		{"constant beats local", func(s *oauth.Service) {
			s.UseLocalRedirects = true
			s.RedirectURIs = map[string]string{core.ProviderGoogle: "https://const.example/g"}
		}, "https://const.example/g", false, false, core.ProviderGoogle, false},
		{"constant of another provider ignored", func(s *oauth.Service) {
			s.RedirectURIs = map[string]string{core.ProviderMicrosoft: "https://const.example/m"}
		}, "https://relay.example/callback", true, false, core.ProviderGoogle, false},
		{"bridge filter beats constant", func(s *oauth.Service) {
			s.RedirectURIs = map[string]string{core.ProviderGoogle: "https://const.example/g"}
			s.RedirectOverride = func(_ context.Context, p string) (string, error) { return "https://bridge.example/" + p, nil }
		}, "https://bridge.example/google", false, false, core.ProviderGoogle, false},
		{"go hook beats everything", func(s *oauth.Service) {
			s.RedirectURIs = map[string]string{core.ProviderGoogle: "https://const.example/g"}
			s.RedirectOverride = func(context.Context, string) (string, error) { return "https://bridge.example/g", nil }
			s.Hooks.AddFilter(core.HookGoogleRedirectURI, func(v any, _ ...any) any { return "https://hook.example/?was=" + v.(string) })
		}, "https://hook.example/?was=https://bridge.example/g", false, false, core.ProviderGoogle, false},
		{"hook of another provider ignored", func(s *oauth.Service) {
			s.Hooks.AddFilter(core.HookZohoRedirectURI, func(any, ...any) any { return "https://zoho-hook.example/" })
		}, "https://relay.example/callback", true, false, core.ProviderGoogle, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			tt.setup(f.svc)
			id := f.googleConn(t, nil)
			consent, state := f.authorize(t, tt.provider, id)
			if got := consent.Query().Get("redirect_uri"); got != tt.want {
				t.Fatalf("redirect_uri = %q, want %q", got, tt.want)
			}
			pending := f.states.Pending()
			if len(pending) != 1 || pending[0].RedirectURI != tt.want {
				t.Fatalf("stored states %+v", pending)
			}
			random, site, relayed := strings.Cut(state, ".")
			if relayed != tt.wantRelay {
				t.Fatalf("state %q: relay part present = %v, want %v", state, relayed, tt.wantRelay)
			}
			if len(random) < 43 {
				t.Fatalf("state random part %q is shorter than 256 bits", random)
			}
			if relayed {
				if got := decodeSite(t, site); got != "https://site.example/wp-json/mailsvc/v1/oauth/google/callback" {
					t.Fatalf("relay site %q", got)
				}
			}
		})
	}
}

func TestAuthorizeValidation(t *testing.T) {
	f := newFixture(t)
	g := f.googleConn(t, nil)
	ms := f.create(t, "m", "oauthmstest", map[string]any{"client_id": "a", "client_secret": "b"})
	plain := f.create(t, "p", "plaintest", map[string]any{"api_key": "k"})
	noSecret := f.create(t, "n", "oauthgoogletest", map[string]any{"client_id": "a"})
	tests := []struct {
		name, provider, conn string
		user                 *core.User
		code, field          string
	}{
		{"missing connection_id", core.ProviderGoogle, "", admin, core.EINVALID, "connection_id"},
		{"not a number", core.ProviderGoogle, "abc", admin, core.EINVALID, "connection_id"},
		{"negative", core.ProviderGoogle, "-3", admin, core.EINVALID, "connection_id"},
		{"unknown connection", core.ProviderGoogle, "999", admin, core.ENOTFOUND, ""},
		{"foreign connection", core.ProviderGoogle, fmt.Sprint(ms), admin, core.EINVALID, "connection_id"},
		{"other provider of a google connection", core.ProviderZoho, fmt.Sprint(g), admin, core.EINVALID, "connection_id"},
		{"non-oauth driver", core.ProviderGoogle, fmt.Sprint(plain), admin, core.EINVALID, "connection_id"},
		{"missing client secret", core.ProviderGoogle, fmt.Sprint(noSecret), admin, core.EINVALID, "client_secret"},
		{"unknown provider", "yahoo", fmt.Sprint(g), admin, core.ENOTFOUND, ""},
		{"no user", core.ProviderGoogle, fmt.Sprint(g), nil, core.EUNAUTHORIZED, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.Authorize(context.Background(), oauth.AuthorizeInput{User: tt.user, Provider: tt.provider, ConnectionID: tt.conn})
			if core.ErrorCode(err) != tt.code {
				t.Fatalf("err %v, want code %s", err, tt.code)
			}
			if tt.field != "" && core.ErrorFields(err)[tt.field] == "" {
				t.Fatalf("err %v does not name %s", err, tt.field)
			}
		})
	}
	if n := len(f.states.Pending()); n != 0 {
		t.Fatalf("%d states stored by refused authorizations", n)
	}
}

func TestCallbackSuccess(t *testing.T) {
	f := newFixture(t)
	f.client.Next = func(int) *core.OAuthToken {
		return &core.OAuthToken{AccessToken: "at-1", RefreshToken: "rt-1", Expiry: f.clock.Now().Add(time.Hour)}
	}
	id := f.googleConn(t, nil)
	consent, state := f.authorize(t, core.ProviderGoogle, id)
	pending := f.states.Pending()
	if pending[0].UserID != admin.ID || pending[0].ConnectionID != id || pending[0].Provider != core.ProviderGoogle {
		t.Fatalf("state not bound to user/connection/provider: %+v", pending[0])
	}
	verifier := consent.Query().Get("code_challenge") // the fake echoes the verifier
	if !strings.HasPrefix(pending[0].CodeVerifier, "test-enc:") || strings.Contains(pending[0].CodeVerifier, verifier) {
		t.Fatalf("verifier stored in clear: %q", pending[0].CodeVerifier)
	}

	to := f.svc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "the-code", State: state, UserID: admin.ID})
	q := flags(t, to)
	if q.Get("oauth") != "success" || q.Get("connection_id") != fmt.Sprint(id) {
		t.Fatalf("flags %v", q)
	}
	ex := f.client.Calls("Exchange")
	if len(ex) != 1 || ex[0].Code != "the-code" || ex[0].Verifier != verifier || ex[0].RedirectURI != "https://relay.example/callback" {
		t.Fatalf("exchange calls %+v, want the code with verifier %q", ex, verifier)
	}
	if w := f.state.Writes(); len(w) != 1 {
		t.Fatalf("%d settings writes, want 1", len(w))
	}
	raw := f.conns.Raw(id)
	for _, k := range []string{core.KeyAccessToken, core.KeyRefreshToken} {
		v := raw.Settings.String(k)
		if !strings.HasPrefix(v, "test-enc:") {
			t.Fatalf("stored %s = %q, want ciphertext", k, v)
		}
	}
	if raw.OAuthStatus != core.OAuthAuthorized || raw.Settings.String("account_id") != "acct-for-g" {
		t.Fatalf("stored %+v", raw)
	}
	eff := f.effective(t, id)
	if eff.Settings.String(core.KeyAccessToken) != "at-1" || eff.Settings.String(core.KeyRefreshToken) != "rt-1" {
		t.Fatalf("effective tokens %v", eff.Settings)
	}
	masked, err := f.connApp.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if masked.Settings[core.KeyAccessToken] != core.Mask || masked.Settings[core.KeyRefreshToken] != core.Mask {
		t.Fatalf("masked read shows %v", masked.Settings)
	}
	// Replaying the state is refused and exchanges nothing.
	to = f.svc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "the-code", State: state})
	if q := flags(t, to); q.Get("oauth_error") != oauth.ErrInvalidState {
		t.Fatalf("replay flags %v", q)
	}
	if n := len(f.client.Calls("Exchange")); n != 1 {
		t.Fatalf("replay exchanged: %d calls", n)
	}
}

func TestCallbackRefusals(t *testing.T) {
	tests := []struct {
		name  string
		run   func(f *fixture, state string) string
		flag  string
		spent bool // the state was consumed
	}{
		{"forged state", func(f *fixture, _ string) string {
			return f.svc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: "forged"})
		}, oauth.ErrInvalidState, false},
		{"empty state", func(f *fixture, _ string) string {
			return f.svc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c"})
		}, oauth.ErrInvalidState, false},
		{"other provider", func(f *fixture, st string) string {
			return f.svc.Callback(context.Background(), core.ProviderMicrosoft, oauth.CallbackInput{Code: "c", State: st})
		}, oauth.ErrInvalidState, false},
		{"expired", func(f *fixture, st string) string {
			f.clock.Add(core.OAuthStateTTL + time.Second)
			return f.svc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: st})
		}, oauth.ErrInvalidState, true},
		{"other user", func(f *fixture, st string) string {
			return f.svc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: st, UserID: 99})
		}, oauth.ErrUserMismatch, true},
		{"provider error", func(f *fixture, st string) string {
			return f.svc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Error: "access_denied", State: st})
		}, "access_denied", true},
		{"odd provider error", func(f *fixture, st string) string {
			return f.svc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Error: "<script>", State: st})
		}, oauth.ErrProviderRejected, true},
		{"no code", func(f *fixture, st string) string {
			return f.svc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{State: st})
		}, oauth.ErrMissingCode, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			id := f.googleConn(t, nil)
			before := f.conns.Raw(id)
			_, state := f.authorize(t, core.ProviderGoogle, id)
			q := flags(t, tt.run(f, state))
			if q.Get("oauth") != "error" || q.Get("oauth_error") != tt.flag {
				t.Fatalf("flags %v, want oauth_error=%s", q, tt.flag)
			}
			if n := len(f.client.Calls("Exchange")); n != 0 {
				t.Fatalf("%d token requests", n)
			}
			if len(f.state.Writes()) != 0 || f.conns.Raw(id).OAuthStatus != before.OAuthStatus || len(f.conns.Raw(id).Settings) != len(before.Settings) {
				t.Fatalf("the connection changed: %+v", f.conns.Raw(id))
			}
			if left := len(f.states.Pending()); (left == 0) != tt.spent {
				t.Fatalf("%d states left, spent want %v", left, tt.spent)
			}
		})
	}
}

func TestCallbackExchangeFailures(t *testing.T) {
	f := newFixture(t)
	id := f.googleConn(t, nil)
	_, state := f.authorize(t, core.ProviderGoogle, id)
	f.client.Err = &core.OAuthError{Code: "invalid_grant", Description: "code expired", Status: 400}
	q := flags(t, f.svc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: state}))
	if q.Get("oauth_error") != "invalid_grant" || len(f.state.Writes()) != 0 {
		t.Fatalf("flags %v, writes %d", q, len(f.state.Writes()))
	}
	// The driver's check refuses the token: nothing stored.
	f.client.Err = nil
	f.client.Next = func(int) *core.OAuthToken { return &core.OAuthToken{AccessToken: "refuse-me"} }
	_, state = f.authorize(t, core.ProviderGoogle, id)
	q = flags(t, f.svc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: state}))
	if q.Get("oauth_error") != oauth.ErrTokenRejected || len(f.state.Writes()) != 0 {
		t.Fatalf("flags %v, writes %d", q, len(f.state.Writes()))
	}
}

func TestStoreToken(t *testing.T) {
	f := newFixture(t)
	id := f.googleConn(t, nil)
	plain := f.create(t, "p", "plaintest", nil)
	n := func(v int64) *int64 { return &v }
	tests := []struct {
		name  string
		id    int64
		in    oauth.TokenInput
		code  string
		field string
	}{
		{"empty", id, oauth.TokenInput{}, core.EINVALID, "refresh_token"},
		{"bad expires_in", id, oauth.TokenInput{AccessToken: "a", ExpiresIn: n(0)}, core.EINVALID, "expires_in"},
		{"bad expires_at", id, oauth.TokenInput{AccessToken: "a", ExpiresAt: "tomorrow"}, core.EINVALID, "expires_at"},
		{"both expiries", id, oauth.TokenInput{AccessToken: "a", ExpiresIn: n(60), ExpiresAt: "2030-01-01T00:00:00Z"}, core.EINVALID, "expires_at"},
		{"expiry without token", id, oauth.TokenInput{RefreshToken: "r", ExpiresIn: n(60)}, core.EINVALID, "access_token"},
		{"non-oauth driver", plain, oauth.TokenInput{RefreshToken: "r"}, core.EINVALID, "connection_id"},
		{"unknown connection", 999, oauth.TokenInput{RefreshToken: "r"}, core.ENOTFOUND, ""},
		{"refused by the driver", id, oauth.TokenInput{AccessToken: "refuse-me"}, core.EINVALID, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.StoreToken(context.Background(), tt.id, tt.in)
			if core.ErrorCode(err) != tt.code || (tt.field != "" && core.ErrorFields(err)[tt.field] == "") {
				t.Fatalf("err %v, want %s on %s", err, tt.code, tt.field)
			}
		})
	}
	if len(f.state.Writes()) != 0 {
		t.Fatal("a refused token was stored")
	}
	exp, err := f.svc.StoreToken(context.Background(), id, oauth.TokenInput{AccessToken: "pasted", RefreshToken: "pasted-rt", ExpiresIn: n(3600)})
	if err != nil || exp == nil || !exp.Equal(f.clock.Now().Add(time.Hour)) {
		t.Fatalf("StoreToken = %v, %v", exp, err)
	}
	eff := f.effective(t, id)
	if eff.Settings.String(core.KeyAccessToken) != "pasted" || eff.Settings.String(core.KeyRefreshToken) != "pasted-rt" ||
		eff.Settings.String("account_id") != "acct-for-g" || eff.OAuthStatus != core.OAuthAuthorized {
		t.Fatalf("effective %+v", eff)
	}
	if strings.Contains(fmt.Sprint(f.conns.Raw(id).Settings), "pasted") {
		t.Fatal("token stored in clear")
	}
	// A refresh token alone keeps the access token and replaces the refresh token.
	if _, err := f.svc.StoreToken(context.Background(), id, oauth.TokenInput{RefreshToken: "rt-2"}); err != nil {
		t.Fatal(err)
	}
	eff = f.effective(t, id)
	if eff.Settings.String(core.KeyAccessToken) != "pasted" || eff.Settings.String(core.KeyRefreshToken) != "rt-2" {
		t.Fatalf("effective %+v", eff.Settings)
	}
}

func decodeSite(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("relay part %q: %v", s, err)
	}
	return string(b)
}

func appInput(name *string, active *bool) app.ConnectionInput {
	return app.ConnectionInput{Name: name, IsActive: active}
}
