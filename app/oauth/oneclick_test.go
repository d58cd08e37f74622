package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/oauth"
	"github.com/mailsvc/mailsvc/core"
)

// The one-click flows authorize the drivers named in oauth.OneClickDrivers;
// the real ones live in drivers/, which app tests do not import, so
// stand-ins with the same app rules take their slugs here.
func init() {
	ownApp := map[string]string{core.KeyOAuthApp: ""}
	fields := []core.Field{
		{Key: "client_id", Type: core.FieldString, RequiredWhen: ownApp},
		{Key: "client_secret", Type: core.FieldPassword, RequiredWhen: ownApp},
		{Key: core.KeyAccessToken, Type: core.FieldPassword},
		{Key: core.KeyRefreshToken, Type: core.FieldPassword},
		{Key: core.KeyTokenExpiry, Type: core.FieldString},
		{Key: core.KeyOAuthApp, Type: core.FieldSelect, Options: []string{core.OAuthAppOneClick}},
		{Key: "tenant_id", Type: core.FieldString},
		{Key: "oauth_base_url", Type: core.FieldString},
	}
	newT := func(*core.Connection, core.DriverEnv) (core.Transport, error) { return nil, nil }
	refuse := func(_ context.Context, _ *core.Connection, tok string, _ core.DriverEnv) (core.Settings, error) {
		if tok == "refuse-me" {
			return nil, errors.New("mailbox not found")
		}
		return nil, nil
	}
	core.Register(core.Driver{Slug: oauth.OneClickDrivers[core.ProviderGoogle], Fields: fields, New: newT, OAuthProvider: core.ProviderGoogle, Authorized: refuse})
	core.Register(core.Driver{Slug: oauth.OneClickDrivers[core.ProviderMicrosoft], Fields: fields, New: newT, OAuthProvider: core.ProviderMicrosoft, Authorized: refuse})
}

// oneClickFixture is the fixture with one-click OAuth joined as serve
// joins it: the service's client wrapped in an AppClient.
type oneClickFixture struct {
	*fixture
	oc  *oauth.OneClick
	rec *appRecorder
}

func newOneClick(t *testing.T) *oneClickFixture {
	t.Helper()
	f := newFixture(t)
	rec := &appRecorder{Next: f.client}
	f.svc.Client = &oauth.AppClient{Next: rec, Name: core.OAuthAppOneClick, Apps: vendorApps}
	oc := &oauth.OneClick{
		Service: f.svc,
		Apps:    vendorApps,
		Create: func(ctx context.Context, name, driver string, settings map[string]any) (int64, error) {
			c, err := f.connApp.Create(ctx, app.ConnectionInput{Name: &name, Driver: &driver, Settings: settings})
			if err != nil {
				return 0, err
			}
			return c.ID, nil
		},
		Delete: f.connApp.Delete,
	}
	return &oneClickFixture{fixture: f, oc: oc, rec: rec}
}

// start runs a one-click Authorize and returns the consent URL and state.
func (f *oneClickFixture) start(t *testing.T, provider, connID string) (*url.URL, string) {
	t.Helper()
	to, err := f.oc.Authorize(context.Background(), oauth.OneClickInput{User: admin, Provider: provider, ConnectionID: connID})
	if err != nil {
		t.Fatalf("one-click Authorize %s: %v", provider, err)
	}
	u, err := url.Parse(to)
	if err != nil {
		t.Fatal(err)
	}
	return u, u.Query().Get("state")
}

