package admin

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// bridgeSite is a WordPress site served by PHP's built-in server alone (no
// proxy in front), whose bridge forwards the REST namespace and the
// screens to a service at another address (MAILSVC_SERVICE_URL).
type bridgeSite struct {
	site  *wpsite.Site
	svc   *servicetest.Service
	appPW string
}

// startBridgeSite installs the site (WP_ENVIRONMENT_TYPE local, so that
// WordPress and the service both take application passwords over plain
// HTTP), the bridge, the service, and serves wp-admin and the front
// controller with php -S at the site's own address.
func startBridgeSite(t testing.TB) *bridgeSite {
	t.Helper()
	return startBridgeSiteWith(t, wpsite.Options{Prefix: "wpb_", EnvironmentType: "local"}, "bridge test")
}

// startBridgeSiteWith is startBridgeSite for a site installed with opts,
// the administrator's application password named appPWName.
func startBridgeSiteWith(t testing.TB, opts wpsite.Options, appPWName string) *bridgeSite {
	t.Helper()
	site := wpsite.Install(t, opts)
	dir := t.TempDir()
	if r := servicetest.Run(dir, servicetest.Environ(dir), "", "wp", "install", "--wp-path", site.Dir); r.Code != 0 {
		t.Fatalf("wp install: %+v", r)
	}
	svc := servicetest.StartEnv(t, dir, servicetest.Environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath))
	u, err := url.Parse(site.SiteURL)
	if err != nil {
		t.Fatal(err)
	}
	startWPAdmin(t, site, u.Host, "MAILSVC_SERVICE_URL=http://"+svc.Addr)
	return &bridgeSite{site: site, svc: svc, appPW: site.CreateApplicationPassword(t, site.AdminLogin, appPWName)}
}

// awaitMinute calls done every 100 ms until it says true, for up to a
// minute; then it fails the test with what failure says.
func awaitMinute(t *testing.T, done func() bool, failure func() string) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(time.Minute)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal(failure())
		}
		<-tick.C
	}
}

// deliverTo creates the SMTP connection "Office relay" to sink (no TLS,
// no authentication, from site@example.com) and makes it the default.
func (s *bridgeSite) deliverTo(t testing.TB, sink *smtpsink.Sink) {
	t.Helper()
	r := servicetest.Call(t, "POST", s.svc.Base+"/connections", fmt.Sprintf(
		`{"name":"Office relay","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"from_email":"site@example.com"}}`,
		sink.Host(), sink.Port()), s.admin)
	var conn struct{ ID int64 }
	if r.JSON(t, &conn); r.Status != 201 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	if r := servicetest.Call(t, "PUT", s.svc.Base+"/settings", fmt.Sprintf(`{"default_connection_id":%d}`, conn.ID), s.admin); r.Status != 200 {
		t.Fatalf("default connection: %d %s", r.Status, r.Body)
	}
}

// setPermalinks switches the site to pretty (/%postname%/) or plain
// permalinks, as Settings → Permalinks does.
func (s *bridgeSite) setPermalinks(t testing.TB, pretty bool) {
	t.Helper()
	structure := ""
	if pretty {
		structure = "/%postname%/"
	}
	s.site.PHP(t, fmt.Sprintf(`update_option( 'permalink_structure', %s ); delete_option( 'rewrite_rules' );`, wpsite.PHPString(structure)))
}

// restURL is a REST route of the site in one of WordPress's two URL
// forms: /wp-json/<route> or /?rest_route=/<route>, with a query.
func (s *bridgeSite) restURL(pretty bool, route, query string) string {
	if pretty {
		u := s.site.SiteURL + "/wp-json/" + route
		if query != "" {
			u += "?" + query
		}
		return u
	}
	u := s.site.SiteURL + "/?rest_route=/" + route
	if query != "" {
		u += "&" + query
	}
	return u
}

// admin authenticates a request with the administrator's application password.
func (s *bridgeSite) admin(req *http.Request) { req.SetBasicAuth(s.site.AdminLogin, s.appPW) }

