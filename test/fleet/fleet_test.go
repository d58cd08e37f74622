// Package fleet proves one `mailsvc serve` serving several independent
// WordPress sites (docs/fleet.md): each site's mail through its own
// connection, each site's users on their own site only, the operator's
// view for the fleet's token only, fair delivery, a flood at one site
// held by that site's guard while the others' mail flows, and a site
// whose database goes away and comes back while the others serve.
package fleet

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/apidoc"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// fleetToken is MAILSVC_FLEET_TOKEN in these tests.
const fleetToken = "fleet-operator-token-0123456789"

// startFleet runs `mailsvc serve` for the sites' wp-config.php files
// (MAILSVC_SITES) with the fleet's token and extra.
func startFleet(t *testing.T, sites []*site, extra ...string) *servicetest.Service {
	t.Helper()
	paths := make([]string, len(sites))
	for i, s := range sites {
		paths[i] = s.WPConfig
	}
	dir := t.TempDir()
	env := servicetest.Environ(dir, append([]string{"MAILSVC_SITES=" + strings.Join(paths, ","), "MAILSVC_FLEET_TOKEN=" + fleetToken,
		"MAILSVC_TRUSTED_PROXIES=127.0.0.1"}, extra...)...)
	svc := servicetest.StartEnv(t, dir, env)
	awaitReady(t, svc, 60*time.Second)
	return svc
}

// awaitReadyTB is awaitReady for a benchmark, within two minutes.
func awaitReadyTB(tb testing.TB, svc *servicetest.Service) { awaitReady(tb, svc, 2*time.Minute) }

// awaitReady waits until the service's /readyz says every site is served.
func awaitReady(t testing.TB, svc *servicetest.Service, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r := servicetest.Call(t, "GET", "http://"+svc.Addr+"/readyz", "", nil)
		if r.Status == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fleet is not ready after %s: %d %s\n%s", timeout, r.Status, r.Body, svc.Stderr)
		}
		time.Sleep(50 * time.Millisecond) // polling a condition
	}
}

// as returns a request's credentials and routing: Basic credentials, the
// Host header, and the site key header when key is not "".
func as(user, pass, host, key string) func(*http.Request) {
	return func(r *http.Request) {
		// Application passwords need HTTPS, which a proxy on loopback
		// (MAILSVC_TRUSTED_PROXIES) terminated.
		r.Header.Set("X-Forwarded-Proto", "https")
		if user != "" {
			r.SetBasicAuth(user, pass)
		}
		if host != "" {
			r.Host = host
		}
		if key != "" {
			r.Header.Set("X-Mailsvc-Site", key)
		}
	}
}

// bearer adds the operator's bearer token, and the site key when key is
// not "".
func bearer(token, key string) func(*http.Request) {
	return func(r *http.Request) {
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		if key != "" {
			r.Header.Set("X-Mailsvc-Site", key)
		}
	}
}