// count returns how many connections exist.
func (f *oneClickFixture) count(t *testing.T) int {
	t.Helper()
	_, n, err := f.connApp.List(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestOneClickAuthorize(t *testing.T) {
	tests := []struct {
		provider, clientID string
		local              bool
		wantRedirect       string
		formPost           bool
	}{
		{core.ProviderGoogle, "vendor-google-id", false, "https://relay.example/callback", false},
		{core.ProviderMicrosoft, "vendor-ms-id", false, "https://relay.example/callback", true},
		{core.ProviderGoogle, "vendor-google-id", true, "https://site.example/wp-json/mailsvc/v1/pro/oauth/google/one-click/callback", false},
		{core.ProviderMicrosoft, "vendor-ms-id", true, "https://site.example/wp-json/mailsvc/v1/pro/oauth/microsoft/one-click/callback", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s local=%v", tt.provider, tt.local), func(t *testing.T) {
			f := newOneClick(t)
			f.svc.UseLocalRedirects = tt.local
			// A constant or filter of the manual flow does not move the
			// vendor app's redirect URI.
			f.svc.RedirectURIs = map[string]string{tt.provider: "https://const.example/manual"}
			consent, state := f.start(t, tt.provider, "")
			if consent.Host != "consent.example" || consent.Path != "/"+tt.clientID {
				t.Fatalf("consent URL %s, want the vendor app %s", consent, tt.clientID)
			}
			q := consent.Query()
			if q.Get("redirect_uri") != tt.wantRedirect {
				t.Fatalf("redirect_uri %q, want %q", q.Get("redirect_uri"), tt.wantRedirect)
			}
			if got := q.Get("response_mode"); (got == "form_post") != tt.formPost || (!tt.formPost && got != "") {
				t.Fatalf("response_mode %q, form_post wanted: %v", got, tt.formPost)
			}
			random, site, relayed := strings.Cut(state, ".")
			if relayed == tt.local || len(random) < 43 {
				t.Fatalf("state %q (relayed part %v)", state, relayed)
			}
			if relayed {
				if got := decodeSite(t, site); got != "https://site.example/wp-json/mailsvc/v1/pro/oauth/"+tt.provider+"/one-click/callback" {
					t.Fatalf("the relay would send the browser to %s", got)
				}
			}
			pending := f.states.Pending()
			if len(pending) != 1 {
				t.Fatalf("%d states stored", len(pending))
			}
			p := pending[0]
			if p.Provider != tt.provider || p.UserID != admin.ID || p.ConnectionID != 0 || p.RedirectURI != tt.wantRedirect {
				t.Fatalf("state not bound to user and provider: %+v", p)
			}
			if !p.ExpiresAt.Equal(f.clock.Now().Add(core.OAuthStateTTL)) {
				t.Fatalf("state expires at %v, want now + %v", p.ExpiresAt, core.OAuthStateTTL)
			}
			if verifier := q.Get("code_challenge"); !strings.HasPrefix(p.CodeVerifier, "test-enc:") || strings.Contains(p.CodeVerifier, verifier) {
				t.Fatalf("verifier stored in clear: %q", p.CodeVerifier)
			}
			if p.State == state || p.State == tt.provider+":"+state {
				t.Fatalf("the one-click state is stored under the manual flow's key %q", p.State)
			}
			if f.count(t) != 0 {
				t.Fatal("authorize created a connection")
			}
		})
	}
}

func TestOneClickAuthorizeRefusals(t *testing.T) {
	f := newOneClick(t)
	outlook := f.create(t, "o", "outlook", map[string]any{core.KeyOAuthApp: core.OAuthAppOneClick})
	onlyGoogle := &oauth.OneClick{Service: f.svc, Apps: map[string]oauth.VendorApp{core.ProviderGoogle: vendorApps[core.ProviderGoogle]}}
	tests := []struct {
		name, provider, conn string
		oc                   *oauth.OneClick
		user                 *core.User
		code, field          string
	}{
		{"zoho has no one-click", core.ProviderZoho, "", f.oc, admin, core.ENOTFOUND, ""},
		{"unknown provider", "yahoo", "", f.oc, admin, core.ENOTFOUND, ""},
		{"no user", core.ProviderGoogle, "", f.oc, nil, core.EUNAUTHORIZED, ""},
		{"vendor app not configured", core.ProviderMicrosoft, "", onlyGoogle, admin, core.EUNAVAILABLE, ""},
		{"connection id not a number", core.ProviderGoogle, "x", f.oc, admin, core.EINVALID, "connection_id"},
		{"connection id zero", core.ProviderGoogle, "0", f.oc, admin, core.EINVALID, "connection_id"},
		{"unknown connection", core.ProviderGoogle, "999", f.oc, admin, core.ENOTFOUND, ""},
		{"connection of the other provider", core.ProviderGoogle, fmt.Sprint(outlook), f.oc, admin, core.EINVALID, "connection_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.oc.Authorize(context.Background(), oauth.OneClickInput{User: tt.user, Provider: tt.provider, ConnectionID: tt.conn})
			if core.ErrorCode(err) != tt.code || (tt.field != "" && core.ErrorFields(err)[tt.field] == "") {
				t.Fatalf("err %v, want %s on %q", err, tt.code, tt.field)
			}
		})
	}
	if n := len(f.states.Pending()); n != 0 {
		t.Fatalf("%d states stored by refused authorizations", n)
	}
	if n := len(f.rec.Seen()); n != 0 {
		t.Fatalf("%d client calls by refused authorizations", n)
	}
}

