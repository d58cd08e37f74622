package protest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/gmailfake"
	"github.com/mailsvc/mailsvc/test/fakes/oauthfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// The vendor's apps of one-click OAuth, registered in the fakes.
const (
	vendorGoogleID     = "vendor-google-client"
	vendorGoogleSecret = "vendor-google-secret-0123456789"
	vendorMSID         = "vendor-ms-client"
	vendorMSSecret     = "vendor-ms-secret-0123456789"
)

// hop makes one request without following a redirect and returns the
// status, the Location header and the body.
func hop(t *testing.T, method, u, contentType, body string, auth func(*http.Request)) (int, string, []byte) {
	t.Helper()
	r := servicetest.Hop(t, method, u, contentType, body, auth)
	return r.Status, r.Header.Get("Location"), r.Body
}

// adminFlags returns the query of a callback's redirect to the admin page.
func adminFlags(t *testing.T, status int, loc string, body []byte) url.Values {
	t.Helper()
	if status != http.StatusFound || !strings.HasPrefix(loc, "https://shop.example.com/admin/?") {
		t.Fatalf("callback answered %d to %q (%s), want 302 to the admin page", status, loc, body)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

type oneClickConn struct {
	ID          int64          `json:"id"`
	Name        string         `json:"name"`
	Driver      string         `json:"driver"`
	OAuthStatus string         `json:"oauth_status"`
	Settings    map[string]any `json:"settings"`
}

func TestOneClickOAuthThroughTheBinary(t *testing.T) {
	google, microsoft := oauthfake.New(core.ProviderGoogle), oauthfake.New(core.ProviderMicrosoft)
	defer google.Close()
	defer microsoft.Close()
	google.AddClient(vendorGoogleID, vendorGoogleSecret)
	microsoft.AddClient(vendorMSID, vendorMSSecret)
	gmail := gmailfake.New(google.Valid)
	defer gmail.Close()

	dir := t.TempDir()
	v := keygen(t, dir)
	next := time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02")
	svc, call := start(t, dir,
		"MAILSVC_PUBLIC_URL=https://shop.example.com", "MAILSVC_LICENSE_PUBLIC_KEYS="+v.public,
		"MAILSVC_USE_LOCAL_OAUTH_REDIRECTS=true",
		"MAILSVC_ONECLICK_GOOGLE_CLIENT_ID="+vendorGoogleID, "MAILSVC_ONECLICK_GOOGLE_CLIENT_SECRET="+vendorGoogleSecret,
		"MAILSVC_ONECLICK_GOOGLE_OAUTH_BASE_URL="+google.URL(),
		"MAILSVC_ONECLICK_MICROSOFT_CLIENT_ID="+vendorMSID, "MAILSVC_ONECLICK_MICROSOFT_CLIENT_SECRET="+vendorMSSecret,
		"MAILSVC_ONECLICK_MICROSOFT_OAUTH_BASE_URL="+microsoft.URL(),
	)
	admin := servicetest.Basic("admin", svc.AdminPassword())
	activate := func(features string) {
		t.Helper()
		if r := call("POST", "/pro/license/activate", keyBody(v.issue(t, dir, "https://shop.example.com", features, next))); r.Status != 200 {
			t.Fatalf("activate: %d %s", r.Status, r.Body)
		}
	}
	authorize := func(provider string) (int, string, []byte) {
		t.Helper()
		return hop(t, "GET", svc.Base+"/pro/oauth/"+provider+"/one-click/authorize", "", "", admin)
	}
	noSecrets := func(what string, b []byte) {
		t.Helper()
		for _, s := range []string{vendorGoogleSecret, vendorMSSecret} {
			if strings.Contains(string(b), s) {
				t.Fatalf("%s shows the vendor's client secret: %s", what, b)
			}
		}
	}

	// A licence without the feature: 403 naming it, nothing reaches the
	// provider.
	activate("tools.domain_check")
	for _, p := range []string{core.ProviderGoogle, core.ProviderMicrosoft} {
		status, loc, b := authorize(p)
		if status != http.StatusForbidden || !strings.Contains(string(b), `"code":"rest_forbidden"`) || !strings.Contains(string(b), "connections.oneclick.save") || loc != "" {
			t.Fatalf("%s authorize without the feature: %d %q %s", p, status, loc, b)
		}
	}
	if google.Requests()+microsoft.Requests() != 0 {
		t.Fatal("a refused authorization reached a provider")
	}

	activate("connections.oneclick.save")
	ids := map[string]int64{}
	for _, tt := range []struct {
		provider, driver, name, clientID string
		fake                             *oauthfake.Server
		consentPath                      string
	}{
		{core.ProviderGoogle, "gmail", "Gmail (one-click)", vendorGoogleID, google, "/o/oauth2/v2/auth"},
		{core.ProviderMicrosoft, "outlook", "Outlook (one-click)", vendorMSID, microsoft, "/common/oauth2/v2.0/authorize"},
	} {
		t.Run(tt.provider, func(t *testing.T) {
			callback := svc.Base + "/pro/oauth/" + tt.provider + "/one-click/callback"
			status, loc, b := authorize(tt.provider)
			if status != http.StatusFound || !strings.HasPrefix(loc, tt.fake.URL()+tt.consentPath+"?") {
				t.Fatalf("authorize: %d to %q %s", status, loc, b)
			}
			consent, _ := url.Parse(loc)
			q := consent.Query()
			if q.Get("client_id") != tt.clientID || q.Get("code_challenge_method") != "S256" ||
				q.Get("redirect_uri") != "https://shop.example.com/wp-json/mailsvc/v1/pro/oauth/"+tt.provider+"/one-click/callback" {
				t.Fatalf("consent URL %s", loc)
			}
			if formPost := q.Get("response_mode") == "form_post"; formPost != (tt.provider == core.ProviderMicrosoft) {
				t.Fatalf("response_mode %q for %s", q.Get("response_mode"), tt.provider)
			}
			back, err := tt.fake.Consent(context.Background(), loc)
			if err != nil {
				t.Fatal(err)
			}
			answer := back.Query()
			if answer.Get("code") == "" || answer.Get("state") != q.Get("state") {
				t.Fatalf("the provider answered %s", back)
			}
			exchanges := tt.fake.Exchanges()

			// The manual flow's callback does not know a one-click state.
			status, loc, b = hop(t, "GET", svc.Base+"/oauth/"+tt.provider+"/callback?"+back.RawQuery, "", "", nil)
			if f := adminFlags(t, status, loc, b); f.Get("oauth_error") != "invalid_state" || tt.fake.Exchanges() != exchanges {
				t.Fatalf("manual callback with a one-click state: %v, %d exchanges", f, tt.fake.Exchanges()-exchanges)
			}

			// The browser comes back: Google with a GET, Microsoft with its
			// form_post.
			deliver := func() url.Values {
				t.Helper()
				if tt.provider == core.ProviderMicrosoft {
					form := url.Values{"code": {answer.Get("code")}, "state": {answer.Get("state")}}
					status, loc, b := hop(t, "POST", callback, "application/x-www-form-urlencoded", form.Encode(), nil)
					return adminFlags(t, status, loc, b)
				}
				status, loc, b := hop(t, "GET", callback+"?"+back.RawQuery, "", "", nil)
				return adminFlags(t, status, loc, b)
			}
			f := deliver()
			if f.Get("oauth") != "success" || f.Get("provider") != tt.provider || f.Get("connection_id") == "" {
				t.Fatalf("callback flags %v", f)
			}
			if tt.fake.Exchanges() != exchanges+1 {
				t.Fatalf("%d code exchanges, want 1", tt.fake.Exchanges()-exchanges)
			}
			var id int64
			fmt.Sscan(f.Get("connection_id"), &id)
			ids[tt.provider] = id

			// Replaying the callback is refused without a token request.
			f = deliver()
			if f.Get("oauth") != "error" || f.Get("oauth_error") != "invalid_state" || tt.fake.Exchanges() != exchanges+1 {
				t.Fatalf("replay: flags %v, %d exchanges", f, tt.fake.Exchanges()-exchanges)
			}

			r := call("GET", fmt.Sprintf("/connections/%d", id), "")
			var c oneClickConn
			r.JSON(t, &c)
			noSecrets("GET /connections/{id}", r.Body)
			if r.Status != 200 || c.Name != tt.name || c.Driver != tt.driver || c.OAuthStatus != core.OAuthAuthorized ||
				c.Settings["access_token"] != core.Mask || c.Settings["refresh_token"] != core.Mask ||
				c.Settings["oauth_app"] != core.OAuthAppOneClick || (c.Settings["client_id"] != nil && c.Settings["client_id"] != "") {
				t.Fatalf("the new connection: %d %s", r.Status, r.Body)
			}

			// A refresh uses the vendor's app: the fake's refresh tokens
			// are bound to the client they were issued to, and the
			// connection has no client of its own.
			refreshes := tt.fake.Refreshes()
			r = call("POST", fmt.Sprintf("/connections/%d/oauth-refresh-now", id), "")
			if r.Status != 200 || !strings.Contains(string(r.Body), `"success":true`) || tt.fake.Refreshes() != refreshes+1 {
				t.Fatalf("refresh now: %d %s, %d refreshes", r.Status, r.Body, tt.fake.Refreshes()-refreshes)
			}
			noSecrets("refresh now", r.Body)
		})
	}
	if t.Failed() {
		return
	}

	r := call("GET", "/connections", "")
	noSecrets("GET /connections", r.Body)
	for p, id := range ids {
		if !strings.Contains(string(r.Body), fmt.Sprintf(`"id":%d,`, id)) {
			t.Fatalf("the %s connection %d is not listed: %s", p, id, r.Body)
		}
	}

	// A message through the Gmail one-click connection reaches Gmail. Its
	// API base URL is a destination: the tokens do not follow it, and the
	// connection is authorized again for the new one.
	g := ids[core.ProviderGoogle]
	r = call("PUT", fmt.Sprintf("/connections/%d", g), fmt.Sprintf(`{"settings":{"base_url":%q}}`, gmail.URL))
	var moved oneClickConn
	r.JSON(t, &moved)
	if r.Status != 200 || moved.OAuthStatus != core.OAuthNeedsAuthorization || moved.Settings["refresh_token"] != nil {
		t.Fatalf("set the Gmail fake's URL: %d %s, want the tokens dropped", r.Status, r.Body)
	}
	status, loc, b := hop(t, "GET", fmt.Sprintf("%s/pro/oauth/google/one-click/authorize?connection_id=%d", svc.Base, g), "", "", admin)
	if status != http.StatusFound {
		t.Fatalf("authorize again: %d %s", status, b)
	}
	back, err := google.Consent(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	status, loc, b = hop(t, "GET", svc.Base+"/pro/oauth/google/one-click/callback?"+back.RawQuery, "", "", nil)
	if f := adminFlags(t, status, loc, b); f.Get("oauth") != "success" || f.Get("connection_id") != fmt.Sprint(g) {
		t.Fatalf("authorize again: flags %v", f)
	}
	if r := call("PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d}`, g)); r.Status != 200 {
		t.Fatalf("PUT /settings: %d %s", r.Status, r.Body)
	}
	msg := "From: Shop <shop@example.com>\r\nTo: ann@example.com\r\nSubject: Sent with one-click\r\n\r\nHello.\r\n"
	if res := svc.Run(msg, "sendmail", "-t"); res.Code != 0 {
		t.Fatalf("sendmail: %d %s", res.Code, res.Stderr)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got []string
		for _, m := range gmail.Messages() {
			got = append(got, m.Subject)
		}
		if strings.Contains(strings.Join(got, "\n"), "Sent with one-click") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Gmail received %q, not the message", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestOneClickOAuthBadInputThroughTheBinary(t *testing.T) {
	google := oauthfake.New(core.ProviderGoogle)
	defer google.Close()
	google.AddClient(vendorGoogleID, vendorGoogleSecret)
	dir := t.TempDir()
	v := keygen(t, dir)
	next := time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02")
	svc, call := start(t, dir,
		"MAILSVC_PUBLIC_URL=https://shop.example.com", "MAILSVC_LICENSE_PUBLIC_KEYS="+v.public,
		"MAILSVC_ONECLICK_GOOGLE_CLIENT_ID="+vendorGoogleID, "MAILSVC_ONECLICK_GOOGLE_CLIENT_SECRET="+vendorGoogleSecret,
		"MAILSVC_ONECLICK_GOOGLE_OAUTH_BASE_URL="+google.URL(),
	)
	admin := servicetest.Basic("admin", svc.AdminPassword())
	if r := call("POST", "/pro/license/activate", keyBody(v.issue(t, dir, "https://shop.example.com", "connections.oneclick.save", next))); r.Status != 200 {
		t.Fatalf("activate: %d %s", r.Status, r.Body)
	}
	smtp := createConnection(t, call, `{"name":"relay","driver":"smtp","settings":{"host":"127.0.0.1","port":2525,"encryption":"none","auth":false}}`)
	base := svc.Base + "/pro/oauth"
	big := "code=c&state=" + strings.Repeat("s", 70<<10)
	tests := []struct {
		name, method, url, contentType, body string
		auth                                 bool
		status                               int
		want                                 string // in the body, or the oauth_error flag of a 302
	}{
		{"zoho has no one-click authorize", "GET", base + "/zoho/one-click/authorize", "", "", true, 404, `"code":"rest_no_route"`},
		{"zoho has no one-click callback", "GET", base + "/zoho/one-click/callback?code=c&state=s", "", "", false, 404, `"code":"rest_no_route"`},
		{"authorize needs a login", "GET", base + "/google/one-click/authorize", "", "", false, 401, `"code":"rest_not_logged_in"`},
		{"bad connection id", "GET", base + "/google/one-click/authorize?connection_id=abc", "", "", true, 422, `"connection_id":`},
		{"unknown connection", "GET", base + "/google/one-click/authorize?connection_id=999", "", "", true, 404, `"code":"not_found"`},
		{"connection of another driver", "GET", fmt.Sprintf("%s/google/one-click/authorize?connection_id=%d", base, smtp), "", "", true, 422, `"connection_id":`},
		{"microsoft app not configured", "GET", base + "/microsoft/one-click/authorize", "", "", true, 503, `"code":"service_unavailable"`},
		{"callback without anything", "GET", base + "/google/one-click/callback", "", "", false, 302, "invalid_state"},
		{"callback with a forged state", "GET", base + "/google/one-click/callback?code=c&state=forged", "", "", false, 302, "invalid_state"},
		{"callback with a bad escape", "GET", base + "/google/one-click/callback?code=c&state=%zz", "", "", false, 302, "invalid_state"},
		{"callback with a provider error", "GET", base + "/google/one-click/callback?error=access_denied&state=x", "", "", false, 302, "invalid_state"},
		{"form callback without a state", "POST", base + "/microsoft/one-click/callback", "application/x-www-form-urlencoded", "code=c", false, 302, "invalid_state"},
		{"form callback with a bad body", "POST", base + "/microsoft/one-click/callback", "application/x-www-form-urlencoded", "%%%&&=", false, 302, "invalid_state"},
		{"JSON callback", "POST", base + "/microsoft/one-click/callback", "application/json", `{"code":"c","state":"s"}`, false, 302, "invalid_state"},
		{"multipart callback", "POST", base + "/google/one-click/callback", "multipart/form-data; boundary=x", "--x--", false, 302, "invalid_state"},
		{"oversized form callback", "POST", base + "/microsoft/one-click/callback", "application/x-www-form-urlencoded", big, false, 302, "invalid_state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var auth func(*http.Request)
			if tt.auth {
				auth = admin
			}
			status, loc, b := hop(t, tt.method, tt.url, tt.contentType, tt.body, auth)
			if status != tt.status {
				t.Fatalf("%d %q %s, want %d", status, loc, b, tt.status)
			}
			if tt.status == 302 {
				if f := adminFlags(t, status, loc, b); f.Get("oauth") != "error" || f.Get("oauth_error") != tt.want {
					t.Fatalf("flags %v, want oauth_error=%s", f, tt.want)
				}
				return
			}
			if !strings.Contains(string(b), tt.want) {
				t.Fatalf("%d %s, want %s", status, b, tt.want)
			}
			var e struct{ Code string }
			if json.Unmarshal(b, &e) != nil || e.Code == "" {
				t.Fatalf("not an error answer: %s", b)
			}
		})
	}
	if google.Requests() != 0 {
		t.Fatalf("%d requests reached the provider", google.Requests())
	}
	if r := call("GET", "/connections", ""); strings.Contains(string(r.Body), "one-click") {
		t.Fatalf("a refused flow created a connection: %s", r.Body)
	}
}
