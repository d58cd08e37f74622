// Package oauthflow tests the OAuth mail providers end to end through the
// built binary: a connection is authorized through the provider's consent
// screen (a local fake of Google, Microsoft and Zoho's authorization
// servers, reached by the real x/oauth2 client), mail is delivered
// through each provider's API fake with its attachment intact, tokens are
// refreshed before they expire and rotated, and a revoked grant moves the
// connection to needs_authorization with one alert.
package oauthflow

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify/webhook"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/gmailfake"
	"github.com/mailsvc/mailsvc/test/fakes/graphfake"
	"github.com/mailsvc/mailsvc/test/fakes/oauthfake"
	"github.com/mailsvc/mailsvc/test/fakes/webhooksink"
	"github.com/mailsvc/mailsvc/test/fakes/zohomailfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// request makes one call and returns the status, the Location header and
// the body.
func request(t *testing.T, method, u, body string, auth func(*http.Request)) (int, string, []byte) {
	t.Helper()
	contentType := ""
	if body != "" {
		contentType = "application/json"
	}
	r := servicetest.Hop(t, method, u, contentType, body, auth)
	return r.Status, r.Header.Get("Location"), r.Body
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	servicetest.Poll(t, what, timeout, 50*time.Millisecond, cond)
}

// connection is the part of a connection answer the tests read.
type connection struct {
	ID          int64          `json:"id"`
	OAuthStatus string         `json:"oauth_status"`
	LastError   string         `json:"last_error"`
	Settings    map[string]any `json:"settings"`
}

// site is one running service with an admin login.
type site struct {
	svc   *servicetest.Service
	admin func(*http.Request)
}

func (s *site) call(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	status, _, b := request(t, method, s.svc.Base+path, body, s.admin)
	return status, b
}

func (s *site) connection(t *testing.T, id int64) connection {
	t.Helper()
	status, b := s.call(t, "GET", fmt.Sprintf("/connections/%d", id), "")
	var c connection
	if err := json.Unmarshal(b, &c); err != nil || status != 200 {
		t.Fatalf("GET connection %d: %d %s", id, status, b)
	}
	return c
}