// TestFleetSitesAreIndependent serves two sites from one process and
// checks that each request reaches the site it names and is
// authenticated by that site alone, that each site's mail goes out
// through its own connection, and that the operator's view (the route,
// `mailsvc fleet`, /metrics) lists both for the operator only.
func TestFleetSitesAreIndependent(t *testing.T) {
	sinkA, sinkB := smtpsink.Start(t, smtpsink.WithRefusedRecipients("refused@example.com")), smtpsink.Start(t)
	a, b := newSite(t, "alpha", "", sinkA, nil), newSite(t, "bravo", "", sinkB, nil)
	// Site A's fallback connection, which the operator's alert emails
	// about its default connection go through.
	fallback := &core.Connection{Name: "fallback", Driver: "smtp", IsActive: true,
		Settings: core.Settings{"host": sinkA.Host(), "port": int64(sinkA.Port()), "encryption": "none", "auth": false}}
	if err := a.DB.Connections().CreateConnection(t.Context(), fallback); err != nil {
		t.Fatal(err)
	}
	if err := a.DB.Settings().SaveSettings(t.Context(), core.ScopeFree, map[string]any{"fallback_connection_id": fallback.ID}); err != nil {
		t.Fatal(err)
	}
	hook := newWebhook(t)
	svc := startFleet(t, []*site{a, b}, "MAILSVC_FLEET_ALERT_EMAIL=operator@example.com", "MAILSVC_FLEET_ALERT_WEBHOOK="+hook.URL,
		"MAILSVC_ALLOW_PRIVATE_WEBHOOKS=true")
	if !strings.Contains(svc.Stdout.String(), "for 2 sites") {
		t.Errorf("banner: %s", svc.Stdout)
	}
	base := "http://" + svc.Addr
	api := base + "/wp-json/mailsvc/v1"

	t.Run("each site's users on their own site only", func(t *testing.T) {
		for _, tc := range []struct {
			name       string
			auth       func(*http.Request)
			want       int
			wantCode   string
			wantSiteOf *site // the site whose settings answer
		}{
			{"A's admin on A's host", as(a.Admin, a.Password, a.Host, ""), 200, "", a},
			{"B's admin on B's host", as(b.Admin, b.Password, b.Host, ""), 200, "", b},
			{"A's admin on B's host", as(a.Admin, a.Password, b.Host, ""), 401, "rest_not_logged_in", nil},
			{"B's admin on A's host", as(b.Admin, b.Password, a.Host, ""), 401, "rest_not_logged_in", nil},
			{"A's admin with A's site key", as(a.Admin, a.Password, "elsewhere.test", a.key()), 200, "", a},
			{"A's admin with B's site key", as(a.Admin, a.Password, a.Host, b.key()), 401, "rest_not_logged_in", nil},
			{"a made-up site key", as(a.Admin, a.Password, a.Host, strings.Repeat("0", 64)), 401, "rest_not_logged_in", nil},
			{"a host of no site", as(a.Admin, a.Password, "nowhere.test", ""), 404, "rest_no_route", nil},
			{"no credentials on A's host", as("", "", a.Host, ""), 401, "rest_not_logged_in", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := servicetest.Call(t, "GET", api+"/settings", "", tc.auth)
				if r.Status != tc.want {
					t.Fatalf("GET /settings: %d %s, want %d", r.Status, r.Body, tc.want)
				}
				if tc.wantCode != "" && r.Code() != tc.wantCode {
					t.Errorf("code %q, want %q: %s", r.Code(), tc.wantCode, r.Body)
				}
				if tc.wantSiteOf != nil {
					var got struct {
						DefaultConnectionID int64 `json:"default_connection_id"`
					}
					r.JSON(t, &got)
					if got.DefaultConnectionID == 0 {
						t.Errorf("settings without the site's default connection: %s", r.Body)
					}
				}
			})
		}
	})

	t.Run("each site's mail through its own connection", func(t *testing.T) {
		a.enqueue(t, "alpha", 3)
		b.enqueue(t, "bravo", 2)
		if _, err := sinkA.WaitFor(3, 60*time.Second); err != nil {
			t.Fatalf("site A's mail: %v\n%s", err, svc.Stderr)
		}
		if _, err := sinkB.WaitFor(2, 60*time.Second); err != nil {
			t.Fatalf("site B's mail: %v\n%s", err, svc.Stderr)
		}
		for sink, prefix := range map[*smtpsink.Sink]string{sinkA: "alpha", sinkB: "bravo"} {
			for _, m := range sink.Messages() {
				if !strings.HasPrefix(m.To[0], prefix) {
					t.Errorf("the %s sink got %v", prefix, m.To)
				}
			}
		}
	})

	t.Run("the operator's view", func(t *testing.T) {
		route := api + "/fleet/sites"
		for _, tc := range []struct {
			name string
			auth func(*http.Request)
			want int
		}{
			{"without the token", bearer("", ""), 401},
			{"with a wrong token", bearer("not-the-token", ""), 401},
			{"with a site's credentials", as(a.Admin, a.Password, a.Host, ""), 401},
			{"through a bridge (the site header)", bearer(fleetToken, a.key()), 404},
			{"with the token", bearer(fleetToken, ""), 200},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if r := servicetest.Call(t, "GET", route, "", tc.auth); r.Status != tc.want {
					t.Fatalf("GET /fleet/sites: %d %s, want %d", r.Status, r.Body, tc.want)
				}
			})
		}
		var views []struct {
			Name, Status string
			WPConfig     string `json:"wp_config"`
			HomeURL      string `json:"home_url"`
			Delivered    int64  `json:"delivered_24h"`
			Queue        struct{ Queued int }
			Connections  struct{ Total int }
		}
		r := servicetest.Call(t, "GET", route, "", bearer(fleetToken, ""))
		doc, err := apidoc.Load()
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Validate("GET", route, r.Status, r.Header, r.Body); err != nil {
			t.Errorf("the fleet's view against docs/openapi.yaml: %v", err)
		}
		r.JSON(t, &views)
		if len(views) != 2 {
			t.Fatalf("views: %s", r.Body)
		}
		for i, want := range []struct {
			s         *site
			delivered int64
			conns     int
		}{{a, 3, 2}, {b, 2, 1}} {
			v := views[i]
			if v.Name != want.s.Host || v.HomeURL != want.s.Home || v.WPConfig != want.s.WPConfig || v.Status != "serving" ||
				v.Delivered != want.delivered || v.Connections.Total != want.conns {
				t.Errorf("site %d: %+v, want %s with %d delivered and %d connections", i, v, want.s.Host, want.delivered, want.conns)
			}
		}
		out := servicetest.Run(t.TempDir(), servicetest.Environ(t.TempDir()), "", "fleet", "--site", a.WPConfig, "--site", b.WPConfig)
		if out.Code != 0 {
			t.Fatalf("mailsvc fleet: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
		}
		lines := strings.Split(strings.TrimSpace(out.Stdout), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "SITE") {
			t.Fatalf("mailsvc fleet:\n%s", out.Stdout)
		}
		for i, want := range []struct {
			s      *site
			fields []string
		}{{a, []string{"alpha.test", "serving", "0", "0", "0", "3", "2", "0", "0"}}, {b, []string{"bravo.test", "serving", "0", "0", "0", "2", "1", "0", "0"}}} {
			got := strings.Fields(lines[i+1])
			if len(got) != 10 || strings.Join(got[:9], " ") != strings.Join(want.fields, " ") || got[9] != want.s.WPConfig {
				t.Errorf("mailsvc fleet line %d: %q, want %q then %s", i+1, got, want.fields, want.s.WPConfig)
			}
		}
		if out := servicetest.Run(t.TempDir(), servicetest.Environ(t.TempDir()), "", "fleet"); out.Code == 0 || !strings.Contains(out.Stderr, "MAILSVC_SITES") {
			t.Errorf("mailsvc fleet without sites: exit %d\n%s", out.Code, out.Stderr)
		}
	})

	t.Run("alerts go to the operator too", func(t *testing.T) {
		// A message the server refuses fails for good: delivery_failed.
		if err := a.DB.Logs().EnqueueLogs(t.Context(), []*core.Log{{Source: "test", Message: core.Message{
			From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "refused@example.com"}}, Subject: "refused", Text: "x"}}}); err != nil {
			t.Fatal(err)
		}
		msgs, err := awaitMessages(sinkA, 60*time.Second, func(m smtpsink.Received) bool { return m.To[0] == "operator@example.com" })
		if err != nil {
			t.Fatalf("the operator's alert email: %v\n%s", err, svc.Stderr)
		}
		if !strings.Contains(string(msgs[0].Data), "alpha.test") {
			t.Errorf("the operator's alert email does not name the site:\n%s", msgs[0].Data)
		}
		body, err := hook.await(60*time.Second, `"event":"delivery_failed"`)
		if err != nil {
			t.Fatalf("the operator's webhook: %v\n%s", err, svc.Stderr)
		}
		if !strings.Contains(body, `"site":"http://alpha.test"`) {
			t.Errorf("the operator's webhook does not name the site: %s", body)
		}
		for _, m := range sinkB.Messages() {
			if m.To[0] == "operator@example.com" {
				t.Errorf("site B alerted the operator about site A's failure")
			}
		}
	})

	t.Run("each site's transcripts are its own", func(t *testing.T) {
		// A connection test keeps its SMTP transcript for the tools routes.
		for _, s := range []*site{a, b} {
			if r := servicetest.Call(t, "POST", api+"/connections/1/test", "", as(s.Admin, s.Password, s.Host, "")); r.Status != 200 {
				t.Fatalf("test of %s's connection: %d %s", s.Host, r.Status, r.Body)
			}
		}
		for s, sink := range map[*site]*smtpsink.Sink{a: sinkA, b: sinkB} {
			var logs []struct{ Transcript string }
			r := servicetest.Call(t, "GET", api+"/tools/debug-logs", "", as(s.Admin, s.Password, s.Host, ""))
			if r.JSON(t, &logs); r.Status != 200 || len(logs) == 0 {
				t.Fatalf("%s's debug logs: %d %s", s.Host, r.Status, r.Body)
			}
			for _, l := range logs {
				if !strings.Contains(l.Transcript, "connect "+sink.Addr()) {
					t.Errorf("%s lists a transcript of another site's server:\n%s", s.Host, l.Transcript)
				}
			}
		}
	})

	t.Run("the doctor finds each site's service", func(t *testing.T) {
		for _, s := range []*site{a, b} {
			dir := t.TempDir()
			r := servicetest.Run(dir, servicetest.Environ(dir, "MAILSVC_WP_CONFIG="+s.WPConfig, "MAILSVC_SERVICE_URL=http://"+svc.Addr), "", "doctor", "--json")
			var report struct {
				Checks []struct{ Name, Verdict, Message string }
			}
			if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
				t.Fatalf("mailsvc doctor --json for %s: %v\n%s%s", s.Host, err, r.Stdout, r.Stderr)
			}
			for _, c := range report.Checks {
				if (c.Name == "service" || c.Name == "screens") && c.Verdict != "ok" {
					t.Errorf("%s: the doctor's %s check: %s %s", s.Host, c.Name, c.Verdict, c.Message)
				}
			}
		}
	})

	t.Run("metrics are labelled by site", func(t *testing.T) {
		r := servicetest.Call(t, "GET", base+"/metrics", "", nil)
		if r.Status != 200 {
			t.Fatalf("/metrics: %d %s", r.Status, r.Body)
		}
		for _, s := range []*site{a, b} {
			if want := `site="` + s.WPConfig + `"`; !strings.Contains(string(r.Body), "mailsvc_deliveries_total{") || !strings.Contains(string(r.Body), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		if n := strings.Count(string(r.Body), "\ngo_goroutines "); n != 1 {
			t.Errorf("go_goroutines appears %d times, want once for the process", n)
		}
		if r := servicetest.Call(t, "GET", api+"/metrics", "", as(a.Admin, a.Password, a.Host, a.key())); r.Status == 200 {
			t.Errorf("/metrics through a site's namespace: %d", r.Status)
		}
	})
}

// queued counts a site's messages not yet sent.
func queued(t *testing.T, s *site) int {
	t.Helper()
	st, err := s.DB.Logs().PendingCounts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st.Queued + st.Sending
}

// TestFleetDeliveryIsFair puts 2,000 messages in site A's queue behind a
// slow sink, then sends from site B: B's mail arrives on time while A
// still has most of its burst to send.
func TestFleetDeliveryIsFair(t *testing.T) {
	slow, fast := smtpsink.Start(t, smtpsink.WithLatency(200*time.Millisecond)), smtpsink.Start(t)
	a, b := newSite(t, "burst", "", slow, nil), newSite(t, "quiet", "", fast, nil)
	a.enqueue(t, "burst", 2000)
	svc := startFleet(t, []*site{a, b})
	// A's workers are busy with the burst before B sends anything.
	if _, err := slow.WaitFor(5, 30*time.Second); err != nil {
		t.Fatalf("site A's burst does not start: %v\n%s", err, svc.Stderr)
	}
	start := time.Now()
	b.enqueue(t, "quiet", 20)
	if _, err := fast.WaitFor(20, 15*time.Second); err != nil {
		t.Fatalf("site B's mail while A bursts: %v\n%s", err, svc.Stderr)
	}
	took := time.Since(start)
	left := queued(t, a)
	t.Logf("site B's 20 messages took %s; site A had %d of its 2,000 left", took.Round(time.Millisecond), left)
	if left < 1000 {
		t.Errorf("site A has only %d messages left: the burst was not a burst", left)
	}
	for _, m := range fast.Messages() {
		if !strings.HasPrefix(m.To[0], "quiet") {
			t.Errorf("site B's sink got %v", m.To)
		}
	}
}

// TestFleetSiteDatabaseDown starts a fleet whose site B's database does
// not answer: A serves and delivers; B's routes answer 503 until its
// database answers, then B serves and delivers by itself. B's database
// going away again makes its routes 503 again, and A goes on.
func TestFleetSiteDatabaseDown(t *testing.T) {
	sinkA, sinkB := smtpsink.Start(t), smtpsink.Start(t)
	proxy := newDBProxy(t)
	a, b := newSite(t, "steady", "", sinkA, nil), newSite(t, "flaky", proxy.addr, sinkB, nil)
	paths := "MAILSVC_SITES=" + a.WPConfig + "," + b.WPConfig
	dir := t.TempDir()
	svc := servicetest.StartEnv(t, dir, servicetest.Environ(dir, paths, "MAILSVC_TRUSTED_PROXIES=127.0.0.1", "MAILSVC_FLEET_TOKEN="+fleetToken))
	api := "http://" + svc.Addr + "/wp-json/mailsvc/v1"
	settings := func(s *site) servicetest.Response {
		return servicetest.Call(t, "GET", api+"/settings", "", as(s.Admin, s.Password, s.Host, s.key()))
	}
	await := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 60s\n%s", what, svc.Stderr)
			}
			time.Sleep(50 * time.Millisecond) // polling a condition
		}
	}
	await("site A served", func() bool { return settings(a).Status == 200 })

	for _, tc := range []struct {
		name string
		call func() servicetest.Response
		want int
	}{
		{"B's routes", func() servicetest.Response { return settings(b) }, 503},
		{"the readiness probe", func() servicetest.Response { return servicetest.Call(t, "GET", "http://"+svc.Addr+"/readyz", "", nil) }, 503},
		{"A's routes", func() servicetest.Response { return settings(a) }, 200},
	} {
		t.Run("while B's database is down: "+tc.name, func(t *testing.T) {
			if r := tc.call(); r.Status != tc.want {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tc.want)
			}
		})
	}
	if r := settings(b); r.Code() != "service_unavailable" || !strings.Contains(string(r.Body), "database") {
		t.Errorf("B's 503: %s", r.Body)
	}
	a.enqueue(t, "steady", 2)
	if _, err := sinkA.WaitFor(2, 30*time.Second); err != nil {
		t.Fatalf("site A's mail while B is down: %v", err)
	}
	var views []struct {
		Status, Problem string
	}
	servicetest.Call(t, "GET", api+"/fleet/sites", "", bearer(fleetToken, "")).JSON(t, &views)
	if len(views) != 2 || views[0].Status != "serving" || views[1].Status != "down" || views[1].Problem == "" {
		t.Errorf("the operator's view while B is down: %+v", views)
	}

	// B's database answers: B comes up by itself and sends what waits.
	b.enqueue(t, "flaky", 2)
	proxy.up(t)
	await("site B served", func() bool { return settings(b).Status == 200 })
	if _, err := sinkB.WaitFor(2, 30*time.Second); err != nil {
		t.Fatalf("site B's mail once its database answers: %v\n%s", err, svc.Stderr)
	}

	// B's database goes away again: B's routes answer 503, A serves.
	proxy.down()
	await("site B's routes 503", func() bool { return settings(b).Status == 503 })
	if r := settings(a); r.Status != 200 {
		t.Errorf("A's routes while B is down again: %d %s", r.Status, r.Body)
	}
	proxy.up(t)
	await("site B served again", func() bool { return settings(b).Status == 200 })
}

