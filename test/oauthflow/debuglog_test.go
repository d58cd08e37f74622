package oauthflow

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/oauthfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestOAuthCredentialsNotInDebugLog runs a whole authorization through
// the built binary with the REQUEST and HTTP debug channels on: the
// provider's redirect to the callback (code and state in its query) and
// the token exchange (code, code_verifier and client secret in its form,
// tokens in its answer) are logged with every credential masked, and so
// is a screen's _wpnonce.
func TestOAuthCredentialsNotInDebugLog(t *testing.T) {
	google := oauthfake.New(core.ProviderGoogle)
	defer google.Close()
	google.AddClient("client-google", "secret-google-5f0e")
	dir := t.TempDir()
	logDir := filepath.Join(dir, "debug")
	svc := servicetest.Start(t, dir, "MAILSVC_USE_LOCAL_OAUTH_REDIRECTS=true", "MAILSVC_ALLOW_CUSTOM_ENDPOINTS=true",
		"MAIL_SVC_DEBUG_LOG_DIR="+logDir, "MAIL_SVC_DEBUG_REQUEST=true", "MAIL_SVC_DEBUG_HTTP=true")
	s := &site{svc: svc, admin: servicetest.Basic("admin", svc.AdminPassword())}

	status, b := s.call(t, "POST", "/connections", fmt.Sprintf(`{"name":"g","driver":"gmail","settings":{"client_id":"client-google","client_secret":"secret-google-5f0e","oauth_base_url":%q}}`, google.URL()))
	var gm connection
	if err := json.Unmarshal(b, &gm); err != nil || status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, b)
	}
	if back := s.authorize(t, google, core.ProviderGoogle, gm.ID); back.Query().Get("oauth") != "success" {
		t.Fatalf("authorization: %s", back)
	}
	auths := google.Authorizations()
	last := auths[len(auths)-1]
	const nonce = "wpnonce-3e9b71"
	status, _, _ = request(t, "GET", svc.Base+"/logs?_wpnonce="+nonce+"&per_page=5", "", func(r *http.Request) {
		s.admin(r)
		r.Header.Set("X-WP-Nonce", nonce)
	})
	if status != http.StatusOK {
		t.Fatalf("GET /logs: %d", status)
	}

	// Every line above is written once its request ends.
	path := filepath.Join(logDir, "mail-svc-logs", "debug.log")
	var text string
	waitFor(t, "the debug lines", 30*time.Second, func() bool {
		raw, _ := os.ReadFile(path)
		text = string(raw)
		return strings.Contains(text, "/oauth/google/callback?") && strings.Contains(text, "grant_type=authorization_code") && strings.Contains(text, "per_page=5")
	})
	for name, secret := range map[string]string{"code": last.Code, "state": last.State, "client secret": "secret-google-5f0e", "_wpnonce": nonce} {
		if secret == "" || strings.Contains(text, secret) {
			t.Errorf("the %s %q is in debug.log", name, secret)
		}
	}
	// The verifier and the tokens the fake issued are not known here:
	// their values must be the mask.
	for _, re := range []string{`code_verifier=([^&"\\]*)`, `\\"access_token\\":\\"([^"\\]*)`, `\\"refresh_token\\":\\"([^"\\]*)`} {
		m := regexp.MustCompile(re).FindAllStringSubmatch(text, -1)
		if len(m) == 0 {
			t.Errorf("no %s in debug.log", re)
		}
		for _, v := range m {
			if v[1] != core.Mask {
				t.Errorf("%s logged as %q", re, v[1])
			}
		}
	}
	if t.Failed() {
		t.Logf("debug.log:\n%s", text)
	}
}