// authorize runs the whole manual-app flow for a connection: authorize →
// the provider's consent screen → the callback, and returns where the
// callback sent the browser.
func (s *site) authorize(t *testing.T, fake *oauthfake.Server, provider string, id int64) *url.URL {
	t.Helper()
	status, loc, b := request(t, "GET", fmt.Sprintf("%s/oauth/%s/authorize?connection_id=%d", s.svc.Base, provider, id), "", s.admin)
	if status != http.StatusFound || !strings.HasPrefix(loc, fake.URL()) {
		t.Fatalf("authorize: %d Location %q %s", status, loc, b)
	}
	consent, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	if q := consent.Query(); q.Get("state") == "" || q.Get("client_id") == "" || q.Get("redirect_uri") == "" {
		t.Fatalf("consent URL lacks client_id, state or redirect_uri: %s", loc)
	}
	if provider != core.ProviderZoho && consent.Query().Get("code_challenge_method") != "S256" {
		t.Fatalf("no PKCE S256 challenge for %s: %s", provider, loc)
	}
	back, err := fake.Consent(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(back.String(), s.svc.Base+"/oauth/"+provider+"/callback") {
		t.Fatalf("the provider returns to %s, not to this site's callback", back)
	}
	// The browser follows the provider's redirect: no credentials, the
	// state is what authenticates it.
	status, loc, b = request(t, "GET", back.String(), "", nil)
	if status != http.StatusFound {
		t.Fatalf("callback: %d %s", status, b)
	}
	admin, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return admin
}

// message is an RFC 5322 message with a binary attachment, for sendmail.
func message(to, subject string, attachment []byte) string {
	b64 := base64.StdEncoding.EncodeToString(attachment)
	var lines []string
	for len(b64) > 76 {
		lines = append(lines, b64[:76])
		b64 = b64[76:]
	}
	lines = append(lines, b64)
	return "From: Site <site@example.com>\r\n" +
		"To: " + to + "\r\n" +
		"Subject: " + subject + "\r\n" +
		"MIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n" +
		"--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHello through OAuth.\r\n" +
		"--b1\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"report.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		strings.Join(lines, "\r\n") + "\r\n--b1--\r\n"
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// provider is one OAuth provider with its fakes.
type provider struct {
	name     string // core.Provider*
	driver   string
	auth     *oauthfake.Server
	settings string // the connection's settings JSON without the app's keys
	// delivered returns the attachments of the messages the API fake
	// accepted with the subject.
	delivered func(subject string) [][]byte
}

func TestOAuthProvidersEndToEnd(t *testing.T) {
	google, microsoft, zoho := oauthfake.New(core.ProviderGoogle), oauthfake.New(core.ProviderMicrosoft), oauthfake.New(core.ProviderZoho)
	for _, f := range []*oauthfake.Server{google, microsoft, zoho} {
		defer f.Close()
		f.AddClient("client-"+f.Provider(), "secret-"+f.Provider())
		// Access tokens live 30 s: less than the minute a send needs, so
		// every send refreshes first.
		f.SetExpiresIn(30)
	}
	gmail := gmailfake.New(google.Valid)
	defer gmail.Close()
	graph := graphfake.New(microsoft.Valid)
	defer graph.Close()
	zohoMail := zohomailfake.New(zoho.Valid, zohomailfake.Account{ID: "88000001", Email: "site@zoho.example", DisplayName: "Site"})
	defer zohoMail.Close()
	alerts := webhooksink.New()
	defer alerts.Close()

	providers := []provider{
		{core.ProviderGoogle, "gmail", google,
			fmt.Sprintf(`"base_url":%q,"from_email":"site@gmail.example"`, gmail.URL),
			func(subject string) [][]byte {
				var out [][]byte
				for _, m := range gmail.Messages() {
					if m.Subject == subject {
						for _, a := range m.Attachments {
							out = append(out, a.Data)
						}
					}
				}
				return out
			}},
		{core.ProviderMicrosoft, "outlook", microsoft,
			fmt.Sprintf(`"base_url":%q,"from_email":"site@outlook.example"`, graph.BaseURL()),
			func(subject string) [][]byte {
				var out [][]byte
				for _, m := range graph.Messages() {
					if m.Subject == subject {
						for _, a := range m.Attachments {
							out = append(out, a.Data)
						}
					}
				}
				return out
			}},
		{core.ProviderZoho, "zoho", zoho,
			fmt.Sprintf(`"base_url":%q,"from_email":"site@zoho.example"`, zohoMail.URL),
			func(subject string) [][]byte {
				var out [][]byte
				for _, m := range zohoMail.Messages() {
					if m.Subject == subject {
						for _, a := range m.Attachments {
							out = append(out, a.Data)
						}
					}
				}
				return out
			}},
	}

	dir := t.TempDir()
	svc := servicetest.Start(t, dir, "MAILSVC_USE_LOCAL_OAUTH_REDIRECTS=true", "MAILSVC_ALLOW_PRIVATE_WEBHOOKS=true", servicetest.AllowCustomEndpoints)
	s := &site{svc: svc, admin: servicetest.Basic("admin", svc.AdminPassword())}

	// One signed webhook channel hears OAuth failures.
	status, b := s.call(t, "POST", "/notifications", fmt.Sprintf(`{"name":"ops","type":"webhook","events":["oauth_refresh_failed"],"settings":{"url":%q,"secret":"whsec-oauth"}}`, alerts.URL))
	if status != http.StatusCreated {
		t.Fatalf("create the webhook channel: %d %s", status, b)
	}

	attachment := randomBytes(t, 20000)
	ids := map[string]int64{}
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"name":%q,"driver":%q,"settings":{"client_id":"client-%s","client_secret":"secret-%s","oauth_base_url":%q,%s}}`,
				p.name, p.driver, p.name, p.name, p.auth.URL(), p.settings)
			status, b := s.call(t, "POST", "/connections", body)
			var c connection
			if err := json.Unmarshal(b, &c); err != nil || status != http.StatusCreated {
				t.Fatalf("create %s connection: %d %s", p.driver, status, b)
			}
			if c.OAuthStatus != core.OAuthPending {
				t.Fatalf("a new connection's oauth_status = %q, want pending", c.OAuthStatus)
			}
			ids[p.name] = c.ID

			admin := s.authorize(t, p.auth, p.name, c.ID)
			if q := admin.Query(); q.Get("oauth") != "success" || q.Get("connection_id") != fmt.Sprint(c.ID) {
				t.Fatalf("the callback returned to %s, want a success flag for connection %d", admin, c.ID)
			}
			got := s.connection(t, c.ID)
			if got.OAuthStatus != core.OAuthAuthorized || got.Settings["access_token"] != core.Mask || got.Settings["refresh_token"] != core.Mask {
				t.Fatalf("after the callback: %+v", got)
			}
			if p.name == core.ProviderZoho && got.Settings["account_id"] != "88000001" {
				t.Fatalf("zoho account id not stored on authorization: %v", got.Settings["account_id"])
			}

			// Deliver a message with an attachment through this connection.
			if status, b := s.call(t, "PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d}`, c.ID)); status != 200 {
				t.Fatalf("PUT /settings: %d %s", status, b)
			}
			refreshes := p.auth.Refreshes()
			subject := "Report via " + p.name
			if r := svc.Run(message("Ann <ann@example.com>", subject, attachment), "sendmail", "-t"); r.Code != 0 {
				t.Fatalf("sendmail: %d %s", r.Code, r.Stderr)
			}
			waitFor(t, p.name+" delivery", 30*time.Second, func() bool { return len(p.delivered(subject)) > 0 })
			if atts := p.delivered(subject); len(atts) != 1 || !bytes.Equal(atts[0], attachment) {
				t.Fatalf("%s delivered %d attachments; the first intact: %v", p.name, len(atts), len(atts) > 0 && bytes.Equal(atts[0], attachment))
			}
			// The 30-second token was refreshed before the send.
			if p.auth.Refreshes() <= refreshes {
				t.Fatalf("no refresh before sending with a token about to expire")
			}
			status, b = s.call(t, "GET", fmt.Sprintf("/connections/%d/oauth-refresh-history", c.ID), "")
			var history []core.RefreshAttempt
			if err := json.Unmarshal(b, &history); err != nil || status != 200 || len(history) == 0 ||
				history[0].Outcome != core.RefreshSucceeded || history[0].Trigger != core.RefreshBeforeSend || history[0].ExpiresAt == nil {
				t.Fatalf("refresh history: %d %s", status, b)
			}
		})
	}
	if t.Failed() {
		return
	}

	// Microsoft rotates refresh tokens and the fake kills the old one at
	// once: two refreshes in a row succeed only if each new refresh token
	// was stored.
	ms := ids[core.ProviderMicrosoft]
	for i := range 2 {
		status, b := s.call(t, "POST", fmt.Sprintf("/connections/%d/oauth-refresh-now", ms), "")
		var res struct {
			Success bool   `json:"success"`
			Error   string `json:"error"`
		}
		if err := json.Unmarshal(b, &res); err != nil || status != 200 || !res.Success {
			t.Fatalf("refresh-now %d on the rotating provider: %d %s", i+1, status, b)
		}
	}

	// The user withdraws consent: the next refresh is invalid_grant.
	microsoft.RevokeAll()
	status, b = s.call(t, "POST", fmt.Sprintf("/connections/%d/oauth-refresh-now", ms), "")
	if status != 200 || !strings.Contains(string(b), `"success":false`) {
		t.Fatalf("refresh-now after revocation: %d %s", status, b)
	}
	if c := s.connection(t, ms); c.OAuthStatus != core.OAuthNeedsAuthorization || c.LastError == "" {
		t.Fatalf("after invalid_grant: %+v", c)
	}
	reqs, err := alerts.Await(1, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var alert core.Alert
	if err := json.Unmarshal(reqs[0].Body, &alert); err != nil || alert.Event != core.EventOAuthRefreshFailed || alert.ConnectionID != ms {
		t.Fatalf("alert %s (%v)", reqs[0].Body, err)
	}
	h := reqs[0].Header
	if !webhook.Verify("whsec-oauth", h.Get("X-Mailsvc-Timestamp"), string(reqs[0].Body), h.Get("X-Mailsvc-Signature")) {
		t.Fatalf("the alert's signature does not verify: %v", h)
	}
	// A connection that needs authorization is not used: a refresh is not
	// even tried, and no second alert comes.
	refreshes := microsoft.Refreshes()
	status, b = s.call(t, "POST", fmt.Sprintf("/connections/%d/oauth-refresh-now", ms), "")
	if status != 200 || !strings.Contains(string(b), `"success":false`) {
		t.Fatalf("second refresh-now: %d %s", status, b)
	}
	time.Sleep(time.Second) // give a wrong second alert the time to arrive
	if n := len(alerts.Requests()); n != 1 || microsoft.Refreshes() != refreshes {
		t.Fatalf("%d alerts and %d more refreshes after the connection needs authorization, want 1 and 0", n, microsoft.Refreshes()-refreshes)
	}

	// Nothing in any answer shows a token or a client secret.
	status, b = s.call(t, "GET", "/connections", "")
	if status != 200 || strings.Contains(string(b), "secret-") {
		t.Fatalf("GET /connections shows a secret: %s", b)
	}
	for _, tok := range append(gmail.Tokens(), graph.Tokens()...) {
		if strings.Contains(string(b), tok) || strings.Contains(svc.Stderr.String(), tok) {
			t.Fatal("an access token appears in an answer or the log")
		}
	}
}