// An existing connection is re-authorized with its own settings (the
// Microsoft tenant, the authorization server) and the vendor's app.
func TestOneClickAuthorizeExistingConnection(t *testing.T) {
	f := newOneClick(t)
	id := f.create(t, "mine", "outlook", map[string]any{"client_id": "own-id", "client_secret": "own-secret", "tenant_id": "contoso.example"})
	consent, _ := f.start(t, core.ProviderMicrosoft, fmt.Sprint(id))
	if consent.Path != "/vendor-ms-id" {
		t.Fatalf("consent URL %s, want the vendor's app", consent)
	}
	seen := f.rec.Seen()
	if len(seen) != 1 || seen[0].ConnectionID != id || seen[0].ClientID != "vendor-ms-id" || seen[0].ClientSecret != "vendor-ms-secret" {
		t.Fatalf("consent URL built from %+v, want connection %d with the vendor's app", seen, id)
	}
	if p := f.states.Pending(); len(p) != 1 || p[0].ConnectionID != id {
		t.Fatalf("state not bound to the connection: %+v", p)
	}
	if raw := f.conns.Raw(id); raw.Settings.String(core.KeyOAuthApp) != "" || len(f.state.Writes()) != 0 {
		t.Fatalf("authorize changed the connection: %+v", raw.Settings)
	}
}

func TestOneClickCallbackCreates(t *testing.T) {
	tests := []struct {
		provider, driver, name, clientID, secret string
	}{
		{core.ProviderGoogle, "gmail", "Gmail (one-click)", "vendor-google-id", "vendor-google-secret"},
		{core.ProviderMicrosoft, "outlook", "Outlook (one-click)", "vendor-ms-id", "vendor-ms-secret"},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			f := newOneClick(t)
			f.client.Next = func(n int) *core.OAuthToken {
				return &core.OAuthToken{AccessToken: fmt.Sprintf("at-%d", n), RefreshToken: fmt.Sprintf("rt-%d", n), Expiry: f.clock.Now().Add(time.Hour)}
			}
			consent, state := f.start(t, tt.provider, "")
			verifier := consent.Query().Get("code_challenge") // the fake echoes the verifier
			to := f.oc.Callback(context.Background(), tt.provider, oauth.CallbackInput{Code: "the-code", State: state, UserID: admin.ID})
			q := flags(t, to)
			if q.Get("oauth") != "success" || q.Get("provider") != tt.provider || q.Get("connection_id") == "" {
				t.Fatalf("flags %v", q)
			}
			var id int64
			fmt.Sscan(q.Get("connection_id"), &id)
			raw := f.conns.Raw(id)
			if raw == nil || raw.Name != tt.name || raw.Driver != tt.driver || raw.OAuthStatus != core.OAuthAuthorized {
				t.Fatalf("stored %+v", raw)
			}
			if raw.Settings.String(core.KeyOAuthApp) != core.OAuthAppOneClick || raw.Settings.String("client_id") != "" || raw.Settings.String("client_secret") != "" {
				t.Fatalf("stored settings %v: want oauth_app=oneclick and no app of its own", raw.Settings)
			}
			for _, k := range []string{core.KeyAccessToken, core.KeyRefreshToken} {
				if v := raw.Settings.String(k); !strings.HasPrefix(v, "test-enc:") {
					t.Fatalf("stored %s = %q, want ciphertext", k, v)
				}
			}
			if eff := f.effective(t, id); eff.Settings.String(core.KeyAccessToken) != "at-1" || eff.Settings.String(core.KeyRefreshToken) != "rt-1" {
				t.Fatalf("effective tokens %v", eff.Settings)
			}
			ex := f.client.Calls("Exchange")
			if len(ex) != 1 || ex[0].Code != "the-code" || ex[0].Verifier != verifier || ex[0].RedirectURI != "https://relay.example/callback" {
				t.Fatalf("exchanges %+v", ex)
			}
			var apps []appSeen
			for _, s := range f.rec.Seen() {
				if s.Method == "Exchange" {
					apps = append(apps, s)
				}
			}
			if len(apps) != 1 || apps[0].ClientID != tt.clientID || apps[0].ClientSecret != tt.secret {
				t.Fatalf("the code was exchanged with %+v, want the vendor's app", apps)
			}

			// Replaying the state is refused before any token request.
			q = flags(t, f.oc.Callback(context.Background(), tt.provider, oauth.CallbackInput{Code: "the-code", State: state}))
			if q.Get("oauth_error") != oauth.ErrInvalidState || len(f.client.Calls("Exchange")) != 1 || f.count(t) != 1 {
				t.Fatalf("replay: flags %v, %d exchanges, %d connections", q, len(f.client.Calls("Exchange")), f.count(t))
			}

			// The service's refresh of the connection uses the vendor's app.
			res, err := f.svc.RefreshNow(context.Background(), id)
			if err != nil || !res.Success {
				t.Fatalf("RefreshNow: %+v, %v", res, err)
			}
			re := f.client.Calls("Refresh")
			if len(re) != 1 || re[0].RefreshToken != "rt-1" {
				t.Fatalf("refreshes %+v", re)
			}
			last := f.rec.Seen()[len(f.rec.Seen())-1]
			if last.Method != "Refresh" || last.ClientID != tt.clientID || last.ClientSecret != tt.secret {
				t.Fatalf("refreshed with %+v, want the vendor's app", last)
			}
		})
	}
}

