package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/oauth"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
	"github.com/mailsvc/mailsvc/test/fakes/oauthfake"
)

const (
	clientID    = "app-123"
	secret      = "s3cret-never-shown"
	redirectURI = "https://site.example/wp-json/mailsvc/v1/oauth/callback"
	verifier    = "verifier-0123456789-0123456789-0123456789-abc"
)

var providers = []string{core.ProviderGoogle, core.ProviderMicrosoft, core.ProviderZoho}

// Test drivers stand for gmail, outlook and zoho.
func init() {
	for _, p := range providers {
		core.Register(core.Driver{
			Slug:          "oauthtest-" + p,
			OAuthProvider: p,
			New:           func(*core.Connection, core.DriverEnv) (core.Transport, error) { return nil, errors.New("test driver") },
		})
	}
}

// connection returns a connection of provider's test driver with the app
// settings and extra settings.
func connection(provider, baseURL string, extra core.Settings) *core.Connection {
	s := core.Settings{
		oauthdriver.KeyClientID:     clientID,
		oauthdriver.KeyClientSecret: secret,
		oauthdriver.KeyOAuthBaseURL: baseURL,
	}
	for k, v := range extra {
		s[k] = v
	}
	return &core.Connection{ID: 7, Driver: "oauthtest-" + provider, Settings: s}
}

// newFake starts a fake of provider with the test app registered.
func newFake(t *testing.T, provider string) *oauthfake.Server {
	t.Helper()
	f := oauthfake.New(provider)
	t.Cleanup(f.Close)
	f.AddClient(clientID, secret)
	return f
}