// TestOAuthBadInput: wrong providers, connections and states are refused
// with the spec's error shape, and a refused callback asks the provider for
// nothing and stores nothing.
func TestOAuthBadInput(t *testing.T) {
	google := oauthfake.New(core.ProviderGoogle)
	defer google.Close()
	google.AddClient("client-google", "secret-google")
	dir := t.TempDir()
	svc := servicetest.Start(t, dir, "MAILSVC_USE_LOCAL_OAUTH_REDIRECTS=true", servicetest.AllowCustomEndpoints)
	s := &site{svc: svc, admin: servicetest.Basic("admin", svc.AdminPassword())}

	status, b := s.call(t, "POST", "/connections", fmt.Sprintf(`{"name":"g","driver":"gmail","settings":{"client_id":"client-google","client_secret":"secret-google","oauth_base_url":%q}}`, google.URL()))
	var gm connection
	if err := json.Unmarshal(b, &gm); err != nil || status != 201 {
		t.Fatalf("create: %d %s", status, b)
	}
	status, b = s.call(t, "POST", "/connections", `{"name":"s","driver":"smtp","settings":{"host":"127.0.0.1","port":2525,"encryption":"none","auth":false}}`)
	var smtp connection
	if err := json.Unmarshal(b, &smtp); err != nil || status != 201 {
		t.Fatalf("create: %d %s", status, b)
	}

	cases := []struct {
		name, path string
		auth       bool
		status     int
		code       string
	}{
		{"unknown provider", "/oauth/yahoo/authorize?connection_id=1", true, 404, "rest_no_route"},
		{"missing connection_id", "/oauth/google/authorize", true, 422, "validation_error"},
		{"connection_id not a number", "/oauth/google/authorize?connection_id=abc", true, 422, "validation_error"},
		{"unknown connection", "/oauth/google/authorize?connection_id=9999", true, 404, "not_found"},
		{"another driver's connection", fmt.Sprintf("/oauth/google/authorize?connection_id=%d", smtp.ID), true, 422, "validation_error"},
		{"another provider's connection", fmt.Sprintf("/oauth/microsoft/authorize?connection_id=%d", gm.ID), true, 422, "validation_error"},
		{"not logged in", fmt.Sprintf("/oauth/google/authorize?connection_id=%d", gm.ID), false, 401, "rest_not_logged_in"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			auth := s.admin
			if !tc.auth {
				auth = nil
			}
			status, _, b := request(t, "GET", svc.Base+tc.path, "", auth)
			var e struct {
				Code string `json:"code"`
				Data struct {
					Status int `json:"status"`
				} `json:"data"`
			}
			_ = json.Unmarshal(b, &e)
			if status != tc.status || e.Code != tc.code || e.Data.Status != tc.status {
				t.Fatalf("%s: %d %s, want %d %s", tc.path, status, b, tc.status, tc.code)
			}
		})
	}

	// A forged state, and a real one replayed: rejected before any token
	// request, nothing stored.
	callback := func(query string) url.Values {
		status, loc, b := request(t, "GET", svc.Base+"/oauth/google/callback?"+query, "", nil)
		u, err := url.Parse(loc)
		if status != http.StatusFound || err != nil {
			t.Fatalf("callback %s: %d %s", query, status, b)
		}
		return u.Query()
	}
	if q := callback("code=stolen&state=forged"); q.Get("oauth") != "error" || google.Exchanges() != 0 {
		t.Fatalf("forged state: flags %v, %d token requests", q, google.Exchanges())
	}
	first := s.authorize(t, google, core.ProviderGoogle, gm.ID)
	if first.Query().Get("oauth") != "success" || google.Exchanges() != 1 {
		t.Fatalf("a real authorization: %s, %d exchanges", first, google.Exchanges())
	}
	auths := google.Authorizations()
	last := auths[len(auths)-1]
	if q := callback("code=" + url.QueryEscape(last.Code) + "&state=" + url.QueryEscape(last.State)); q.Get("oauth") != "error" || google.Exchanges() != 1 {
		t.Fatalf("replayed state: flags %v, %d exchanges", q, google.Exchanges())
	}

	// Alert channels: an unknown type and a URL that is not http(s) are
	// refused field by field, and nothing is stored.
	for _, body := range []string{
		`{"name":"x","type":"pager","settings":{}}`,
		`{"name":"x","type":"webhook","settings":{"url":"ftp://example.com/hook"}}`,
		`{"name":"x","type":"slack","settings":{"webhook_url":"http://127.0.0.1:9/hook"}}`,
		`{"name":"x","type":"webhook","events":["everything"],"settings":{"url":"https://example.com/hook"}}`,
		`{"name":`,
	} {
		status, b := s.call(t, "POST", "/notifications", body)
		if status != 422 && status != 400 {
			t.Fatalf("POST /notifications %s: %d %s", body, status, b)
		}
	}
	if status, b := s.call(t, "GET", "/notifications", ""); status != 200 || strings.TrimSpace(string(b)) != "[]" {
		t.Fatalf("channels stored after refusals: %d %s", status, b)
	}
}

