package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/oauth"
	"github.com/mailsvc/mailsvc/core"
)

func init() {
	core.Register(core.Driver{
		Slug: "oauthhttptest", Name: "OAuth test driver", OAuthProvider: core.ProviderGoogle,
		Fields: []core.Field{
			{Key: "client_id", Type: core.FieldString}, {Key: "client_secret", Type: core.FieldPassword},
			{Key: core.KeyAccessToken, Type: core.FieldPassword}, {Key: core.KeyRefreshToken, Type: core.FieldPassword},
			{Key: core.KeyTokenExpiry, Type: core.FieldString},
		},
		New: func(*core.Connection, core.DriverEnv) (core.Transport, error) { return nil, nil },
	})
}

type oauthFixture struct {
	ts     *httptest.Server
	client *apptest.OAuthClient
	conns  *apptest.ConnectionStore
	google int64 // an OAuth connection with a token
	bare   int64 // an OAuth connection without a token
	smtp   int64 // not OAuth
}

func newOAuthServer(t testing.TB) oauthFixture {
	t.Helper()
	conns := apptest.NewConnectionStore()
	connApp := &app.Connections{Store: conns, Cipher: apptest.Cipher{Key: "k"}, Hooks: &core.Hooks{}}
	client := &apptest.OAuthClient{Next: func(n int) *core.OAuthToken {
		return &core.OAuthToken{AccessToken: fmt.Sprintf("secret-access-%d", n), RefreshToken: "secret-refresh-new", Expiry: time.Now().Add(time.Hour)}
	}}
	svc := &oauth.Service{
		Connections: connApp, State: conns, Cipher: apptest.Cipher{Key: "k"}, Client: client,
		States: apptest.NewOAuthStateStore(), History: &apptest.RefreshHistoryStore{}, Leases: apptest.NewLeaseStore(),
		AdminURL: "https://site.example/wp-admin/admin.php?page=mailsvc", UseLocalRedirects: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	s := &api.Server{
		Auth: &tokenAuth{}, Connections: connApp, Settings: &app.Settings{Store: apptest.NewSettingsStore(), Connections: conns},
		OAuth: svc, Hooks: &core.Hooks{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	f := oauthFixture{ts: ts, client: client, conns: conns}
	mk := func(name, driver string, settings map[string]any) int64 {
		c, err := connApp.Create(context.Background(), app.ConnectionInput{Name: &name, Driver: &driver, Settings: settings})
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	f.google = mk("g", "oauthhttptest", map[string]any{"client_id": "cid", "client_secret": "csecret",
		core.KeyAccessToken: "secret-access-0", core.KeyRefreshToken: "secret-refresh-0", core.KeyTokenExpiry: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	f.bare = mk("b", "oauthhttptest", map[string]any{"client_id": "cid", "client_secret": "csecret"})
	f.smtp = mk("s", "smtp", map[string]any{"host": "mx"})
	return f
}

// noRedirect does a request without following redirects.
func noRedirect(t *testing.T, ts *httptest.Server, path, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestOAuthRouteErrors(t *testing.T) {
	f := newOAuthServer(t)
	tests := []errorCase{
		{"authorize anonymous", "GET", "/oauth/google/authorize?connection_id=1", "", "", 401, "rest_not_logged_in", ""},
		{"authorize editor", "GET", "/oauth/google/authorize?connection_id=1", "editor", "", 403, "rest_forbidden", ""},
		{"unknown provider", "GET", "/oauth/yahoo/authorize?connection_id=1", "admin", "", 404, "rest_no_route", ""},
		{"unknown provider callback", "GET", "/oauth/yahoo/callback?state=x", "", "", 404, "rest_no_route", ""},
		{"missing connection_id", "GET", "/oauth/google/authorize", "admin", "", 422, "validation_error", "connection_id"},
		{"bad connection_id", "GET", "/oauth/google/authorize?connection_id=x1", "admin", "", 422, "validation_error", "connection_id"},
		{"unknown connection", "GET", "/oauth/google/authorize?connection_id=999", "admin", "", 404, "not_found", ""},
		{"foreign connection", "GET", "/oauth/microsoft/authorize?connection_id=1", "admin", "", 422, "validation_error", "connection_id"},
		{"non-oauth connection", "GET", "/oauth/google/authorize?connection_id=3", "admin", "", 422, "validation_error", "connection_id"},
		{"token malformed json", "POST", "/connections/1/oauth-token", "admin", "{", 400, "bad_request", ""},
		{"token wrong type", "POST", "/connections/1/oauth-token", "admin", `{"expires_in":"soon"}`, 400, "bad_request", "expires_in"},
		{"token empty", "POST", "/connections/1/oauth-token", "admin", `{}`, 422, "validation_error", "refresh_token"},
		{"token bad expiry", "POST", "/connections/1/oauth-token", "admin", `{"access_token":"a","expires_at":"later"}`, 422, "validation_error", "expires_at"},
		{"token non-oauth", "POST", "/connections/3/oauth-token", "admin", `{"refresh_token":"r"}`, 422, "validation_error", "connection_id"},
		{"token unknown connection", "POST", "/connections/999/oauth-token", "admin", `{"refresh_token":"r"}`, 404, "not_found", ""},
		{"token bad id", "POST", "/connections/abc/oauth-token", "admin", `{"refresh_token":"r"}`, 404, "not_found", ""},
		{"token anonymous", "POST", "/connections/1/oauth-token", "", `{"refresh_token":"r"}`, 401, "rest_not_logged_in", ""},
		{"refresh unknown", "POST", "/connections/999/oauth-refresh-now", "admin", "", 404, "not_found", ""},
		{"refresh non-oauth", "POST", "/connections/3/oauth-refresh-now", "admin", "", 422, "validation_error", "connection_id"},
		{"refresh without token", "POST", "/connections/2/oauth-refresh-now", "admin", "", 422, "validation_error", "refresh_token"},
		{"history unknown", "GET", "/connections/999/oauth-refresh-history", "admin", "", 404, "not_found", ""},
		{"history bad page", "GET", "/connections/1/oauth-refresh-history?page=0", "admin", "", 422, "validation_error", "page"},
		{"history editor", "GET", "/connections/1/oauth-refresh-history", "editor", "", 403, "rest_forbidden", ""},
	}
	checkErrorCases(t, f.ts, tests)
	if n := len(f.client.Calls("")); n != 0 {
		t.Fatalf("refused requests reached the provider %d times", n)
	}
}

func TestOAuthFlowThroughRoutes(t *testing.T) {
	f := newOAuthServer(t)
	resp := noRedirect(t, f.ts, ns+"/oauth/google/authorize?connection_id=2", "admin")
	if resp.StatusCode != 302 {
		t.Fatalf("authorize status %d", resp.StatusCode)
	}
	consent, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || consent.Host != "consent.example" {
		t.Fatalf("Location %q", resp.Header.Get("Location"))
	}
	if want := f.ts.URL + ns + "/oauth/google/callback"; consent.Query().Get("redirect_uri") != want {
		t.Fatalf("redirect_uri %q, want %q", consent.Query().Get("redirect_uri"), want)
	}
	state := consent.Query().Get("state")

	// Another logged-in user is refused, and nothing is exchanged.
	cb := noRedirect(t, f.ts, ns+"/oauth/google/callback?code=c&state="+url.QueryEscape(state), "editor")
	if loc := cb.Header.Get("Location"); cb.StatusCode != 302 || !strings.Contains(loc, "oauth_error=user_mismatch") {
		t.Fatalf("other user: %d %s", cb.StatusCode, loc)
	}
	if len(f.client.Calls("Exchange")) != 0 {
		t.Fatal("exchanged for another user")
	}
	// A fresh flow, completed by the provider's redirect (no credentials).
	resp = noRedirect(t, f.ts, ns+"/oauth/google/authorize?connection_id=2", "admin")
	consent, _ = url.Parse(resp.Header.Get("Location"))
	state = consent.Query().Get("state")
	cb = noRedirect(t, f.ts, ns+"/oauth/google/callback?code=c&state="+url.QueryEscape(state), "")
	loc := cb.Header.Get("Location")
	if cb.StatusCode != 302 || !strings.HasPrefix(loc, "https://site.example/wp-admin/admin.php?") || !strings.Contains(loc, "oauth=success") || !strings.Contains(loc, "connection_id=2") {
		t.Fatalf("callback: %d %s", cb.StatusCode, loc)
	}
	// Replay: an error flag, no second exchange.
	cb = noRedirect(t, f.ts, ns+"/oauth/google/callback?code=c&state="+url.QueryEscape(state), "")
	if loc := cb.Header.Get("Location"); !strings.Contains(loc, "oauth_error=invalid_state") || len(f.client.Calls("Exchange")) != 1 {
		t.Fatalf("replay: %s", loc)
	}
	// Tokens are masked in the connection answer.
	r := do(t, f.ts, "GET", ns+"/connections/2", "admin", nil)
	if strings.Contains(string(r.Body), "secret-") || !strings.Contains(string(r.Body), `"oauth_status":"authorized"`) {
		t.Fatalf("connection answer %s", r.Body)
	}
}

func TestOAuthTokenRoutes(t *testing.T) {
	f := newOAuthServer(t)
	r := do(t, f.ts, "POST", ns+"/connections/2/oauth-token", "admin", strings.NewReader(`{"access_token":"secret-pasted","refresh_token":"secret-pasted-rt","expires_in":3600}`))
	if r.Status != 200 || strings.Contains(string(r.Body), "secret-") || !strings.Contains(string(r.Body), `"success":true`) {
		t.Fatalf("oauth-token: %d %s", r.Status, r.Body)
	}
	r = do(t, f.ts, "POST", ns+"/connections/1/oauth-refresh-now", "admin", nil)
	var res struct {
		Success   bool    `json:"success"`
		ExpiresAt *string `json:"expires_at"`
		Error     string  `json:"error"`
	}
	r.json(t, &res)
	if r.Status != 200 || !res.Success || res.ExpiresAt == nil || strings.Contains(string(r.Body), "secret-") {
		t.Fatalf("refresh-now: %d %s", r.Status, r.Body)
	}
	f.client.Err = &core.OAuthError{Code: "invalid_grant", Status: 400}
	r = do(t, f.ts, "POST", ns+"/connections/1/oauth-refresh-now", "admin", nil)
	r.json(t, &res)
	if r.Status != 200 || res.Success || !strings.Contains(res.Error, "invalid_grant") {
		t.Fatalf("failing refresh-now: %d %s", r.Status, r.Body)
	}
	r = do(t, f.ts, "GET", ns+"/connections/1/oauth-refresh-history?per_page=1", "admin", nil)
	var items []core.RefreshAttempt
	r.json(t, &items)
	if r.Status != 200 || r.Header.Get("X-WP-Total") != "2" || r.Header.Get("X-WP-TotalPages") != "2" || len(items) != 1 ||
		items[0].Outcome != core.RefreshFailed || items[0].Trigger != core.RefreshManual {
		t.Fatalf("history: %d %v %s", r.Status, r.Header, r.Body)
	}
	r = do(t, f.ts, "GET", ns+"/connections/3/oauth-refresh-history", "admin", nil)
	if r.Status != 200 || string(r.Body) != "[]\n" || r.Header.Get("X-WP-Total") != "0" {
		t.Fatalf("empty history: %d %q", r.Status, r.Body)
	}
}