// TestRESTThroughWordPress calls the service's REST API through the
// bridge of a site with no web-server change, with pretty and with plain
// permalinks, in each URL form WordPress answers there: an application
// password reads the settings and a page of logs (X-WP-Total relayed), the
// namespace index is the service's; a wrong password and a malformed body
// get the service's own answers (401 rest_not_logged_in, 400 bad_request)
// rather than WordPress's. Without the bridge's forwarding the routes do
// not exist in WordPress (404 rest_no_route).
func TestRESTThroughWordPress(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	s := startBridgeSite(t)
	s.site.PHP(t, `wp_mail( 'a@example.org', 'one', 'body' ); wp_mail( 'b@example.org', 'two', 'body' );`)
	for _, pretty := range []bool{true, false} {
		name := map[bool]string{true: "pretty permalinks", false: "plain permalinks"}[pretty]
		t.Run(name, func(t *testing.T) {
			s.setPermalinks(t, pretty)
			// Pretty permalinks answer both URL forms; plain ones only
			// ?rest_route= (as for WordPress's own routes).
			forms := []bool{false}
			if pretty {
				forms = []bool{true, false}
			}
			for _, form := range forms {
				t.Run(map[bool]string{true: "/wp-json/", false: "?rest_route="}[form], func(t *testing.T) {
					r := servicetest.Call(t, "GET", s.restURL(form, "wp/v2/users/me", ""), "", s.admin)
					if r.Status != 200 {
						t.Fatalf("WordPress's own users/me: %d %s", r.Status, r.Body)
					}
					r = servicetest.Call(t, "GET", s.restURL(form, "mailsvc/v1/settings", ""), "", s.admin)
					var settings map[string]any
					if r.Status != 200 || json.Unmarshal(r.Body, &settings) != nil || settings["log_retention_days"] == nil {
						t.Fatalf("GET /settings through WordPress: %d %s", r.Status, r.Body)
					}
					r = servicetest.Call(t, "GET", s.restURL(form, "mailsvc/v1/logs", "per_page=1"), "", s.admin)
					var logs []map[string]any
					if r.Status != 200 || json.Unmarshal(r.Body, &logs) != nil || len(logs) != 1 ||
						r.Header.Get("X-WP-Total") != "2" || r.Header.Get("X-WP-TotalPages") != "2" {
						t.Errorf("GET /logs?per_page=1: %d %v %s", r.Status, r.Header, r.Body)
					}
					r = servicetest.Call(t, "GET", s.restURL(form, "mailsvc/v1", ""), "", s.admin)
					if r.Status != 200 || !strings.Contains(string(r.Body), `"/mailsvc/v1/settings"`) {
						t.Errorf("the namespace index is not the service's: %d %s", r.Status, r.Body)
					}
					r = servicetest.Call(t, "GET", s.restURL(form, "mailsvc/v1/settings", ""), "", func(req *http.Request) {
						req.SetBasicAuth(s.site.AdminLogin, "wrong password wrong pass")
					})
					if r.Status != 401 || r.Code() != "rest_not_logged_in" {
						t.Errorf("a wrong application password: %d %s, want the service's 401 rest_not_logged_in", r.Status, r.Body)
					}
					r = servicetest.Call(t, "PUT", s.restURL(form, "mailsvc/v1/settings", ""), `{"log_retention_days":`, s.admin)
					if r.Status != 400 || r.Code() != "bad_request" {
						t.Errorf("a malformed body: %d %s, want the service's 400 bad_request", r.Status, r.Body)
					}
					// In the query (a path with .. stops at php -S's router).
					for _, route := range []string{"mailsvc/v1/../../../healthz", "mailsvc-bridge/v1/screens/../../../../metrics"} {
						r = servicetest.Call(t, "GET", s.restURL(false, route, ""), "", s.admin)
						if r.Status != 404 {
							t.Errorf("GET %s: %d %s, want 404 (never forwarded out of the prefix)", route, r.Status, r.Body)
						}
					}
					r = servicetest.Call(t, "GET", s.restURL(form, "mailsvc/v1/logs/999999", ""), "", s.admin)
					if r.Status != 404 {
						t.Errorf("a missing log: %d %s, want 404", r.Status, r.Body)
					}
				})
			}
		})
	}
	// The screens base header is believed only as the bridge signs it
	// (with a key from the site's salts): through the bridge the page
	// names its assets under the bridge's URL; the same header sent to the
	// service directly by anyone else changes nothing. The page varies on
	// it.
	t.Run("the screens base only from the bridge", func(t *testing.T) {
		s.setPermalinks(t, false)
		base := s.site.SiteURL + "/index.php?rest_route=/mailsvc-bridge/v1/screens/"
		r := servicetest.Call(t, "GET", s.restURL(false, "mailsvc-bridge/v1/screens/", ""), "", nil)
		if r.Status != 200 || !strings.Contains(string(r.Body), `src="`+base+`js/app.js"`) {
			t.Fatalf("the index through the bridge: %d %s, want its assets under %s", r.Status, r.Body, base)
		}
		r = servicetest.Call(t, "GET", "http://"+s.svc.Addr+"/admin/", "", func(req *http.Request) {
			req.Header.Set("X-Mailsvc-Screens-Base", "http://evil.test/index.php?rest_route=/x/")
		})
		if r.Status != 200 || strings.Contains(string(r.Body), "evil.test") || !strings.Contains(string(r.Body), `src="js/app.js"`) {
			t.Errorf("the index asked directly with an unsigned base: %d %s, want the plain page", r.Status, r.Body)
		}
		if vary := r.Header.Get("Vary"); !strings.Contains(vary, "X-Mailsvc-Screens-Base") {
			t.Errorf("the index's Vary %q does not name X-Mailsvc-Screens-Base", vary)
		}
	})
}