// awaitMessages waits until sink has received a message that match
// accepts, and returns those it has.
func awaitMessages(sink *smtpsink.Sink, timeout time.Duration, match func(smtpsink.Received) bool) ([]smtpsink.Received, error) {
	deadline := time.Now().Add(timeout)
	for {
		var out []smtpsink.Received
		for _, m := range sink.Messages() {
			if len(m.To) > 0 && match(m) {
				out = append(out, m)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no such message within %s", timeout)
		}
		time.Sleep(50 * time.Millisecond) // polling a condition
	}
}

// webhook is an HTTP server that records the bodies posted to it.
type webhook struct {
	URL    string
	bodies chan string
}

// newWebhook starts a webhook receiver, stopped when the test ends.
func newWebhook(t *testing.T) *webhook {
	h := &webhook{bodies: make(chan string, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case h.bodies <- string(b):
		default:
		}
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL
	return h
}

// await returns the first body posted that contains want, waiting up to
// timeout.
func (h *webhook) await(timeout time.Duration, want string) (string, error) {
	deadline := time.After(timeout)
	for {
		select {
		case b := <-h.bodies:
			if strings.Contains(b, want) {
				return b, nil
			}
		case <-deadline:
			return "", fmt.Errorf("nothing with %s posted within %s", want, timeout)
		}
	}
}