func challenge(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func TestAuthCodeURL(t *testing.T) {
	tests := []struct {
		provider, mode, verifier string
		wantPath, wantScope      string
		wantPKCE, wantOffline    bool
	}{
		{core.ProviderGoogle, "", verifier, "/o/oauth2/v2/auth", oauth.ScopeGmailSend, true, true},
		{core.ProviderGoogle, oauthdriver.ModeSMTP, verifier, "/o/oauth2/v2/auth", "https://mail.google.com/", true, true},
		{core.ProviderGoogle, oauthdriver.ModeAPI, "", "/o/oauth2/v2/auth", oauth.ScopeGmailSend, false, true},
		{core.ProviderMicrosoft, oauthdriver.ModeAPI, verifier, "/common/oauth2/v2.0/authorize", "offline_access https://graph.microsoft.com/Mail.Send https://graph.microsoft.com/Mail.ReadWrite https://graph.microsoft.com/User.Read", true, false},
		{core.ProviderMicrosoft, oauthdriver.ModeSMTP, verifier, "/common/oauth2/v2.0/authorize", "offline_access https://outlook.office.com/SMTP.Send", true, false},
		{core.ProviderMicrosoft, oauthdriver.ModeAPI, "", "/common/oauth2/v2.0/authorize", "offline_access https://graph.microsoft.com/Mail.Send https://graph.microsoft.com/Mail.ReadWrite https://graph.microsoft.com/User.Read", false, false},
		{core.ProviderZoho, oauthdriver.ModeAPI, verifier, "/oauth/v2/auth", "ZohoMail.messages.CREATE,ZohoMail.accounts.READ", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.mode+"/pkce="+tt.verifier, func(t *testing.T) {
			f := newFake(t, tt.provider)
			conn := connection(tt.provider, f.URL(), core.Settings{oauthdriver.KeyDeliveryMode: tt.mode})
			raw, err := (&oauth.Client{}).AuthCodeURL(conn, redirectURI, "state-xyz", tt.verifier)
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := u.Scheme + "://" + u.Host; got != f.URL() || u.Path != tt.wantPath {
				t.Fatalf("URL %s, want %s%s", raw, f.URL(), tt.wantPath)
			}
			q := u.Query()
			want := map[string]string{
				"client_id": clientID, "redirect_uri": redirectURI, "response_type": "code",
				"scope": tt.wantScope, "state": "state-xyz",
			}
			if tt.wantPKCE {
				want["code_challenge"], want["code_challenge_method"] = challenge(tt.verifier), "S256"
			}
			if tt.wantOffline {
				want["access_type"], want["prompt"] = "offline", "consent"
			}
			for k, v := range want {
				if q.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, q.Get(k), v)
				}
			}
			for _, k := range []string{"code_challenge", "access_type", "prompt", "client_secret"} {
				if _, ok := want[k]; !ok && q.Has(k) {
					t.Errorf("%s = %q, want it absent", k, q.Get(k))
				}
			}
			// The fake's consent screen accepts the URL as it is.
			back, err := f.Consent(context.Background(), raw)
			if err != nil {
				t.Fatal(err)
			}
			if back.Query().Get("code") == "" || back.Query().Get("state") != "state-xyz" {
				t.Fatalf("consent sent the browser to %s, want a code and the state", back)
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct {
		name      string
		provider  string
		settings  core.Settings
		wantAuth  string
		wantToken string
		wantField string // the invalid field, when an error is wanted
	}{
		{"google", core.ProviderGoogle, nil,
			"https://accounts.google.com/o/oauth2/v2/auth", "https://oauth2.googleapis.com/token", ""},
		{"google override", core.ProviderGoogle, core.Settings{oauthdriver.KeyOAuthBaseURL: "http://127.0.0.1:9/"},
			"http://127.0.0.1:9/o/oauth2/v2/auth", "http://127.0.0.1:9/token", ""},
		{"microsoft common", core.ProviderMicrosoft, nil,
			"https://login.microsoftonline.com/common/oauth2/v2.0/authorize", "https://login.microsoftonline.com/common/oauth2/v2.0/token", ""},
		{"microsoft tenant", core.ProviderMicrosoft, core.Settings{oauth.KeyTenantID: "contoso.onmicrosoft.com"},
			"https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize", "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token", ""},
		{"microsoft sovereign cloud", core.ProviderMicrosoft, core.Settings{oauth.KeyTenantID: "organizations", oauthdriver.KeyOAuthBaseURL: "https://login.microsoftonline.us"},
			"https://login.microsoftonline.us/organizations/oauth2/v2.0/authorize", "https://login.microsoftonline.us/organizations/oauth2/v2.0/token", ""},
		{"microsoft bad tenant", core.ProviderMicrosoft, core.Settings{oauth.KeyTenantID: "../evil"}, "", "", oauth.KeyTenantID},
		{"microsoft tenant of 254 characters", core.ProviderMicrosoft, core.Settings{oauth.KeyTenantID: strings.Repeat("a", 254)},
			"https://login.microsoftonline.com/" + strings.Repeat("a", 254) + "/oauth2/v2.0/authorize", "https://login.microsoftonline.com/" + strings.Repeat("a", 254) + "/oauth2/v2.0/token", ""},
		{"microsoft tenant of 255 characters", core.ProviderMicrosoft, core.Settings{oauth.KeyTenantID: strings.Repeat("a", 255)}, "", "", oauth.KeyTenantID},
		{"microsoft tenant starting with a dot", core.ProviderMicrosoft, core.Settings{oauth.KeyTenantID: ".contoso.com"}, "", "", oauth.KeyTenantID},
		{"zoho com", core.ProviderZoho, nil,
			"https://accounts.zoho.com/oauth/v2/auth", "https://accounts.zoho.com/oauth/v2/token", ""},
		{"zoho eu", core.ProviderZoho, core.Settings{oauth.KeyDataCenter: "eu"},
			"https://accounts.zoho.eu/oauth/v2/auth", "https://accounts.zoho.eu/oauth/v2/token", ""},
		{"zoho com.au", core.ProviderZoho, core.Settings{oauth.KeyDataCenter: "com.au"},
			"https://accounts.zoho.com.au/oauth/v2/auth", "https://accounts.zoho.com.au/oauth/v2/token", ""},
		{"zoho ca", core.ProviderZoho, core.Settings{oauth.KeyDataCenter: "ca"},
			"https://accounts.zohocloud.ca/oauth/v2/auth", "https://accounts.zohocloud.ca/oauth/v2/token", ""},
		{"zoho unknown data centre", core.ProviderZoho, core.Settings{oauth.KeyDataCenter: "mars"}, "", "", oauth.KeyDataCenter},
		{"base URL not http", core.ProviderGoogle, core.Settings{oauthdriver.KeyOAuthBaseURL: "ftp://x"}, "", "", oauthdriver.KeyOAuthBaseURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep, err := oauth.Endpoint(tt.provider, tt.settings)
			if tt.wantField != "" {
				var ce *core.Error
				if !errors.As(err, &ce) || ce.Code != core.EINVALID || ce.Fields[tt.wantField] == "" {
					t.Fatalf("err = %v, want a validation error on %s", err, tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ep.AuthURL != tt.wantAuth || ep.TokenURL != tt.wantToken {
				t.Fatalf("endpoint %s %s, want %s %s", ep.AuthURL, ep.TokenURL, tt.wantAuth, tt.wantToken)
			}
		})
	}
}

// authorize runs the consent step against the fake and returns the code.
func authorize(t *testing.T, c *oauth.Client, f *oauthfake.Server, conn *core.Connection, v string) string {
	t.Helper()
	raw, err := c.AuthCodeURL(conn, redirectURI, "st", v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := f.Consent(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	code := back.Query().Get("code")
	if code == "" {
		t.Fatalf("no code in %s", back)
	}
	return code
}

func TestExchange(t *testing.T) {
	tests := []struct {
		provider      string
		pkce          bool
		wantExtra     string
		wantTenantSeg string
	}{
		{core.ProviderGoogle, true, "", ""},
		{core.ProviderMicrosoft, true, "ext_expires_in", "contoso"},
		{core.ProviderZoho, false, "api_domain", ""},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			f := newFake(t, tt.provider)
			f.SetExpiresIn(1800)
			conn := connection(tt.provider, f.URL(), core.Settings{oauth.KeyTenantID: "contoso"})
			c := &oauth.Client{}
			ctx := context.Background()

			code := authorize(t, c, f, conn, verifier)
			if a := f.Authorizations(); len(a) != 1 || (a[0].CodeChallenge != "") != tt.pkce || a[0].Tenant != tt.wantTenantSeg {
				t.Fatalf("authorize requests %+v: want one, challenge sent %v, tenant %q", a, tt.pkce, tt.wantTenantSeg)
			}
			before := time.Now()
			tok, err := c.Exchange(ctx, conn, redirectURI, code, verifier)
			if err != nil {
				t.Fatal(err)
			}
			if !f.Valid(tok.AccessToken) || tok.RefreshToken == "" || tok.TokenType != "Bearer" {
				t.Fatalf("token %+v: want a valid access token, a refresh token, Bearer", tok)
			}
			if d := tok.Expiry.Sub(before); d < 1790*time.Second || d > 1810*time.Second {
				t.Fatalf("expiry in %v, want about 30 minutes", d)
			}
			if tt.wantExtra != "" && tok.Extra[tt.wantExtra] == "" {
				t.Fatalf("extra %v, want %s", tok.Extra, tt.wantExtra)
			}
			if tt.provider != core.ProviderZoho && tok.Scope == "" {
				t.Fatalf("no scope in %+v", tok)
			}
			if f.Exchanges() != 1 {
				t.Fatalf("exchanges = %d, want 1", f.Exchanges())
			}

			// The code is single use.
			_, err = c.Exchange(ctx, conn, redirectURI, code, verifier)
			assertInvalidGrant(t, err, code)

			// Another redirect URI than the authorize step's is refused.
			code = authorize(t, c, f, conn, verifier)
			_, err = c.Exchange(ctx, conn, redirectURI+"/other", code, verifier)
			assertInvalidGrant(t, err, code)

			// A wrong verifier is refused where PKCE is used; Zoho gets none.
			code = authorize(t, c, f, conn, verifier)
			_, err = c.Exchange(ctx, conn, redirectURI, code, verifier+"-wrong")
			if tt.pkce {
				assertInvalidGrant(t, err, code)
			} else if err != nil {
				t.Fatalf("zoho exchange: %v (no PKCE, the verifier is not sent)", err)
			}

			// Without a verifier at either step the exchange works.
			code = authorize(t, c, f, conn, "")
			if _, err := c.Exchange(ctx, conn, redirectURI, code, ""); err != nil {
				t.Fatalf("exchange without PKCE: %v", err)
			}
		})
	}
}

func TestExchangeWithoutOfflineGetsNoRefreshToken(t *testing.T) {
	// The fake issues refresh tokens only when asked the provider's way;
	// the client asks each of them right, so every exchange above got one.
	// Here the request lacks it: the fake's rule itself is checked.
	f := newFake(t, core.ProviderGoogle)
	u := f.URL() + "/o/oauth2/v2/auth?" + url.Values{
		"client_id": {clientID}, "redirect_uri": {redirectURI}, "response_type": {"code"}, "scope": {oauth.ScopeGmailSend},
	}.Encode()
	back, err := f.Consent(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	conn := connection(core.ProviderGoogle, f.URL(), nil)
	tok, err := (&oauth.Client{}).Exchange(context.Background(), conn, redirectURI, back.Query().Get("code"), "")
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken != "" {
		t.Fatalf("refresh token %q without access_type=offline", tok.RefreshToken)
	}
}

func TestRefresh(t *testing.T) {
	tests := []struct {
		provider    string
		rotate      *bool // nil: the provider's default
		wantRotated bool
	}{
		{core.ProviderGoogle, nil, false},
		{core.ProviderGoogle, ptr(true), true},
		{core.ProviderMicrosoft, nil, true},
		{core.ProviderMicrosoft, ptr(false), false},
		{core.ProviderZoho, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			f := newFake(t, tt.provider)
			if tt.rotate != nil {
				f.SetRotation(*tt.rotate)
			}
			conn := connection(tt.provider, f.URL(), nil)
			c := &oauth.Client{}
			ctx := context.Background()
			first, err := c.Exchange(ctx, conn, redirectURI, authorize(t, c, f, conn, verifier), verifier)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := c.Refresh(ctx, conn, first.RefreshToken)
			if err != nil {
				t.Fatal(err)
			}
			if !f.Valid(tok.AccessToken) || tok.AccessToken == first.AccessToken || f.Refreshes() != 1 {
				t.Fatalf("refresh gave %+v (refreshes %d): want a new valid access token", tok, f.Refreshes())
			}
			if tt.provider == core.ProviderZoho && tok.Extra["api_domain"] == "" {
				t.Fatalf("zoho refresh without api_domain: %+v", tok)
			}
			if !tt.wantRotated {
				if tok.RefreshToken != "" {
					t.Fatalf("refresh token %q, want \"\" (none sent)", tok.RefreshToken)
				}
				if _, err := c.Refresh(ctx, conn, first.RefreshToken); err != nil {
					t.Fatalf("the kept refresh token no longer works: %v", err)
				}
				return
			}
			if tok.RefreshToken == "" || tok.RefreshToken == first.RefreshToken {
				t.Fatalf("refresh token %q, want a new one", tok.RefreshToken)
			}
			_, err = c.Refresh(ctx, conn, first.RefreshToken)
			assertInvalidGrant(t, err, first.RefreshToken)
			if _, err := c.Refresh(ctx, conn, tok.RefreshToken); err != nil {
				t.Fatalf("the rotated refresh token does not work: %v", err)
			}
		})
	}
}

func TestRevokedRefreshToken(t *testing.T) {
	wantStatus := map[string]int{core.ProviderGoogle: 400, core.ProviderMicrosoft: 400, core.ProviderZoho: 200}
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			f := newFake(t, p)
			_, rt := f.Grant(clientID, strings.Join(oauth.Scopes(p, ""), " "))
			f.Revoke(rt)
			_, err := (&oauth.Client{}).Refresh(context.Background(), connection(p, f.URL(), nil), rt)
			assertInvalidGrant(t, err, rt)
			var oe *core.OAuthError
			if !errors.As(err, &oe) || oe.Status != wantStatus[p] {
				t.Fatalf("err = %#v, want an OAuthError with HTTP %d", err, wantStatus[p])
			}
			if p == core.ProviderZoho && !strings.HasPrefix(oe.Description, "invalid_code") {
				t.Fatalf("zoho description %q, want Zoho's invalid_code kept", oe.Description)
			}
		})
	}
}

func TestFailures(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	tests := []struct {
		name      string
		setup     func(f *oauthfake.Server) (baseURL, clientSecret string)
		wantOAuth string // the OAuthError code wanted; "" for a plain error
	}{
		{"5xx", func(f *oauthfake.Server) (string, string) { f.FailNext(1, 503); return f.URL(), secret }, "any"},
		{"unreachable", func(*oauthfake.Server) (string, string) { return closedURL, secret }, ""},
		{"wrong secret", func(f *oauthfake.Server) (string, string) { return f.URL(), "wrong-" + secret }, "invalid_client"},
	}
	for _, p := range providers {
		for _, tt := range tests {
			t.Run(p+"/"+tt.name, func(t *testing.T) {
				f := newFake(t, p)
				_, rt := f.Grant(clientID, strings.Join(oauth.Scopes(p, ""), " "))
				base, sec := tt.setup(f)
				conn := connection(p, base, core.Settings{oauthdriver.KeyClientSecret: sec})
				_, err := (&oauth.Client{}).Refresh(context.Background(), conn, rt)
				if err == nil || core.IsInvalidGrant(err) {
					t.Fatalf("err = %v, want an error that is not invalid_grant", err)
				}
				var oe *core.OAuthError
				isOAuth := errors.As(err, &oe)
				switch {
				case tt.wantOAuth == "" && isOAuth:
					t.Fatalf("err = %v, want a plain error", err)
				case tt.wantOAuth != "" && !isOAuth:
					t.Fatalf("err = %v, want an OAuthError", err)
				case tt.wantOAuth != "any" && isOAuth && oe.Code != tt.wantOAuth:
					t.Fatalf("code %q, want %q", oe.Code, tt.wantOAuth)
				}
				for _, s := range []string{secret, rt} {
					if strings.Contains(err.Error(), s) {
						t.Fatalf("error text %q carries a secret", err)
					}
				}
			})
		}
	}
}

func TestHTTPClientIsUsed(t *testing.T) {
	f := newFake(t, core.ProviderMicrosoft)
	var calls atomic.Int32
	hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	_, rt := f.Grant(clientID, "offline_access")
	if _, err := (&oauth.Client{HTTPClient: hc}).Refresh(context.Background(), connection(core.ProviderMicrosoft, f.URL(), nil), rt); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 {
		t.Fatalf("the given HTTP client made %d requests, want 1", calls.Load())
	}
}

func TestBadConnection(t *testing.T) {
	c := &oauth.Client{}
	tests := []struct {
		name string
		conn *core.Connection
	}{
		{"no client id", connection(core.ProviderGoogle, "", core.Settings{oauthdriver.KeyClientID: ""})},
		{"no secret", connection(core.ProviderGoogle, "", core.Settings{oauthdriver.KeyClientSecret: ""})},
		{"driver without OAuth", &core.Connection{Driver: "no-such-driver"}},
		{"nil", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.AuthCodeURL(tt.conn, redirectURI, "st", verifier)
			if core.ErrorCode(err) != core.EINVALID {
				t.Fatalf("AuthCodeURL err = %v, want a validation error", err)
			}
			_, err = c.Refresh(context.Background(), tt.conn, "rt")
			if core.ErrorCode(err) != core.EINVALID {
				t.Fatalf("Refresh err = %v, want a validation error", err)
			}
		})
	}
}

func TestScopes(t *testing.T) {
	if got := oauth.Scopes("nope", ""); got != nil {
		t.Fatalf("unknown provider scopes %v, want nil", got)
	}
	if got := strings.Join(oauth.Scopes(core.ProviderMicrosoft, oauthdriver.ModeSMTP), " "); got != "offline_access https://outlook.office.com/SMTP.Send" {
		t.Fatalf("microsoft smtp scopes %q", got)
	}
}

// assertInvalidGrant checks that err is an invalid grant whose text
// carries neither the secret nor the code or token used.
func assertInvalidGrant(t *testing.T, err error, used string) {
	t.Helper()
	if !core.IsInvalidGrant(err) {
		t.Fatalf("err = %v, want invalid_grant", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), used) {
		t.Fatalf("error text %q carries a secret", err)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func ptr[T any](v T) *T { return &v }