// TestScreensThroughWordPress opens wp-admin's Mail page on a site with
// plain permalinks and no web-server change: the screens come through the
// bridge (?rest_route=/mailsvc-bridge/v1/screens/) and load their data
// through it (?rest_route=/mailsvc/v1/...) with the session's cookie and
// nonce: the dashboard, the connections and the email logs. The same with
// pretty permalinks for the dashboard.
func TestScreensThroughWordPress(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	s := startBridgeSite(t)
	r := servicetest.Call(t, "POST", s.restURL(false, "mailsvc/v1/connections", ""),
		`{"name":"Office relay","driver":"smtp","settings":{"host":"127.0.0.1","port":2525,"encryption":"none","auth":false}}`, s.admin)
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("create connection through WordPress: %d %s", r.Status, r.Body)
	}
	s.site.PHP(t, `wp_mail( 'reader@example.org', 'Through the bridge', 'body' );`)
	b := newBrowser(t)
	browserLogin(t, b, s.site, s.site.AdminLogin)

	for _, pretty := range []bool{false, true} {
		s.setPermalinks(t, pretty)
		b.run("open wp-admin's Mail page",
			chromedp.Navigate(s.site.SiteURL+"/wp-admin/admin.php?page=mailsvc"),
			chromedp.WaitVisible("iframe#mailsvc-screens", chromedp.ByQuery))
		var src string
		b.eval(`document.querySelector("iframe#mailsvc-screens").src`, &src)
		want := s.restURL(pretty, "mailsvc-bridge/v1/screens/", "")
		if !pretty {
			want = s.site.SiteURL + "/index.php?rest_route=/mailsvc-bridge/v1/screens/"
		}
		if !strings.HasPrefix(src, want+"#") {
			t.Fatalf("the Mail page frames %s, want the bridge's %s", src, want)
		}
		var frames []*cdp.Node
		b.run("find the frame", chromedp.Nodes("iframe#mailsvc-screens", &frames, chromedp.ByQuery))
		in := chromedp.FromNode(frames[0])
		b.run("the dashboard loads its data", chromedp.WaitVisible("svg.chart", chromedp.ByQuery, in))
		if pretty {
			break // The rest is the same code; plain permalinks are the harder case.
		}
		b.run("the connections load",
			chromedp.Click(`nav a[data-screen="connections"]`, chromedp.ByQuery, in),
			chromedp.WaitVisible(`#set-default_connection_id`, chromedp.ByQuery, in))
		var text string
		b.run("connections text", chromedp.Text("#main", &text, chromedp.ByQuery, in))
		if !strings.Contains(text, "Office relay") || strings.Contains(text, "Sign in") {
			t.Errorf("the connections screen through the bridge:\n%s", text)
		}
		b.run("the email logs load (a filtered list: the query keeps rest_route's slashes)",
			chromedp.Click(`nav a[data-screen="logs"]`, chromedp.ByQuery, in),
			chromedp.Poll(`document.querySelector("iframe#mailsvc-screens").contentDocument.body.innerText.includes("Through the bridge")`, nil, pollFast))
		b.screenshot("bridge-plain-logs")
		b.run("the Pro tab loads (its modules come through the bridge too)",
			chromedp.Click(`nav a[data-screen="pro"]`, chromedp.ByQuery, in),
			chromedp.Poll(`document.querySelector("iframe#mailsvc-screens").contentDocument.querySelector("#screen .pro-license") !== null`, nil, pollFast))
		b.run("the alert channels load",
			chromedp.Click(`nav a[data-screen="alerts"]`, chromedp.ByQuery, in),
			chromedp.Poll(`document.querySelector("iframe#mailsvc-screens").contentDocument.querySelector("#screen .screen-alerts .toolbar") !== null`, nil, pollFast))
		b.run("the settings load",
			chromedp.Click(`nav a[data-screen="settings"]`, chromedp.ByQuery, in),
			chromedp.WaitVisible(`#set-log_retention_days`, chromedp.ByQuery, in))
		b.run("the tools load (debug transcripts and the site's plugins)",
			chromedp.Click(`nav a[data-screen="tools"]`, chromedp.ByQuery, in),
			chromedp.WaitVisible(`#dbg-h`, chromedp.ByQuery, in), chromedp.WaitVisible(`#plg-h`, chromedp.ByQuery, in))
		b.run("screen text", chromedp.Text("#main", &text, chromedp.ByQuery, in))
		if strings.Contains(text, "Sign in") || strings.Contains(text, "No route was found") {
			t.Errorf("the tools screen through the bridge:\n%s", text)
		}
		// Every API call kept rest_route's slashes literal, as proxies
		// match it (docs/operations.md's map), also with a query added.
		// Only the service's routes count: WordPress 7.1's own admin
		// scripts on the page call its routes (/wp/v2/users/me) with an
		// encoded rest_route, which no proxy rule of ours has to match.
		var calls []string
		b.eval(`performance.getEntriesByType("resource").map((e) => e.name).filter((n) => n.includes("rest_route=") && n.includes("mailsvc") && !n.includes("screens"))
			.concat(...[...document.querySelectorAll("iframe")].map((f) => f.contentWindow.performance.getEntriesByType("resource").map((e) => e.name).filter((n) => n.includes("rest_route=") && n.includes("mailsvc") && !n.includes("screens"))))`, &calls)
		withQuery := false
		for _, c := range calls {
			if !strings.Contains(c, "rest_route=/mailsvc/v1/") {
				t.Errorf("the screens called %s: rest_route re-encoded", c)
			}
			withQuery = withQuery || strings.Contains(c, "&per_page=")
		}
		if !withQuery {
			t.Errorf("no API call with a query among %q", calls)
		}
	}
}

