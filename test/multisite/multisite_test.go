// Package multisite tests the service on a real WordPress multisite
// network: one network per test package (installing one takes seconds),
// made by WordPress itself (test/wpsite InstallNetwork), with the bridge
// active on every site.
package multisite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/test/apidoc"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/fakes/webhooksink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

const apiPath = "/wp-json/mailsvc/v1"

type logItem struct {
	ID        int64  `json:"id"`
	SiteID    int64  `json:"site_id"`
	Status    string `json:"status"`
	LastError string `json:"last_error"`
	Message   struct {
		Subject string `json:"subject"`
	} `json:"message"`
}

// both combines request options.
func both(fs ...func(*http.Request)) func(*http.Request) {
	return func(r *http.Request) {
		for _, f := range fs {
			if f != nil {
				f(r)
			}
		}
	}
}

func withCookie(c *http.Cookie, nonce string) func(*http.Request) {
	return func(r *http.Request) {
		r.AddCookie(c)
		r.Header.Set("X-WP-Nonce", nonce)
	}
}

func withHost(host string) func(*http.Request) {
	return func(r *http.Request) { r.Host = host }
}

// TestNetwork runs one network through the service: wp_mail() on every
// site is queued with its site id and delivered, each site's
// administrator sees only the site's logs (another site's log is a 404)
// by application password and by cookie and nonce, a super admin sees
// every site and manages the network, and site 3's quota of five a day
// holds its sixth message and alerts once at 100 %.
func TestNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	n := wpsite.InstallNetwork(t, wpsite.NetworkOptions{Site: wpsite.Options{EnvironmentType: "local"}})
	if _, err := bridge.Install(n.ContentDir); err != nil {
		t.Fatal(err)
	}
	n.CreateSiteUser(t, 2, "ann", "ann@example.com", "administrator", "Ann-pass-123")
	n.CreateSiteUser(t, 3, "cid", "cid@example.com", "administrator", "Cid-pass-123")
	annPW := n.CreateApplicationPassword(t, "ann", "mailsvc")
	adminPW := n.CreateApplicationPassword(t, n.AdminLogin, "mailsvc")
	cidPW := n.CreateApplicationPassword(t, "cid", "mailsvc")
	// A page load of each site: the bridge on site N publishes site N's
	// filters in its own options, which the service's capability check
	// for site N reads (it refuses a site where the bridge never ran).
	for _, site := range n.Sites {
		n.PHPOnSite(t, site.ID, `mailsvc_bridge_sync_filters();`)
	}
	annCookie := n.LoginCookie(t, "ann")
	annNonce := n.RESTNonce(t, "ann", annCookie)
	adminCookie := n.LoginCookie(t, n.AdminLogin)
	adminNonce := n.RESTNonce(t, n.AdminLogin, adminCookie)
	ann := servicetest.Basic("ann", annPW)
	admin := servicetest.Basic(n.AdminLogin, adminPW)
	cid := servicetest.Basic("cid", cidPW)

	sink := smtpsink.Start(t)
	alerts := webhooksink.New()
	defer alerts.Close()
	// The network is a "local" WordPress (application passwords over
	// plain HTTP); the service sends all the same (docs/staging.md).
	svc := servicetest.Start(t, t.TempDir(), "MAILSVC_WP_CONFIG="+n.WPConfigPath, "MAILSVC_ALLOW_PRIVATE_WEBHOOKS=true", "MAILSVC_ENVIRONMENT=production")
	root := "http://" + svc.Addr
	// The service is reached over loopback, as the bridge reaches it; the
	// Host header of a request names the network's domain as WordPress
	// saw it.
	host := withHost(n.Domain)
	url := func(site int64, route string) string {
		return root + strings.TrimSuffix(n.SiteByID(t, site).Path, "/") + apiPath + route
	}
	call := func(method, u, body string, auth func(*http.Request)) servicetest.Response {
		t.Helper()
		r := servicetest.Call(t, method, u, body, both(host, auth))
		if strings.HasPrefix(u, root+apiPath+"/network/") || strings.HasPrefix(u, root+apiPath+"/logs") {
			// The main site's answers match the API's description.
			apidoc.Check(t, method, u, r.Status, r.Header, r.Body)
		}
		return r
	}

	// The super admin sets up the network's connection and alert channel.
	r := call("POST", url(1, "/connections"), fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"timeout":5,"from_email":"net@example.com"}}`, sink.Host(), sink.Port()), admin)
	var conn struct{ ID int64 }
	if r.JSON(t, &conn); r.Status != 201 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	if r := call("PUT", url(1, "/settings"), fmt.Sprintf(`{"default_connection_id":%d}`, conn.ID), admin); r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	if r := call("POST", url(1, "/notifications"), fmt.Sprintf(`{"name":"ops","type":"webhook","events":["site_quota"],"settings":{"url":%q,"secret":"whsec-net"}}`, alerts.URL), admin); r.Status != 201 {
		t.Fatalf("alert channel: %d %s", r.Status, r.Body)
	}
	if r := call("PUT", url(1, "/network/sites/3"), `{"quota_day":5}`, admin); r.Status != 200 {
		t.Fatalf("site 3 quota: %d %s", r.Status, r.Body)
	}

	// wp_mail() on every site; six on site 3.
	sends := map[int64]int{1: 1, 2: 2, 3: 6, 4: 1}
	for site, count := range sends {
		for i := range count {
			out := n.PHPOnSite(t, site, fmt.Sprintf(`echo wp_mail( 'to%d@example.com', 'site %d message %d', 'hello' ) ? 'ok' : 'no';`, site, site, i+1))
			if strings.TrimSpace(out) != "ok" {
				t.Fatalf("wp_mail on site %d: %q", site, out)
			}
		}
	}
	if _, err := sink.WaitFor(9, 60*time.Second); err != nil {
		t.Fatalf("delivered: %v", err)
	}

	listLogs := func(u string, auth func(*http.Request)) []logItem {
		t.Helper()
		r := call("GET", u, "", auth)
		var items []logItem
		if r.JSON(t, &items); r.Status != 200 {
			t.Fatalf("GET %s: %d %s", u, r.Status, r.Body)
		}
		return items
	}
	// Poll until the sixth message of site 3 is held and the others are
	// delivered (the outcome is recorded after the sink took them).
	deadline := time.Now().Add(30 * time.Second)
	var all []logItem
	for {
		all = listLogs(url(1, "/logs?per_page=100"), admin)
		delivered, held := 0, 0
		for _, l := range all {
			switch {
			case l.Status == "delivered":
				delivered++
			case l.Status == "queued" && strings.Contains(l.LastError, "quota"):
				held++
			}
		}
		if delivered == 9 && held == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("logs never settled: %+v\nsink has %d", all, len(sink.Messages()))
		}
		time.Sleep(100 * time.Millisecond)
	}
	bySite := map[int64][]logItem{}
	for _, l := range all {
		if !strings.HasPrefix(l.Message.Subject, fmt.Sprintf("site %d ", l.SiteID)) {
			t.Errorf("log %d of site %d has subject %q", l.ID, l.SiteID, l.Message.Subject)
		}
		bySite[l.SiteID] = append(bySite[l.SiteID], l)
	}
	for site, count := range sends {
		if len(bySite[site]) != count {
			t.Errorf("site %d has %d logs, want %d", site, len(bySite[site]), count)
		}
	}

	t.Run("a site's administrator sees only the site", func(t *testing.T) {
		for name, auth := range map[string]func(*http.Request){
			"application password": ann,
			"cookie and nonce":     withCookie(annCookie, annNonce),
		} {
			t.Run(name, func(t *testing.T) {
				got := listLogs(url(2, "/logs?per_page=100"), auth)
				if len(got) != 2 {
					t.Fatalf("site 2 lists %d logs: %+v", len(got), got)
				}
				for _, l := range got {
					if l.SiteID != 2 {
						t.Fatalf("site 2 lists log %+v", l)
					}
				}
				if r := call("GET", url(2, fmt.Sprintf("/logs/%d", bySite[2][0].ID)), "", auth); r.Status != 200 {
					t.Fatalf("own log: %d %s", r.Status, r.Body)
				}
				other := bySite[3][0].ID
				r := call("GET", url(2, fmt.Sprintf("/logs/%d", other)), "", auth)
				if r.Status != 404 || strings.Contains(string(r.Body), "site 3") {
					t.Fatalf("another site's log: %d %s", r.Status, r.Body)
				}
				if r := call("POST", url(2, fmt.Sprintf("/logs/%d/resend", other)), "", auth); r.Status != 404 {
					t.Fatalf("resend another site's log: %d %s", r.Status, r.Body)
				}
				var stats struct{ Delivered, Queued int }
				sr := call("GET", url(2, "/logs/queue/stats"), "", auth)
				if sr.JSON(t, &stats); stats.Delivered != 2 || stats.Queued != 0 {
					t.Fatalf("site 2 stats: %s", sr.Body)
				}
				var dash struct {
					Totals struct{ Delivered, Queued int64 } `json:"totals"`
				}
				dr := call("GET", url(2, "/dashboard/stats"), "", auth)
				if dr.JSON(t, &dash); dr.Status != 200 || dash.Totals.Delivered != 2 || dash.Totals.Queued != 0 {
					t.Fatalf("site 2 dashboard: %d %s", dr.Status, dr.Body)
				}
				if r := call("GET", url(2, ""), "", auth); r.Status != 200 {
					t.Fatalf("route index on site 2: %d %s", r.Status, r.Body)
				}
				// The site's analytics (Pro), read only.
				if got := overviewDelivered(t, call, url(2, "/pro/analytics/overview"), auth); got != 2 {
					t.Fatalf("site 2 analytics count %d delivered, want 2", got)
				}
				er := call("GET", url(2, "/pro/analytics/export"), "", auth)
				if rows := strings.Count(strings.TrimSpace(string(er.Body)), "\n"); er.Status != 200 || rows != 2 || strings.Contains(string(er.Body), "site 3 ") {
					t.Fatalf("site 2 export: %d, %d rows: %s", er.Status, rows, er.Body)
				}
				// Not an administrator of the main site, nor of the network.
				for _, u := range []string{url(1, "/logs"), url(3, "/logs"), url(1, "/network/sites")} {
					if r := call("GET", u, "", auth); r.Status != 403 {
						t.Errorf("GET %s: %d %s", u, r.Status, r.Body)
					}
				}
				// The network's connections are the network's.
				if r := call("PUT", url(2, fmt.Sprintf("/connections/%d", conn.ID)), `{"name":"mine"}`, auth); r.Status != 403 {
					t.Errorf("site admin edits the network's connection: %d %s", r.Status, r.Body)
				}
			})
		}
	})

	t.Run("a super admin sees every site", func(t *testing.T) {
		for name, auth := range map[string]func(*http.Request){
			"application password": admin,
			"cookie and nonce":     withCookie(adminCookie, adminNonce),
		} {
			t.Run(name, func(t *testing.T) {
				if got := listLogs(url(1, "/logs?per_page=100"), auth); len(got) != 10 {
					t.Fatalf("network lists %d logs", len(got))
				}
				var dash struct {
					Totals struct{ Delivered, Queued int64 } `json:"totals"`
				}
				dr := call("GET", url(1, "/dashboard/stats"), "", auth)
				if dr.JSON(t, &dash); dr.Status != 200 || dash.Totals.Delivered != 9 || dash.Totals.Queued != 1 {
					t.Fatalf("network dashboard: %d %s", dr.Status, dr.Body)
				}
				dr = call("GET", url(1, "/dashboard/stats?site=3"), "", auth)
				if dr.JSON(t, &dash); dr.Status != 200 || dash.Totals.Delivered != 5 || dash.Totals.Queued != 1 {
					t.Fatalf("site 3 dashboard: %d %s", dr.Status, dr.Body)
				}
				for u, want := range map[string]int64{
					url(1, "/pro/analytics/overview"):        9,
					url(1, "/pro/analytics/overview?site=3"): 5,
					url(1, "/pro/analytics/overview?site=1"): 1,
					url(4, "/pro/analytics/overview"):        1,
				} {
					if got := overviewDelivered(t, call, u, auth); got != want {
						t.Errorf("%s: %d delivered, want %d", u, got, want)
					}
				}
				got := listLogs(url(1, "/logs?per_page=100&site=3"), auth)
				if len(got) != 6 || got[0].SiteID != 3 {
					t.Fatalf("site filter 3: %+v", got)
				}
				if r := call("GET", url(1, fmt.Sprintf("/logs/%d", bySite[2][0].ID)), "", auth); r.Status != 200 {
					t.Fatalf("site 2's log: %d %s", r.Status, r.Body)
				}
				// On a site's own URL the super admin acts for that site.
				if got := listLogs(url(4, "/logs"), auth); len(got) != 1 || got[0].SiteID != 4 {
					t.Fatalf("site 4 URL: %+v", got)
				}
			})
		}
	})

	t.Run("site 3's quota holds the sixth message and alerts once", func(t *testing.T) {
		var sites []struct {
			ID    int64 `json:"id"`
			Quota struct {
				Day     int64 `json:"day"`
				DayUsed int64 `json:"day_used"`
			} `json:"quota"`
			Volume int64 `json:"volume"`
		}
		r := call("GET", url(1, "/network/sites"), "", admin)
		if r.JSON(t, &sites); r.Status != 200 || len(sites) != 4 {
			t.Fatalf("sites: %d %s", r.Status, r.Body)
		}
		for _, s := range sites {
			if int(s.Volume) != sends[s.ID] {
				t.Errorf("site %d volume %d, want %d", s.ID, s.Volume, sends[s.ID])
			}
			if s.ID == 3 && (s.Quota.Day != 5 || s.Quota.DayUsed != 5) {
				t.Errorf("site 3 quota %+v", s.Quota)
			}
		}
		reqs, err := alerts.Await(2, 30*time.Second)
		if err != nil {
			t.Fatalf("alerts: %v", err)
		}
		var at100, at80 int
		for _, req := range reqs {
			var a struct {
				Event string `json:"event"`
				Title string `json:"title"`
			}
			_ = json.Unmarshal(req.Body, &a)
			if a.Event == "site_quota" && strings.Contains(a.Title, "100%") {
				at100++
			}
			if a.Event == "site_quota" && strings.Contains(a.Title, "80%") {
				at80++
			}
		}
		if at100 != 1 || at80 != 1 || len(alerts.Requests()) != 2 {
			t.Fatalf("alerts at 80%%: %d, at 100%%: %d, requests %d", at80, at100, len(alerts.Requests()))
		}
	})

	// With log_body full, the super admin's password reset asked for on
	// site 2's login page is a log of site 2 holding the live link. Site
	// 2's administrator reads it with the key redacted and cannot resend
	// it, to its recipient or to herself; the super admin reads it whole.
	t.Run("a site's administrator never reads or resends a one-time link", func(t *testing.T) {
		if r := call("PUT", url(1, "/settings"), `{"log_body":"full"}`, admin); r.Status != 200 {
			t.Fatalf("log_body full: %d %s", r.Status, r.Body)
		}
		t.Cleanup(func() { call("PUT", url(1, "/settings"), `{"log_body":"redacted"}`, admin) })
		before := len(sink.Messages())
		if out := n.PHPOnSite(t, 2, `$r = retrieve_password( 'admin' ); echo true === $r ? 'ok' : 'no';`); strings.TrimSpace(out) != "ok" {
			t.Fatalf("retrieve_password on site 2: %q", out)
		}
		if _, err := sink.WaitFor(before+1, 30*time.Second); err != nil {
			t.Fatalf("the reset mail: %v", err)
		}
		var reset logItem
		for deadline := time.Now().Add(30 * time.Second); reset.Status != "delivered"; {
			for _, l := range listLogs(url(2, "/logs?per_page=100"), ann) {
				if strings.Contains(l.Message.Subject, "Password Reset") {
					reset = l
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no delivered reset mail among site 2's logs: %+v", reset)
			}
			time.Sleep(100 * time.Millisecond)
		}
		read := func(u string, auth func(*http.Request)) string {
			t.Helper()
			var l struct {
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
			}
			r := call("GET", u, "", auth)
			if r.JSON(t, &l); r.Status != 200 {
				t.Fatalf("GET %s: %d %s", u, r.Status, r.Body)
			}
			return l.Message.Text
		}
		logPath := fmt.Sprintf("/logs/%d", reset.ID)
		whole := read(url(1, logPath), admin)
		_, key, found := strings.Cut(whole, "key=")
		key, _, _ = strings.Cut(key, "&")
		if !found || key == "" || key == "[redacted]" {
			t.Fatalf("the super admin reads the reset mail without its key:\n%s", whole)
		}
		for name, auth := range map[string]func(*http.Request){"application password": ann, "cookie and nonce": withCookie(annCookie, annNonce)} {
			if text := read(url(2, logPath), auth); strings.Contains(text, key) || !strings.Contains(text, "key=[redacted]") {
				t.Errorf("site 2's administrator (%s) reads the reset mail:\n%s", name, text)
			}
		}
		for _, body := range []string{`{}`, `{"to":["ann@example.com"]}`} {
			if r := call("POST", url(2, logPath+"/resend"), body, ann); r.Status != 403 || !strings.Contains(string(r.Body), "one-time link") {
				t.Errorf("site 2's administrator resends the reset mail with %s: %d %s", body, r.Status, r.Body)
			}
		}
		if r := call("POST", url(2, "/logs/resend"), fmt.Sprintf(`{"ids":[%d],"to":["ann@example.com"]}`, reset.ID), ann); r.Status != 200 || !strings.Contains(string(r.Body), `"resent":0`) {
			t.Errorf("site 2's administrator resends the reset mail in bulk: %d %s", r.Status, r.Body)
		}
	})

	t.Run("a site that may override sends through its own connection", func(t *testing.T) {
		own := smtpsink.Start(t)
		if r := call("PUT", url(1, "/network/settings"), `{"allow_site_overrides":true}`, admin); r.Status != 200 {
			t.Fatalf("allow overrides: %d %s", r.Status, r.Body)
		}
		// Until the site is marked, its administrator changes nothing.
		if r := call("PUT", url(2, "/settings"), fmt.Sprintf(`{"default_connection_id":%d}`, conn.ID), ann); r.Status != 403 {
			t.Fatalf("unmarked site: %d %s", r.Status, r.Body)
		}
		if r := call("PUT", url(1, "/network/sites/2"), `{"overrides_allowed":true}`, admin); r.Status != 200 || !strings.Contains(string(r.Body), `"overrides_allowed":true`) {
			t.Fatalf("mark site 2: %d %s", r.Status, r.Body)
		}
		r := call("POST", url(2, "/connections"), fmt.Sprintf(`{"name":"site 2 relay","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"timeout":5,"from_email":"two@example.com"}}`, own.Host(), own.Port()), ann)
		var mine struct{ ID int64 }
		if r.JSON(t, &mine); r.Status != 201 {
			t.Fatalf("site 2 creates a connection: %d %s", r.Status, r.Body)
		}
		if r := call("PUT", url(2, "/settings"), fmt.Sprintf(`{"default_connection_id":%d}`, mine.ID), ann); r.Status != 200 ||
			!strings.Contains(string(r.Body), fmt.Sprintf(`"default_connection_id":%d`, mine.ID)) {
			t.Fatalf("site 2 default: %d %s", r.Status, r.Body)
		}
		if r := call("PUT", url(2, "/settings"), `{"from_name":"Site Two"}`, ann); r.Status != 200 || !strings.Contains(string(r.Body), `"from_name":"Site Two"`) {
			t.Errorf("site 2 sender name: %d %s", r.Status, r.Body)
		}
		if r := call("GET", url(1, "/settings"), "", admin); strings.Contains(string(r.Body), "Site Two") {
			t.Errorf("site 2's sender name is the network's: %s", r.Body)
		}
		if r := call("PUT", url(2, "/settings"), `{"health_check_interval":30}`, ann); r.Status != 422 {
			t.Errorf("site 2 changes a network setting: %d %s", r.Status, r.Body)
		}
		if r := call("PUT", url(2, fmt.Sprintf("/connections/%d", conn.ID)), `{"name":"mine"}`, ann); r.Status != 403 {
			t.Errorf("site 2 changes the network's connection: %d %s", r.Status, r.Body)
		}
		if r := call("PUT", url(2, fmt.Sprintf("/connections/%d", mine.ID)), `{"name":"site 2 own relay"}`, ann); r.Status != 200 {
			t.Errorf("site 2 changes its connection: %d %s", r.Status, r.Body)
		}
		if r := call("GET", url(1, "/settings"), "", admin); !strings.Contains(string(r.Body), fmt.Sprintf(`"default_connection_id":%d`, conn.ID)) {
			t.Errorf("the network's default changed: %s", r.Body)
		}
		// Site 2's connection is site 2's: listed to its administrator
		// and the super admins, never to another site's administrator.
		listConns := func(u string, auth func(*http.Request)) map[int64]bool {
			t.Helper()
			var items []struct{ ID int64 }
			r := call("GET", u, "", auth)
			if r.JSON(t, &items); r.Status != 200 {
				t.Fatalf("GET %s: %d %s", u, r.Status, r.Body)
			}
			out := map[int64]bool{}
			for _, c := range items {
				out[c.ID] = true
			}
			return out
		}
		for _, tc := range []struct {
			name      string
			u         string
			auth      func(*http.Request)
			net, mine bool
		}{
			{"site 2's administrator", url(2, "/connections"), ann, true, true},
			{"site 3's administrator", url(3, "/connections"), cid, true, false},
			{"a super admin", url(1, "/connections"), admin, true, true},
		} {
			if got := listConns(tc.u, tc.auth); got[conn.ID] != tc.net || got[mine.ID] != tc.mine || len(got) != map[bool]int{true: 2, false: 1}[tc.mine] {
				t.Errorf("%s lists %v", tc.name, got)
			}
		}
		for _, m := range []struct{ method, route, body string }{
			{"GET", fmt.Sprintf("/connections/%d", mine.ID), ""},
			{"PUT", fmt.Sprintf("/connections/%d", mine.ID), `{"name":"taken"}`},
			{"POST", fmt.Sprintf("/connections/%d/test", mine.ID), `{"to":"x@example.com"}`},
		} {
			if r := call(m.method, url(3, m.route), m.body, cid); r.Status != 404 || strings.Contains(string(r.Body), "site 2") {
				t.Errorf("%s %s by site 3: %d %s", m.method, m.route, r.Status, r.Body)
			}
		}
		if r := call("GET", url(3, fmt.Sprintf("/connections/%d", conn.ID)), "", cid); r.Status != 200 {
			t.Errorf("the network's connection to site 3: %d %s", r.Status, r.Body)
		}
		// GET /network/sites reads every site's own settings at once:
		// each site answers with its own.
		var sites []struct {
			ID               int64 `json:"id"`
			OverridesAllowed bool  `json:"overrides_allowed"`
			Settings         struct {
				QuotaDay            *int64 `json:"quota_day"`
				DefaultConnectionID *int64 `json:"default_connection_id"`
			} `json:"settings"`
		}
		if r := call("GET", url(1, "/network/sites"), "", admin); r.Status != 200 {
			t.Fatalf("sites: %d %s", r.Status, r.Body)
		} else if r.JSON(t, &sites); len(sites) != 4 {
			t.Fatalf("sites: %s", r.Body)
		}
		for _, st := range sites {
			own := st.ID == 2
			hasDefault := st.Settings.DefaultConnectionID != nil && *st.Settings.DefaultConnectionID == mine.ID
			hasQuota := st.Settings.QuotaDay != nil && *st.Settings.QuotaDay == 5
			if st.OverridesAllowed != own || hasDefault != own || (st.Settings.DefaultConnectionID != nil && !own) || hasQuota != (st.ID == 3) {
				t.Errorf("site %d: %+v", st.ID, st)
			}
		}
		before := len(sink.Messages())
		for _, site := range []int64{2, 4} {
			if out := n.PHPOnSite(t, site, fmt.Sprintf(`echo wp_mail( 'late@example.com', 'site %d late', 'hello' ) ? 'ok' : 'no';`, site)); strings.TrimSpace(out) != "ok" {
				t.Fatalf("wp_mail on site %d: %q", site, out)
			}
		}
		got, err := own.WaitFor(1, 30*time.Second)
		if err != nil || !strings.Contains(string(got[0].Data), "site 2 late") {
			t.Fatalf("site 2's own connection got %d messages (%v)", len(got), err)
		}
		// Site 2 set its own sender name: it replaces WordPress's "WordPress".
		if from := headerLine(string(got[0].Data), "From"); !strings.Contains(from, "Site Two") {
			t.Errorf("site 2's message %q, want its own sender name Site Two", from)
		}
		if _, err := sink.WaitFor(before+1, 30*time.Second); err != nil {
			t.Fatalf("site 4 through the network's connection: %v", err)
		}
		for _, m := range sink.Messages()[before:] {
			if strings.Contains(string(m.Data), "site 2 late") {
				t.Fatal("site 2's message went through the network's connection")
			}
		}
	})

	t.Run("another site's own connection is answered as a missing one", func(t *testing.T) {
		// Site 3 creates a connection of its own, to its own server.
		three := smtpsink.Start(t)
		if r := call("PUT", url(1, "/network/settings"), `{"allow_site_overrides":true}`, admin); r.Status != 200 {
			t.Fatalf("allow overrides: %d %s", r.Status, r.Body)
		}
		if r := call("PUT", url(1, "/network/sites/3"), `{"overrides_allowed":true}`, admin); r.Status != 200 {
			t.Fatalf("mark site 3: %d %s", r.Status, r.Body)
		}
		r := call("POST", url(3, "/connections"), fmt.Sprintf(`{"name":"site 3 relay","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"timeout":5,"from_email":"three@example.com"}}`, three.Host(), three.Port()), cid)
		var theirs struct{ ID int64 }
		if r.JSON(t, &theirs); r.Status != 201 {
			t.Fatalf("site 3 creates a connection: %d %s", r.Status, r.Body)
		}
		const missing = int64(987654)
		// answer is the status and body of a request naming connection
		// id, "Connection <id> " written "Connection N ".
		answer := func(method, u, body string, auth func(*http.Request), id int64) (int, string) {
			t.Helper()
			r := call(method, u, fmt.Sprintf(body, id), auth)
			return r.Status, strings.ReplaceAll(string(r.Body), "Connection "+strconv.FormatInt(id, 10)+" ", "Connection N ")
		}
		check := func(name, method, u, body string, auth func(*http.Request)) {
			t.Helper()
			status, got := answer(method, u, body, auth, theirs.ID)
			wantStatus, want := answer(method, u, body, auth, missing)
			if status != 422 || wantStatus != 422 || got != want || !strings.Contains(got, "Connection N does not exist.") {
				t.Errorf("%s naming site 3's connection: %d %s; naming none: %d %s", name, status, got, wantStatus, want)
			}
		}
		testEmail := `{"connection_id":%d,"to":"anyone@elsewhere.example","subject":"as site 3"}`
		// Site 2 not allowed to override: its administrator still sends
		// test emails, through the network's connections only.
		if r := call("PUT", url(1, "/network/sites/2"), `{"overrides_allowed":false}`, admin); r.Status != 200 {
			t.Fatalf("unmark site 2: %d %s", r.Status, r.Body)
		}
		check("site 2's test email (no overrides)", "POST", url(2, "/test-email"), testEmail, ann)
		if r := call("PUT", url(1, "/network/sites/2"), `{"overrides_allowed":true}`, admin); r.Status != 200 {
			t.Fatalf("mark site 2: %d %s", r.Status, r.Body)
		}
		check("site 2's test email", "POST", url(2, "/test-email"), testEmail, ann)
		check("site 2's default", "PUT", url(2, "/settings"), `{"default_connection_id":%d}`, ann)
		check("site 2's fallback", "PUT", url(2, "/settings"), `{"fallback_connection_id":%d}`, ann)
		check("site 2's default set by a super admin", "PUT", url(1, "/network/sites/2"), `{"default_connection_id":%d}`, admin)
		check("site 2's fallback set by a super admin", "PUT", url(1, "/network/sites/2"), `{"fallback_connection_id":%d}`, admin)
		check("the network's default", "PUT", url(1, "/settings"), `{"default_connection_id":%d}`, admin)
		check("the network's fallback", "PUT", url(1, "/settings"), `{"fallback_connection_id":%d}`, admin)
		check("a super admin's test email for the network", "POST", url(1, "/test-email"), testEmail, admin)
		if r := call("GET", url(2, "/settings"), "", ann); strings.Contains(string(r.Body), fmt.Sprintf(`_connection_id":%d`, theirs.ID)) {
			t.Errorf("site 2's settings name site 3's connection: %s", r.Body)
		}
		if got := three.Messages(); len(got) != 0 {
			t.Fatalf("site 3's server got %d messages from the other sites", len(got))
		}
		// Site 3 and a super admin on site 3's URL use it.
		for who, auth := range map[string]func(*http.Request){"site 3's administrator": cid, "a super admin on site 3's URL": admin} {
			if r := call("POST", url(3, "/test-email"), fmt.Sprintf(testEmail, theirs.ID), auth); r.Status != 200 || !strings.Contains(string(r.Body), `"success":true`) {
				t.Errorf("%s's test email through site 3's connection: %d %s", who, r.Status, r.Body)
			}
		}
		if _, err := three.WaitFor(2, 30*time.Second); err != nil {
			t.Errorf("site 3's test emails: %v", err)
		}
	})

	t.Run("through WordPress on each site's own URL", func(t *testing.T) {
		// The bridge forwards /site2/wp-json/mailsvc/v1/... to the service
		// on the site's path; the service finds site 2 as WordPress did.
		t.Setenv("MAILSVC_SERVICE_URL", root)
		wp := n.StartPHPServer(t)
		direct := listLogs(url(2, "/logs?per_page=100"), ann)
		r := servicetest.Call(t, "GET", wp+"/site2"+apiPath+"/logs?per_page=100", "", ann)
		var got []logItem
		if r.JSON(t, &got); r.Status != 200 || len(got) != len(direct) {
			t.Fatalf("site 2 through WordPress: %d, %d logs, want %d: %s", r.Status, len(got), len(direct), r.Body)
		}
		for _, l := range got {
			if l.SiteID != 2 {
				t.Fatalf("site 2 through WordPress lists %+v", l)
			}
		}
		if r := servicetest.Call(t, "GET", wp+"/site2"+apiPath+fmt.Sprintf("/logs/%d", bySite[4][0].ID), "", ann); r.Status != 404 {
			t.Fatalf("site 4's log through site 2: %d %s", r.Status, r.Body)
		}
		if r := servicetest.Call(t, "GET", wp+"/site2"+apiPath+"/logs", "", withCookie(annCookie, annNonce)); r.Status != 200 {
			t.Fatalf("cookie through WordPress: %d %s", r.Status, r.Body)
		}
		if r := servicetest.Call(t, "GET", wp+apiPath+"/network/sites", "", admin); r.Status != 200 {
			t.Fatalf("network sites through WordPress: %d %s", r.Status, r.Body)
		}
		if r := servicetest.Call(t, "GET", wp+"/site3"+apiPath+"/logs", "", ann); r.Status != 403 {
			t.Fatalf("ann on site 3 through WordPress: %d %s", r.Status, r.Body)
		}
	})

	t.Run("Network Admin's Mail page in a browser", func(t *testing.T) {
		checkNetworkAdminMail(t, n, root)
	})

	t.Run("Network Admin's notice, Mail count and widget", func(t *testing.T) {
		checkNetworkAdminAttention(t, n, root, sink, networkAttention(t, url(1, "/dashboard/attention"), both(host, admin)))
	})

	t.Run("a site's held mail is its own", func(t *testing.T) {
		checkHeldCountedPerSite(t, n)
	})

	t.Run("network settings", func(t *testing.T) {
		if r := call("PUT", url(1, "/network/settings"), `{"quota_month":1000,"over_quota":"fail","allow_site_overrides":true}`, admin); r.Status != 200 ||
			!strings.Contains(string(r.Body), `"over_quota":"fail"`) || !strings.Contains(string(r.Body), `"quota_month":1000`) {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		for body, want := range map[string]int{`{"over_quota":"later"}`: 422, `{"quota_day":-1}`: 422, `{"quota_day":1.5}`: 422, `{"nope":1}`: 422, `{"quota_day":`: 400} {
			if r := call("PUT", url(1, "/network/settings"), body, admin); r.Status != want {
				t.Errorf("PUT %s: %d %s", body, r.Status, r.Body)
			}
		}
		if r := call("PUT", url(1, "/network/sites/99"), `{"quota_day":1}`, admin); r.Status != 404 {
			t.Errorf("unknown site: %d %s", r.Status, r.Body)
		}
		if r := call("GET", url(2, "/network/settings"), "", admin); r.Status != 404 {
			t.Errorf("network route on a site's URL: %d %s", r.Status, r.Body)
		}
		if r := call("GET", url(1, "/network/settings"), "", ann); r.Status != 403 {
			t.Errorf("site admin: %d %s", r.Status, r.Body)
		}
	})

	// The bridge's abilities (WordPress 6.9+) answer for the site they run
	// on: the signed statement names the user, and the service finds the
	// site from the site's address and path, as for a forwarded request.
	t.Run("abilities on a site", func(t *testing.T) {
		if strings.TrimSpace(n.PHP(t, `echo function_exists( 'wp_register_ability' ) ? 'yes' : 'no';`)) != "yes" {
			t.Skip("this WordPress has no Abilities API")
		}
		r := call("GET", url(2, "/logs"), "", ann)
		if r.Status != 200 {
			t.Fatalf("site 2's logs: %d %s", r.Status, r.Body)
		}
		want := r.Header.Get("X-WP-Total")
		if want == "" || want == "0" {
			t.Fatalf("site 2 has no logs (X-WP-Total %q)", want)
		}
		run := func(site int64, login string) string {
			return strings.TrimSpace(n.PHPOnSite(t, site, fmt.Sprintf(`define( 'MAILSVC_SERVICE_URL', %s );
wp_set_current_user( get_user_by( 'login', %s )->ID );
$r = wp_get_ability( 'mailsvc/search-logs' )->execute( array( 'per_page' => 1 ) );
echo is_wp_error( $r ) ? $r->get_error_code() : $r['total'];`, wpsite.PHPString(root), wpsite.PHPString(login))))
		}
		if got := run(2, "ann"); got != want {
			t.Errorf("search-logs on site 2 as ann: %q, want site 2's %s logs", got, want)
		}
		if got := run(3, "ann"); got != "ability_invalid_permissions" {
			t.Errorf("search-logs on site 3 as ann (not its member): %q, want refused", got)
		}
	})
}

// overviewDelivered reads the delivered messages of the Pro analytics
// overview at u (the last 30 days).
func overviewDelivered(t *testing.T, call func(method, u, body string, auth func(*http.Request)) servicetest.Response, u string, auth func(*http.Request)) int64 {
	t.Helper()
	var o struct {
		Totals struct {
			Current struct {
				Delivered int64 `json:"delivered"`
			} `json:"current"`
		} `json:"totals"`
	}
	r := call("GET", u, "", auth)
	if r.JSON(t, &o); r.Status != 200 {
		t.Fatalf("GET %s: %d %s", u, r.Status, r.Body)
	}
	return o.Totals.Current.Delivered
}

// headerLine returns the value of the first header called name in the
// raw message data, "" when it has none.
func headerLine(data, name string) string {
	for _, line := range strings.Split(data, "\r\n") {
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
