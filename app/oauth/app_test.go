package oauth_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/oauth"
	"github.com/mailsvc/mailsvc/core"
)

// appSeen is the app a token request was made with.
type appSeen struct {
	Method, ClientID, ClientSecret, BaseURL string
	ConnectionID                            int64
}

// appRecorder is a core.OAuthClient that records the app settings of the
// connection of every call, then hands it to Next.
type appRecorder struct {
	Next *apptest.OAuthClient
	mu   sync.Mutex
	seen []appSeen
}

func (r *appRecorder) record(method string, conn *core.Connection) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, appSeen{Method: method, ConnectionID: conn.ID, ClientID: conn.Settings.String("client_id"),
		ClientSecret: conn.Settings.String("client_secret"), BaseURL: conn.Settings.String("oauth_base_url")})
}

// Seen returns the recorded calls.
func (r *appRecorder) Seen() []appSeen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]appSeen(nil), r.seen...)
}

func (r *appRecorder) AuthCodeURL(conn *core.Connection, redirectURI, state, verifier string) (string, error) {
	r.record("AuthCodeURL", conn)
	return r.Next.AuthCodeURL(conn, redirectURI, state, verifier)
}

func (r *appRecorder) Exchange(ctx context.Context, conn *core.Connection, redirectURI, code, verifier string) (*core.OAuthToken, error) {
	r.record("Exchange", conn)
	return r.Next.Exchange(ctx, conn, redirectURI, code, verifier)
}

func (r *appRecorder) Refresh(ctx context.Context, conn *core.Connection, refreshToken string) (*core.OAuthToken, error) {
	r.record("Refresh", conn)
	return r.Next.Refresh(ctx, conn, refreshToken)
}

var vendorApps = map[string]oauth.VendorApp{
	core.ProviderGoogle:    {ClientID: "vendor-google-id", ClientSecret: "vendor-google-secret", BaseURL: "http://vendor-google.test"},
	core.ProviderMicrosoft: {ClientID: "vendor-ms-id", ClientSecret: "vendor-ms-secret"},
}

