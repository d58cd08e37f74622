package http_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	api "github.com/mailsvc/mailsvc/adapters/http"
	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
)

// Stubs that only make a service non-nil, so that its routes are
// registered; their methods are never called by these tests.
type (
	stubLogs          struct{ api.LogService }
	stubActions       struct{ api.ConnectionActionService }
	stubTranscripts   struct{ api.TranscriptService }
	stubPlugins       struct{ api.PluginService }
	stubNotifications struct{ api.NotificationService }
	stubOAuth         struct{ api.OAuthService }
	stubMigration     struct{ api.MigrationService }
	stubDashboard     struct{ api.DashboardService }
	stubReady         struct{ api.ReadinessChecker }
	stubLicenses      struct{ httppro.LicenseService }
	stubProSettings   struct{ httppro.SettingsService }
	stubTransfer      struct{ httppro.TransferService }
	stubOneClick      struct{ httppro.OneClickService }
	stubSES           struct{ httppro.SESService }
	stubDomainCheck   struct{ httppro.DomainChecker }
	stubWebhooks      struct{ httppro.WebhookReceiver }
	stubSuppressions  struct{ httppro.SuppressionAdmin }
	stubLogEvents     struct{ httppro.LogEventReader }
	stubRoutingRules  struct{ httppro.RoutingRuleService }
	stubSenderGroups  struct{ httppro.SenderGroupService }
	stubPrivacy       struct{ api.PrivacyService }
	stubEmailControls struct{ api.EmailControlService }
	stubDoctor        struct{ api.DoctorService }
	stubReports       struct{ api.ReportService }
	stubCapture       struct{ api.CaptureService }
)