// TestServiceStoppedThroughWordPress stops the service: the bridge's REST
// routes answer 503 mailsvc_unavailable saying how many messages wait in
// the queue (to an authenticated administrator only), and the Mail page
// shows WordPress's notice with the count and how to start the service,
// instead of a frame.
func TestServiceStoppedThroughWordPress(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	s := startBridgeSite(t)
	s.svc.Stop(t)
	s.site.PHP(t, `foreach ( array( 1, 2, 3 ) as $i ) { wp_mail( "r$i@example.org", "queued $i", 'body' ); }`)
	for _, pretty := range []bool{true, false} {
		r := servicetest.Call(t, "GET", s.restURL(pretty, "mailsvc/v1/settings", ""), "", s.admin)
		var e struct {
			Code    string
			Message string
			Data    struct{ Status, Queued int }
		}
		if r.Status != 503 || json.Unmarshal(r.Body, &e) != nil || e.Code != "mailsvc_unavailable" || e.Data.Status != 503 ||
			e.Data.Queued != 3 || !strings.Contains(e.Message, "3 messages are queued") || !strings.Contains(e.Message, "systemctl start mailsvc") {
			t.Errorf("service stopped, pretty=%v: %d %s", pretty, r.Status, r.Body)
		}
	}
	for name, auth := range map[string]func(*http.Request){
		"no credentials":               nil,
		"a wrong application password": func(req *http.Request) { req.SetBasicAuth(s.site.AdminLogin, "wrong password wrong pass") },
	} {
		r := servicetest.Call(t, "GET", s.restURL(false, "mailsvc/v1/settings", ""), "", auth)
		if r.Status != 503 || r.Code() != "mailsvc_unavailable" || strings.Contains(string(r.Body), "queued\":") {
			t.Errorf("service stopped, %s: %d %s, want 503 without the count", name, r.Status, r.Body)
		}
	}

	req, err := http.NewRequest("GET", s.site.SiteURL+"/wp-admin/admin.php?page=mailsvc", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range loginCookies(t, s.site, s.site.AdminLogin) {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: url.QueryEscape(c.Value)})
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	for _, want := range []string{`id="mailsvc-unavailable"`, "The mail service is not running.", "3 messages are queued and will go out when it starts.", "systemctl start mailsvc"} {
		if !strings.Contains(page, want) {
			t.Errorf("the Mail page (%d) lacks %q", resp.StatusCode, want)
		}
	}
	if strings.Contains(page, "mailsvc-screens") || strings.Contains(page, "Bad Gateway") {
		t.Errorf("the Mail page frames the screens of a stopped service")
	}
}