// TestOutlookRefreshTokenFromLegacyConstant: a refresh token obtained
// elsewhere and pinned with the legacy MAILSVC_MICROSOFT_TOKEN makes an
// outlook connection usable without the consent flow; it is never shown.
func TestOutlookRefreshTokenFromLegacyConstant(t *testing.T) {
	microsoft := oauthfake.New(core.ProviderMicrosoft)
	defer microsoft.Close()
	microsoft.AddClient("client-ms", "secret-ms")
	microsoft.SetRotation(false) // a pinned refresh token cannot follow a rotation
	_, refresh := microsoft.Grant("client-ms", "offline_access https://graph.microsoft.com/Mail.Send")
	graph := graphfake.New(microsoft.Valid)
	defer graph.Close()

	svc := servicetest.Start(t, t.TempDir(), "MAILSVC_MICROSOFT_TOKEN="+refresh, servicetest.AllowCustomEndpoints)
	s := &site{svc: svc, admin: servicetest.Basic("admin", svc.AdminPassword())}
	status, b := s.call(t, "POST", "/connections", fmt.Sprintf(`{"name":"m365","driver":"outlook","settings":{"client_id":"client-ms","client_secret":"secret-ms","oauth_base_url":%q,"base_url":%q,"from_email":"site@outlook.example"}}`,
		microsoft.URL(), graph.BaseURL()))
	var c struct {
		connection
		Pinned []string `json:"pinned"`
	}
	if err := json.Unmarshal(b, &c); err != nil || status != 201 {
		t.Fatalf("create: %d %s", status, b)
	}
	if c.OAuthStatus != core.OAuthAuthorized || len(c.Pinned) != 1 || c.Pinned[0] != "refresh_token" || c.Settings["refresh_token"] != core.Mask {
		t.Fatalf("a connection with a pinned refresh token: %s", b)
	}
	if status, b := s.call(t, "PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d}`, c.ID)); status != 200 {
		t.Fatalf("PUT /settings: %d %s", status, b)
	}
	if r := svc.Run(message("ann@example.com", "pinned", []byte("pdf")), "sendmail", "-t"); r.Code != 0 {
		t.Fatalf("sendmail: %d %s", r.Code, r.Stderr)
	}
	waitFor(t, "delivery through Graph", 30*time.Second, func() bool { return len(graph.Messages()) == 1 })
	if microsoft.Refreshes() != 1 {
		t.Fatalf("%d refreshes, want 1 (the pinned refresh token for the first access token)", microsoft.Refreshes())
	}
	if status, b := s.call(t, "GET", "/connections", ""); status != 200 || strings.Contains(string(b), refresh) {
		t.Fatalf("the pinned refresh token shows in GET /connections")
	}
}