func TestOneClickCallbackUpdatesTheNamedConnection(t *testing.T) {
	f := newOneClick(t)
	id := f.create(t, "mine", "gmail", map[string]any{"client_id": "own-id", "client_secret": "own-secret"})
	_, state := f.start(t, core.ProviderGoogle, fmt.Sprint(id))
	q := flags(t, f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: state, UserID: admin.ID}))
	if q.Get("oauth") != "success" || q.Get("connection_id") != fmt.Sprint(id) {
		t.Fatalf("flags %v", q)
	}
	if f.count(t) != 1 || len(f.state.Writes()) != 1 {
		t.Fatalf("%d connections, %d settings writes: want the named one, in one write", f.count(t), len(f.state.Writes()))
	}
	raw := f.conns.Raw(id)
	if raw.Name != "mine" || raw.Settings.String(core.KeyOAuthApp) != core.OAuthAppOneClick || raw.OAuthStatus != core.OAuthAuthorized ||
		!strings.HasPrefix(raw.Settings.String(core.KeyAccessToken), "test-enc:") {
		t.Fatalf("stored %+v", raw)
	}
	seen := f.rec.Seen()
	if last := seen[len(seen)-1]; last.Method != "Exchange" || last.ConnectionID != id || last.ClientID != "vendor-google-id" {
		t.Fatalf("exchanged with %+v, want connection %d with the vendor's app", last, id)
	}
}

func TestOneClickCallbackRefusals(t *testing.T) {
	tests := []struct {
		name string
		// run gets the one-click state of a google authorization and the
		// state of a manual google authorization.
		run   func(f *oneClickFixture, state, manual string) string
		flag  string
		spent bool // the one-click state was consumed
	}{
		{"forged state", func(f *oneClickFixture, _, _ string) string {
			return f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: "forged"})
		}, oauth.ErrInvalidState, false},
		{"empty state", func(f *oneClickFixture, _, _ string) string {
			return f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c"})
		}, oauth.ErrInvalidState, false},
		{"manual flow's state", func(f *oneClickFixture, _, manual string) string {
			return f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: manual})
		}, oauth.ErrInvalidState, false},
		{"other provider", func(f *oneClickFixture, st, _ string) string {
			return f.oc.Callback(context.Background(), core.ProviderMicrosoft, oauth.CallbackInput{Code: "c", State: st})
		}, oauth.ErrInvalidState, false},
		{"provider without one-click", func(f *oneClickFixture, st, _ string) string {
			return f.oc.Callback(context.Background(), core.ProviderZoho, oauth.CallbackInput{Code: "c", State: st})
		}, oauth.ErrInvalidState, false},
		{"expired", func(f *oneClickFixture, st, _ string) string {
			f.clock.Add(core.OAuthStateTTL + time.Second)
			return f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: st})
		}, oauth.ErrInvalidState, true},
		{"other user", func(f *oneClickFixture, st, _ string) string {
			return f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: st, UserID: 99})
		}, oauth.ErrUserMismatch, true},
		{"provider error", func(f *oneClickFixture, st, _ string) string {
			return f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Error: "access_denied", State: st})
		}, "access_denied", true},
		{"odd provider error", func(f *oneClickFixture, st, _ string) string {
			return f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Error: "<b>x</b>", State: st})
		}, oauth.ErrProviderRejected, true},
		{"no code", func(f *oneClickFixture, st, _ string) string {
			return f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{State: st})
		}, oauth.ErrMissingCode, true},
		{"state and relay part tampered", func(f *oneClickFixture, st, _ string) string {
			return f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: st + "x"})
		}, oauth.ErrInvalidState, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newOneClick(t)
			manualConn := f.googleConn(t, nil)
			_, manual := f.authorize(t, core.ProviderGoogle, manualConn)
			_, state := f.start(t, core.ProviderGoogle, "")
			q := flags(t, tt.run(f, state, manual))
			if q.Get("oauth") != "error" || q.Get("oauth_error") != tt.flag {
				t.Fatalf("flags %v, want oauth_error=%s", q, tt.flag)
			}
			if n := len(f.client.Calls("Exchange")); n != 0 {
				t.Fatalf("%d token requests", n)
			}
			if n := f.count(t); n != 1 || len(f.state.Writes()) != 0 {
				t.Fatalf("written: %d connections, %d settings writes", n, len(f.state.Writes()))
			}
			left := 0
			for _, p := range f.states.Pending() {
				if p.ConnectionID == 0 {
					left++
				}
			}
			if (left == 0) != tt.spent {
				t.Fatalf("one-click state left %d, spent want %v", left, tt.spent)
			}
		})
	}
}

