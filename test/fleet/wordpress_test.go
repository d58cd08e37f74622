package fleet

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// wpHost is the Host of a WordPress site's URL.
func wpHost(t *testing.T, s *wpsite.Site) string {
	t.Helper()
	u, err := url.Parse(s.SiteURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// wpFleet is two real WordPress sites with their own databases and the
// bridge, served by one `mailsvc serve`, each with an SMTP connection of
// its own (to its sink) as its default, made through the service's API
// by the site's own administrator.
type wpFleet struct {
	A, B         *wpsite.Site
	pwA, pwB     string // the administrators' application passwords
	sinkA, sinkB *smtpsink.Sink
	svc          *servicetest.Service
	dir          string // the service's directory and environment's
	api          string // the service's REST namespace
}

// startWordPressFleet installs the two sites and their bridges and
// starts the service for both with the fleet's token and extra.
func startWordPressFleet(t *testing.T, extra ...string) *wpFleet {
	t.Helper()
	// is_ssl(): WordPress takes application passwords over HTTPS only,
	// and the bridge then says so to the service (X-Forwarded-Proto).
	https := wpsite.Options{ExtraConfig: "$_SERVER['HTTPS'] = 'on';"}
	optsA, optsB := https, https
	optsA.Prefix, optsB.Prefix = "wpa_", "wpb_"
	f := &wpFleet{A: wpsite.Install(t, optsA), B: wpsite.Install(t, optsB), sinkA: smtpsink.Start(t), sinkB: smtpsink.Start(t), dir: t.TempDir()}
	for _, s := range []*wpsite.Site{f.A, f.B} {
		if r := servicetest.Run(f.dir, servicetest.Environ(f.dir), "", "wp", "install", "--wp-path", s.Dir); r.Code != 0 {
			t.Fatalf("wp install %s: exit %d\n%s%s", s.Dir, r.Code, r.Stdout, r.Stderr)
		}
	}
	env := servicetest.Environ(f.dir, append([]string{"MAILSVC_SITES=" + f.A.WPConfigPath + "," + f.B.WPConfigPath,
		"MAILSVC_FLEET_TOKEN=" + fleetToken, "MAILSVC_TRUSTED_PROXIES=127.0.0.1"}, extra...)...)
	f.svc = servicetest.StartEnv(t, f.dir, env)
	awaitReady(t, f.svc, 60*time.Second)
	f.api = "http://" + f.svc.Addr + "/wp-json/mailsvc/v1"
	f.pwA = f.A.CreateApplicationPassword(t, f.A.AdminLogin, "fleet test")
	f.pwB = f.B.CreateApplicationPassword(t, f.B.AdminLogin, "fleet test")

	// Each site's own connection, made on the service by its own
	// administrator, named by the site's host.
	for _, s := range []*wpsite.Site{f.A, f.B} {
		r := f.call(t, s, "POST", "/connections", fmt.Sprintf(
			`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false}}`, f.sink(s).Host(), f.sink(s).Port()))
		var conn struct{ ID int64 }
		if r.JSON(t, &conn); r.Status != 201 || conn.ID == 0 {
			t.Fatalf("create connection on %s: %d %s", s.SiteURL, r.Status, r.Body)
		}
		if r := f.call(t, s, "PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d}`, conn.ID)); r.Status != 200 {
			t.Fatalf("PUT /settings on %s: %d %s", s.SiteURL, r.Status, r.Body)
		}
	}
	return f
}

// sink is the SMTP sink of site s's connection.
func (f *wpFleet) sink(s *wpsite.Site) *smtpsink.Sink {
	if s == f.A {
		return f.sinkA
	}
	return f.sinkB
}

// call calls the service's REST API as site s's administrator, routed
// by the site's host.
func (f *wpFleet) call(t *testing.T, s *wpsite.Site, method, path, body string) servicetest.Response {
	t.Helper()
	pw := f.pwB
	if s == f.A {
		pw = f.pwA
	}
	return servicetest.Call(t, method, f.api+path, body, as(s.AdminLogin, pw, wpHost(t, s), ""))
}

// TestFleetTwoWordPressSites installs two real WordPress sites with their
// own databases and the bridge, serves both from one `mailsvc serve`, and
// checks that each site's wp_mail() goes out through its own connection,
// that site A's administrator is refused on site B's URL (through B's
// bridge and on the service), and that the fleet's view lists both for
// the operator and is refused without the token and through a bridge.
func TestFleetTwoWordPressSites(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	f := startWordPressFleet(t)
	siteA, siteB, sinkA, sinkB, pwA, pwB, svc, api, dir := f.A, f.B, f.sinkA, f.sinkB, f.pwA, f.pwB, f.svc, f.api, f.dir

	t.Setenv("MAILSVC_SERVICE_URL", "http://"+svc.Addr)
	t.Run("each site's wp_mail() through its own connection", func(t *testing.T) {
		for _, c := range []struct {
			site *wpsite.Site
			name string
		}{{siteA, "alpha"}, {siteB, "bravo"}} {
			if out := c.site.PHP(t, fmt.Sprintf(`echo wp_mail( '%[1]s@example.com', 'from %[1]s', 'hello' ) ? 'sent' : 'refused';`, c.name)); out != "sent" {
				t.Fatalf("wp_mail() on %s: %s", c.name, out)
			}
		}
		for sink, name := range map[*smtpsink.Sink]string{sinkA: "alpha", sinkB: "bravo"} {
			got, err := sink.WaitFor(1, 60*time.Second)
			if err != nil {
				t.Fatalf("%s's mail: %v\n%s", name, err, svc.Stderr)
			}
			if len(got) != 1 || got[0].To[0] != name+"@example.com" {
				t.Errorf("%s's sink got %+v", name, got)
			}
		}
	})

	wpA, wpB := siteA.StartPHPServer(t), siteB.StartPHPServer(t)
	t.Run("requests through the bridges", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			url  string
			auth func(*http.Request)
			want int
		}{
			{"A's administrator through A's bridge", wpA + "/wp-json/mailsvc/v1/settings", servicetest.Basic(siteA.AdminLogin, pwA), 200},
			{"B's administrator through B's bridge", wpB + "/wp-json/mailsvc/v1/settings", servicetest.Basic(siteB.AdminLogin, pwB), 200},
			{"A's administrator through B's bridge", wpB + "/wp-json/mailsvc/v1/settings", servicetest.Basic(siteA.AdminLogin, pwA), 401},
			{"A's administrator on the service with B's host", api + "/settings", as(siteA.AdminLogin, pwA, wpHost(t, siteB), ""), 401},
			{"the fleet's view through B's bridge", wpB + "/wp-json/mailsvc/v1/fleet/sites", bearer(fleetToken, ""), 404},
			{"the fleet's view through A's bridge, plain permalinks", wpA + "/?rest_route=/mailsvc/v1/fleet/sites", bearer(fleetToken, ""), 404},
			{"the fleet's view without the token", api + "/fleet/sites", nil, 401},
			{"the fleet's view with the token", api + "/fleet/sites", bearer(fleetToken, ""), 200},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if r := servicetest.Call(t, "GET", tc.url, "", tc.auth); r.Status != tc.want {
					t.Fatalf("GET %s: %d %s, want %d", tc.url, r.Status, r.Body, tc.want)
				}
			})
		}
	})

	t.Run("the operator's view lists both sites", func(t *testing.T) {
		var views []struct {
			Name, Status string
			Delivered    int64 `json:"delivered_24h"`
		}
		servicetest.Call(t, "GET", api+"/fleet/sites", "", bearer(fleetToken, "")).JSON(t, &views)
		if len(views) != 2 || views[0].Name != wpHost(t, siteA) || views[1].Name != wpHost(t, siteB) {
			t.Fatalf("views: %+v", views)
		}
		for _, v := range views {
			if v.Status != "serving" || v.Delivered != 1 {
				t.Errorf("%+v, want serving with one delivered", v)
			}
		}
		r := servicetest.Run(dir, servicetest.Environ(dir, "MAILSVC_SITES="+siteA.WPConfigPath+","+siteB.WPConfigPath), "", "fleet")
		if r.Code != 0 || !strings.Contains(r.Stdout, wpHost(t, siteA)) || !strings.Contains(r.Stdout, wpHost(t, siteB)) {
			t.Errorf("mailsvc fleet: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	})
}