// TestOAuthTokenStoredOutOfBand: POST /connections/{id}/oauth-token
// stores a token obtained elsewhere, checked by the driver (Zoho looks up
// the account), and mail flows with it; bad bodies change nothing.
func TestOAuthTokenStoredOutOfBand(t *testing.T) {
	zoho := oauthfake.New(core.ProviderZoho)
	defer zoho.Close()
	zoho.AddClient("client-zoho", "secret-zoho")
	access, refresh := zoho.Grant("client-zoho", "ZohoMail.messages.CREATE,ZohoMail.accounts.READ")
	mail := zohomailfake.New(zoho.Valid, zohomailfake.Account{ID: "77000001", Email: "site@zoho.example"})
	defer mail.Close()

	svc := servicetest.Start(t, t.TempDir(), servicetest.AllowCustomEndpoints)
	s := &site{svc: svc, admin: servicetest.Basic("admin", svc.AdminPassword())}
	status, b := s.call(t, "POST", "/connections", fmt.Sprintf(`{"name":"z","driver":"zoho","settings":{"client_id":"client-zoho","client_secret":"secret-zoho","oauth_base_url":%q,"base_url":%q,"from_email":"site@zoho.example"}}`, zoho.URL(), mail.URL))
	var c connection
	if err := json.Unmarshal(b, &c); err != nil || status != 201 {
		t.Fatalf("create: %d %s", status, b)
	}
	for _, body := range []string{`{}`, `{"refresh_token":42}`, `{"refresh_token":`, `{"access_token":"x","expires_in":-5}`} {
		status, b := s.call(t, "POST", fmt.Sprintf("/connections/%d/oauth-token", c.ID), body)
		if status != 400 && status != 422 {
			t.Fatalf("oauth-token %s: %d %s", body, status, b)
		}
	}
	if got := s.connection(t, c.ID); got.OAuthStatus != core.OAuthPending || got.Settings["refresh_token"] != nil && got.Settings["refresh_token"] != "" {
		t.Fatalf("refused bodies changed the connection: %+v", got)
	}

	status, b = s.call(t, "POST", fmt.Sprintf("/connections/%d/oauth-token", c.ID), fmt.Sprintf(`{"access_token":%q,"refresh_token":%q,"expires_in":3600}`, access, refresh))
	if status != 200 || strings.Contains(string(b), refresh) || strings.Contains(string(b), access) {
		t.Fatalf("oauth-token: %d %s", status, b)
	}
	got := s.connection(t, c.ID)
	if got.OAuthStatus != core.OAuthAuthorized || got.Settings["account_id"] != "77000001" {
		t.Fatalf("after oauth-token: %+v", got)
	}
	if status, b := s.call(t, "PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d}`, c.ID)); status != 200 {
		t.Fatalf("PUT /settings: %d %s", status, b)
	}
	if r := svc.Run(message("ann@example.com", "out of band", []byte("x")), "sendmail", "-t"); r.Code != 0 {
		t.Fatalf("sendmail: %d %s", r.Code, r.Stderr)
	}
	waitFor(t, "delivery through Zoho Mail", 30*time.Second, func() bool { return len(mail.Messages()) == 1 })
	if zoho.Refreshes() != 0 {
		t.Fatalf("%d refreshes with a fresh pasted access token, want 0", zoho.Refreshes())
	}

	// A driver without OAuth has no token to store.
	status, b = s.call(t, "POST", "/connections", `{"name":"s","driver":"smtp","settings":{"host":"127.0.0.1","port":2525,"encryption":"none","auth":false}}`)
	var smtp connection
	if err := json.Unmarshal(b, &smtp); err != nil || status != 201 {
		t.Fatalf("create: %d %s", status, b)
	}
	if status, b := s.call(t, "POST", fmt.Sprintf("/connections/%d/oauth-token", smtp.ID), `{"refresh_token":"x"}`); status != 422 {
		t.Fatalf("oauth-token on smtp: %d %s", status, b)
	}
	if status, b := s.call(t, "POST", "/connections/9999/oauth-token", `{"refresh_token":"x"}`); status != 404 {
		t.Fatalf("oauth-token on an unknown connection: %d %s", status, b)
	}
}