func TestAppClientPicksTheApp(t *testing.T) {
	own := core.Settings{"client_id": "own-id", "client_secret": "own-secret", "oauth_base_url": "http://own.test"}
	with := func(extra core.Settings) core.Settings {
		s := own.Clone()
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	tests := []struct {
		name     string
		driver   string
		settings core.Settings
		apps     map[string]oauth.VendorApp
		want     appSeen // ClientID, ClientSecret, BaseURL
		wantErr  string  // error code when refused
	}{
		{"one-click google uses the vendor's app and server", "oauthgoogletest", with(core.Settings{core.KeyOAuthApp: core.OAuthAppOneClick}), vendorApps,
			appSeen{ClientID: "vendor-google-id", ClientSecret: "vendor-google-secret", BaseURL: "http://vendor-google.test"}, ""},
		{"one-click microsoft without a vendor server keeps the connection's", "oauthmstest", with(core.Settings{core.KeyOAuthApp: core.OAuthAppOneClick}), vendorApps,
			appSeen{ClientID: "vendor-ms-id", ClientSecret: "vendor-ms-secret", BaseURL: "http://own.test"}, ""},
		{"one-click without its own app", "oauthgoogletest", core.Settings{core.KeyOAuthApp: core.OAuthAppOneClick}, vendorApps,
			appSeen{ClientID: "vendor-google-id", ClientSecret: "vendor-google-secret", BaseURL: "http://vendor-google.test"}, ""},
		{"own app", "oauthgoogletest", own.Clone(), vendorApps,
			appSeen{ClientID: "own-id", ClientSecret: "own-secret", BaseURL: "http://own.test"}, ""},
		{"another named app is not the vendor's", "oauthgoogletest", with(core.Settings{core.KeyOAuthApp: "other"}), vendorApps,
			appSeen{ClientID: "own-id", ClientSecret: "own-secret", BaseURL: "http://own.test"}, ""},
		{"non-OAuth driver passes through", "plaintest", with(core.Settings{core.KeyOAuthApp: core.OAuthAppOneClick}), vendorApps,
			appSeen{ClientID: "own-id", ClientSecret: "own-secret", BaseURL: "http://own.test"}, ""},
		{"vendor app missing", "oauthmstest", with(core.Settings{core.KeyOAuthApp: core.OAuthAppOneClick}),
			map[string]oauth.VendorApp{core.ProviderGoogle: vendorApps[core.ProviderGoogle]}, appSeen{}, core.EUNAVAILABLE},
		{"vendor app without a secret", "oauthgoogletest", with(core.Settings{core.KeyOAuthApp: core.OAuthAppOneClick}),
			map[string]oauth.VendorApp{core.ProviderGoogle: {ClientID: "vendor-google-id"}}, appSeen{}, core.EUNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &appRecorder{Next: &apptest.OAuthClient{}}
			c := &oauth.AppClient{Next: rec, Name: core.OAuthAppOneClick, Apps: tt.apps}
			conn := &core.Connection{ID: 7, Driver: tt.driver, Settings: tt.settings}
			before := tt.settings.Clone()
			ctx := context.Background()
			consent, errURL := c.AuthCodeURL(conn, "https://site.example/cb", "st", "ver")
			_, errEx := c.Exchange(ctx, conn, "https://site.example/cb", "code", "ver")
			_, errRe := c.Refresh(ctx, conn, "rt")
			if tt.wantErr != "" {
				for i, err := range []error{errURL, errEx, errRe} {
					if core.ErrorCode(err) != tt.wantErr || !strings.Contains(err.Error(), "not configured") {
						t.Fatalf("call %d: err %v, want %s saying the app is not configured", i, err, tt.wantErr)
					}
					if strings.Contains(err.Error(), "own-secret") || strings.Contains(err.Error(), "vendor-google-secret") {
						t.Fatalf("call %d: error shows a secret: %v", i, err)
					}
				}
				if n := len(rec.Seen()); n != 0 {
					t.Fatalf("%d requests made without the vendor's app", n)
				}
				return
			}
			for _, err := range []error{errURL, errEx, errRe} {
				if err != nil {
					t.Fatal(err)
				}
			}
			seen := rec.Seen()
			if len(seen) != 3 {
				t.Fatalf("calls %+v", seen)
			}
			for i, s := range seen {
				if s.ClientID != tt.want.ClientID || s.ClientSecret != tt.want.ClientSecret || s.BaseURL != tt.want.BaseURL || s.ConnectionID != 7 {
					t.Fatalf("%s used %+v, want %+v", []string{"AuthCodeURL", "Exchange", "Refresh"}[i], s, tt.want)
				}
			}
			if !strings.HasPrefix(consent, "https://consent.example/"+tt.want.ClientID+"?") {
				t.Fatalf("consent URL %s", consent)
			}
			if len(conn.Settings) != len(before) || conn.Settings.String("client_id") != before.String("client_id") ||
				conn.Settings.String("client_secret") != before.String("client_secret") {
				t.Fatalf("the caller's connection changed: %v", conn.Settings)
			}
		})
	}
}

func TestAppClientConnectionWithoutSettings(t *testing.T) {
	rec := &appRecorder{Next: &apptest.OAuthClient{}}
	c := &oauth.AppClient{Next: rec, Name: core.OAuthAppOneClick, Apps: vendorApps}
	// A connection without settings has no oauth_app: its own (empty) app.
	conn := &core.Connection{ID: 3, Driver: "oauthgoogletest"}
	if _, err := c.Refresh(context.Background(), conn, "rt"); err != nil {
		t.Fatal(err)
	}
	if s := rec.Seen(); len(s) != 1 || s[0].ClientID != "" {
		t.Fatalf("a connection without oauth_app used %+v", s)
	}
}