// fullServer returns a Server with every optional route set registered:
// every free service, the probes and, when pro is true, the Pro module
// with every service. Its Handler has been built.
func fullServer(t *testing.T, pro bool) (*api.Server, *httptest.Server) {
	t.Helper()
	s, _ := newAPI()
	s.Logs, s.Actions, s.Transcripts = stubLogs{}, stubActions{}, stubTranscripts{}
	s.Plugins, s.Notifications, s.OAuth = stubPlugins{}, stubNotifications{}, stubOAuth{}
	s.Migration, s.Dashboard, s.Privacy = stubMigration{}, stubDashboard{}, stubPrivacy{}
	s.Doctor, s.EmailControls, s.Reports, s.Capture = stubDoctor{}, stubEmailControls{}, stubReports{}, stubCapture{}
	s.Probes = &api.Probes{Metrics: http.NotFoundHandler(), Health: true, Ready: stubReady{}}
	if pro {
		s.Modules = []api.Module{&httppro.Module{
			Licenses: stubLicenses{}, Settings: stubProSettings{}, Transfer: stubTransfer{},
			OneClick: stubOneClick{}, SES: stubSES{}, DomainCheck: stubDomainCheck{},
			Webhooks: stubWebhooks{}, Suppressions: stubSuppressions{}, LogEvents: stubLogEvents{},
			RoutingRules: stubRoutingRules{}, SenderGroups: stubSenderGroups{},
		}}
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts
}

// indexRoute is one route of a WordPress index answer.
type indexRoute struct {
	Namespace string   `json:"namespace"`
	Methods   []string `json:"methods"`
	Endpoints []struct {
		Methods []string `json:"methods"`
		Args    map[string]struct {
			Type     string   `json:"type"`
			Enum     []string `json:"enum"`
			Default  any      `json:"default"`
			Required bool     `json:"required"`
		} `json:"args"`
	} `json:"endpoints"`
	Links map[string][]struct {
		Href string `json:"href"`
	} `json:"_links"`
}

// wpRoute is the WordPress route of a mux path template under the
// namespace: /mailsvc/v1/..., each variable (?P<name>pattern).
func wpRoute(tpl string) string {
	rel := "/mailsvc/v1" + strings.TrimPrefix(tpl, ns)
	var b strings.Builder
	for {
		i := strings.Index(rel, "{")
		if i < 0 {
			b.WriteString(rel)
			return b.String()
		}
		j := strings.Index(rel[i:], "}") + i
		name, pattern, ok := strings.Cut(rel[i+1:j], ":")
		if !ok {
			pattern = "[^/]+"
		}
		b.WriteString(rel[:i] + "(?P<" + name + ">" + pattern + ")")
		rel = rel[j+1:]
	}
}

func TestNamespaceIndexListsEveryRoute(t *testing.T) {
	for _, pro := range []bool{false, true} {
		t.Run(map[bool]string{false: "free", true: "pro"}[pro], func(t *testing.T) {
			s, ts := fullServer(t, pro)
			res := do(t, ts, "GET", ns, "admin", nil)
			if res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			var idx struct {
				Namespace string                `json:"namespace"`
				Routes    map[string]indexRoute `json:"routes"`
				Links     map[string][]struct {
					Href string `json:"href"`
				} `json:"_links"`
			}
			res.json(t, &idx)
			if idx.Namespace != "mailsvc/v1" {
				t.Errorf("namespace = %q", idx.Namespace)
			}
			if up := idx.Links["up"]; len(up) != 1 || up[0].Href != ts.URL+"/wp-json/" {
				t.Errorf("_links.up = %+v", up)
			}
			want, methods := 0, 0
			sawPro := false
			for _, rr := range s.RegisteredRoutes() {
				if !strings.HasPrefix(rr.Path, ns) {
					continue
				}
				want++
				methods += len(rr.Methods)
				sawPro = sawPro || strings.HasPrefix(rr.Path, ns+"/pro/")
				key := wpRoute(rr.Path)
				got, ok := idx.Routes[key]
				if !ok {
					t.Errorf("route %s (%s) missing from the index", key, rr.Path)
					continue
				}
				if got.Namespace != "mailsvc/v1" || !slices.Equal(got.Methods, rr.Methods) {
					t.Errorf("%s: namespace %q methods %v, want %v", key, got.Namespace, got.Methods, rr.Methods)
				}
				if len(got.Endpoints) != len(rr.Methods) {
					t.Errorf("%s: %d endpoints for %d methods", key, len(got.Endpoints), len(rr.Methods))
				}
				_, hasSelf := got.Links["self"]
				if hasSelf == strings.Contains(rr.Path, "{") {
					t.Errorf("%s: self link %v, variables in path %v", key, hasSelf, strings.Contains(rr.Path, "{"))
				}
			}
			if len(idx.Routes) != want {
				t.Errorf("index has %d routes, router %d", len(idx.Routes), want)
			}
			if sawPro != pro {
				t.Errorf("Pro routes in the index: %v, Pro on: %v", sawPro, pro)
			}
			// The spec's 83 routes, less Pro analytics (3) and the
			// manual OAuth flows' one mux route per action for three
			// providers (4), plus the namespace index and the
			// suppression routes (4), the personal data routes (2) and
			// the doctor (1), additions to the spec.
			if pro && methods < 83-3-4+1+4+2+1 {
				t.Errorf("only %d methods and paths with Pro on", methods)
			}

			conn := idx.Routes["/mailsvc/v1/connections/(?P<id>[^/]+)"]
			if !slices.Equal(conn.Methods, []string{"GET", "PUT", "DELETE"}) {
				t.Errorf("connections/{id} methods %v", conn.Methods)
			}
			if a := conn.Endpoints[0].Args["id"]; a.Type != "integer" || !a.Required {
				t.Errorf("connections/{id} id arg %+v", a)
			}
			oa := idx.Routes["/mailsvc/v1/oauth/(?P<provider>google|microsoft|zoho)/authorize"]
			if a := oa.Endpoints[0].Args["provider"]; !slices.Equal(a.Enum, []string{"google", "microsoft", "zoho"}) || !a.Required {
				t.Errorf("oauth authorize provider arg %+v", a)
			}
			list := idx.Routes["/mailsvc/v1/connections"]
			if self := list.Links["self"]; len(self) != 1 || self[0].Href != ts.URL+"/wp-json/mailsvc/v1/connections" {
				t.Errorf("connections self link %+v", self)
			}
			nsr := idx.Routes["/mailsvc/v1"]
			if a := nsr.Endpoints[0].Args["namespace"]; a.Default != "mailsvc/v1" || a.Required {
				t.Errorf("namespace route arg %+v", a)
			}
		})
	}
}

func TestRESTIndexNamesTheNamespace(t *testing.T) {
	_, ts := fullServer(t, true)
	for _, path := range []string{"/wp-json/", "/?rest_route=/"} {
		res := do(t, ts, "GET", path, "admin", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", path, res.Status, res.Body)
		}
		var idx struct {
			Name       string                `json:"name"`
			URL        string                `json:"url"`
			Namespaces []string              `json:"namespaces"`
			Routes     map[string]indexRoute `json:"routes"`
		}
		res.json(t, &idx)
		if idx.Name == "" || idx.URL != ts.URL || !slices.Equal(idx.Namespaces, []string{"mailsvc/v1"}) {
			t.Errorf("%s: name %q url %q namespaces %v", path, idx.Name, idx.URL, idx.Namespaces)
		}
		for _, key := range []string{"/", "/mailsvc/v1", "/mailsvc/v1/connections", "/mailsvc/v1/pro/webhooks/(?P<provider>[^/]+)"} {
			if _, ok := idx.Routes[key]; !ok {
				t.Errorf("%s: route %s missing", path, key)
			}
		}
		if idx.Routes["/"].Namespace != "" || idx.Routes["/mailsvc/v1"].Namespace != "mailsvc/v1" {
			t.Errorf("%s: namespaces of / and /mailsvc/v1: %+v %+v", path, idx.Routes["/"], idx.Routes["/mailsvc/v1"])
		}
	}
}

func TestDiscoveryNeedsAuthentication(t *testing.T) {
	_, ts := fullServer(t, true)
	cases := []struct {
		method, path, token string
		status              int
		code                string
	}{
		{"GET", ns, "", 401, "rest_not_logged_in"},
		{"GET", "/wp-json/", "", 401, "rest_not_logged_in"},
		{"GET", "/?rest_route=/mailsvc/v1", "", 401, "rest_not_logged_in"},
		{"GET", ns, "editor", 403, "rest_forbidden"},
		{"GET", "/wp-json/", "editor", 403, "rest_forbidden"},
		{"POST", ns, "admin", 404, "rest_no_route"},
		{"GET", ns + "/no-such-route", "admin", 404, "rest_no_route"},
		{"GET", ns + "/no-such-route", "", 404, "rest_no_route"},
		{"PATCH", ns + "/connections", "admin", 404, "rest_no_route"},
		{"GET", "/wp-json/wp/v2/posts", "admin", 404, "rest_no_route"},
	}
	for _, c := range cases {
		res := do(t, ts, c.method, c.path, c.token, nil)
		code, status, _ := res.errorCode(t)
		if res.Status != c.status || status != c.status || code != c.code {
			t.Errorf("%s %s as %q: %d %s (data.status %d), want %d %s", c.method, c.path, c.token, res.Status, code, status, c.status, c.code)
		}
	}
	res := do(t, ts, "GET", ns+"/no-such-route", "admin", nil)
	if !strings.Contains(string(res.Body), "No route was found matching the URL and request method.") {
		t.Errorf("unknown route message: %s", res.Body)
	}
}

func TestRegisteredRoutesMergeMethods(t *testing.T) {
	s, _ := fullServer(t, false)
	var got []string
	for _, rr := range s.RegisteredRoutes() {
		if rr.Path == ns+"/connections" || rr.Path == "/healthz" {
			got = append(got, rr.Path+" "+strings.Join(rr.Methods, ","))
		}
	}
	want := []string{ns + "/connections GET,POST,DELETE", "/healthz GET,HEAD"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