// A one-click state is unknown at the manual callback: refused there
// before any token request, and still good at its own callback.
func TestOneClickStateRefusedByTheManualCallback(t *testing.T) {
	f := newOneClick(t)
	id := f.create(t, "mine", "gmail", map[string]any{"client_id": "own-id", "client_secret": "own-secret"})
	_, state := f.start(t, core.ProviderGoogle, fmt.Sprint(id))
	q := flags(t, f.svc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: state}))
	if q.Get("oauth_error") != oauth.ErrInvalidState || len(f.client.Calls("Exchange")) != 0 || len(f.state.Writes()) != 0 {
		t.Fatalf("manual callback with a one-click state: flags %v, %d exchanges", q, len(f.client.Calls("Exchange")))
	}
	q = flags(t, f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: state}))
	if q.Get("oauth") != "success" || q.Get("connection_id") != fmt.Sprint(id) {
		t.Fatalf("own callback after the refusal: %v", q)
	}
}

func TestOneClickCallbackFailuresWriteNothing(t *testing.T) {
	t.Run("exchange refused", func(t *testing.T) {
		f := newOneClick(t)
		_, state := f.start(t, core.ProviderGoogle, "")
		f.client.Err = &core.OAuthError{Code: "invalid_grant", Description: "code expired", Status: 400}
		q := flags(t, f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: state}))
		if q.Get("oauth_error") != "invalid_grant" || f.count(t) != 0 {
			t.Fatalf("flags %v, %d connections", q, f.count(t))
		}
	})
	t.Run("token refused for a new connection", func(t *testing.T) {
		f := newOneClick(t)
		f.client.Next = func(int) *core.OAuthToken { return &core.OAuthToken{AccessToken: "refuse-me"} }
		_, state := f.start(t, core.ProviderGoogle, "")
		q := flags(t, f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: state}))
		if q.Get("oauth_error") != oauth.ErrTokenRejected || q.Get("connection_id") != "" || f.count(t) != 0 {
			t.Fatalf("flags %v, %d connections left", q, f.count(t))
		}
	})
	t.Run("token refused for the named connection", func(t *testing.T) {
		f := newOneClick(t)
		id := f.create(t, "mine", "gmail", map[string]any{"client_id": "own-id", "client_secret": "own-secret"})
		before := f.conns.Raw(id)
		f.client.Next = func(int) *core.OAuthToken { return &core.OAuthToken{AccessToken: "refuse-me"} }
		_, state := f.start(t, core.ProviderGoogle, fmt.Sprint(id))
		q := flags(t, f.oc.Callback(context.Background(), core.ProviderGoogle, oauth.CallbackInput{Code: "c", State: state}))
		if q.Get("oauth_error") != oauth.ErrTokenRejected || q.Get("connection_id") != fmt.Sprint(id) {
			t.Fatalf("flags %v", q)
		}
		after := f.conns.Raw(id)
		if after.Settings.String(core.KeyOAuthApp) != "" || len(after.Settings) != len(before.Settings) || after.OAuthStatus != before.OAuthStatus {
			t.Fatalf("a refused authorization changed the connection: %v → %v", before.Settings, after.Settings)
		}
	})
}
