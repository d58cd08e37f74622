package takeover

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestOAuthRedirectURIFromWordPress: beside a real WordPress site, the
// redirect URI sent to each provider follows the spec's precedence — the
// site's mail_svc_*_oauth_redirect_uri filter (published by the bridge)
// over the per-provider constant, the constant over the relay, and the
// relay by default.
func TestOAuthRedirectURIFromWordPress(t *testing.T) {
	site, dir := installTakeoverSite(t, "wpr_")
	filter := `<?php
add_filter( 'mail_svc_google_oauth_redirect_uri', function () { return 'https://relay.example.com/google-from-filter'; } );
`
	if err := os.WriteFile(filepath.Join(site.ContentDir, "mu-plugins", "oauth-redirects.php"), []byte(filter), 0o644); err != nil {
		t.Fatal(err)
	}
	site.PHP(t, `echo "a page load runs the bridge";`)

	env := environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1",
		"MAILSVC_GOOGLE_OAUTH_REDIRECT_URI=https://constant.example.com/google",
		"MAILSVC_ZOHO_OAUTH_REDIRECT_URI=https://constant.example.com/zoho")
	appPW := site.CreateApplicationPassword(t, site.AdminLogin, "oauth redirect test")
	svc := servicetest.StartEnv(t, dir, env)

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	cases := []struct{ provider, driver, want string }{
		{"google", "gmail", "https://relay.example.com/google-from-filter"}, // the filter over the constant
		{"zoho", "zoho", "https://constant.example.com/zoho"},               // the constant over the relay
		{"microsoft", "outlook", "https://oauth.mailsvc.dev/callback"},      // the relay by default
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			status, body := call(t, "POST", svc.Base+"/connections", fmt.Sprintf(
				`{"name":%q,"driver":%q,"settings":{"client_id":"cid","client_secret":"csecret","from_email":"site@example.com"}}`, tc.provider, tc.driver),
				site.AdminLogin, appPW)
			var conn struct{ ID int64 }
			if err := json.Unmarshal(body, &conn); err != nil || status != 201 {
				t.Fatalf("create connection: %d %s", status, body)
			}
			req, _ := http.NewRequest("GET", fmt.Sprintf("%s/oauth/%s/authorize?connection_id=%d", svc.Base, tc.provider, conn.ID), nil)
			req.SetBasicAuth(site.AdminLogin, appPW)
			req.Header.Set("X-Forwarded-Proto", "https")
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			loc, err := url.Parse(resp.Header.Get("Location"))
			if resp.StatusCode != http.StatusFound || err != nil {
				t.Fatalf("authorize: %d %v", resp.StatusCode, err)
			}
			if got := loc.Query().Get("redirect_uri"); got != tc.want {
				t.Fatalf("redirect_uri = %q, want %q", got, tc.want)
			}
		})
	}
}
