package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/fleet"
)

// fleetSite is a site of a fleet that answers with its name.
type fleetSite struct {
	name, key string
	hosts     []string
	down      string
}

func (s fleetSite) Key() string                 { return s.key }
func (s fleetSite) ServesHost(host string) bool { return slices.Contains(s.hosts, host) }
func (s fleetSite) Handler() (http.Handler, string) {
	if s.down != "" {
		return nil, s.down
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(s.name)) }), ""
}

// fleetView is a view of fixed sites.
type fleetView []fleet.SiteView

func (v fleetView) View(context.Context) []fleet.SiteView { return v }

// TestFleetRouter checks which site each request reaches, and who may
// read the operator's view.
func TestFleetRouter(t *testing.T) {
	const token = "operator-token"
	sites := []api.FleetSite{
		fleetSite{name: "a", key: "key-a", hosts: []string{"a.test", "a.test:8080"}},
		fleetSite{name: "b", key: "key-b", hosts: []string{"b.test"}},
		fleetSite{name: "c", key: "", hosts: []string{"c.test"}, down: "its database does not answer"},
	}
	view := fleetView{{Name: "a.test", Status: fleet.StatusServing}, {Name: "b.test", Status: fleet.StatusServing}}
	routes := func(token string) http.Handler {
		return (&api.Fleet{Sites: sites, Token: token, View: view, Probes: &api.Probes{Health: true}}).Handler()
	}
	for _, tc := range []struct {
		name         string
		token        string // the fleet's MAILSVC_FLEET_TOKEN
		method, path string
		host         string
		headers      map[string][]string
		want         int
		wantBody     string // the site that answers, or the error code
	}{
		{"the site key names site A", token, "GET", "/wp-json/mailsvc/v1/settings", "b.test", map[string][]string{"X-Mailsvc-Site": {"key-a"}}, 200, "a"},
		{"the site key names site B", token, "GET", "/wp-json/mailsvc/v1/settings", "elsewhere", map[string][]string{"X-Mailsvc-Site": {"key-b"}}, 200, "b"},
		{"an unknown site key", token, "GET", "/wp-json/mailsvc/v1/settings", "a.test", map[string][]string{"X-Mailsvc-Site": {"key-z"}}, 401, "rest_not_logged_in"},
		{"an empty site key", token, "GET", "/wp-json/mailsvc/v1/settings", "a.test", map[string][]string{"X-Mailsvc-Site": {""}}, 401, "rest_not_logged_in"},
		{"two site keys", token, "GET", "/wp-json/mailsvc/v1/settings", "a.test", map[string][]string{"X-Mailsvc-Site": {"key-a", "key-b"}}, 401, "rest_not_logged_in"},
		{"the host names site B", token, "GET", "/wp-json/mailsvc/v1/settings", "b.test", nil, 200, "b"},
		{"the host in capitals", token, "GET", "/wp-json/mailsvc/v1/settings", "B.Test", nil, 200, "b"},
		{"the host with a port", token, "GET", "/admin/", "b.test:9000", nil, 200, "b"},
		{"the host with its own port", token, "GET", "/wp-json/mailsvc/v1/logs", "a.test:8080", nil, 200, "a"},
		{"a host of no site", token, "GET", "/wp-json/mailsvc/v1/settings", "z.test", nil, 404, "rest_no_route"},
		{"a site that is down", token, "GET", "/wp-json/mailsvc/v1/settings", "c.test", nil, 503, "service_unavailable"},
		{"the operator's view with the token", token, "GET", "/wp-json/mailsvc/v1/fleet/sites", "a.test", map[string][]string{"Authorization": {"Bearer " + token}}, 200, ""},
		{"the operator's view without the token", token, "GET", "/wp-json/mailsvc/v1/fleet/sites", "a.test", nil, 401, "rest_not_logged_in"},
		{"the operator's view with a wrong token", token, "GET", "/wp-json/mailsvc/v1/fleet/sites", "a.test", map[string][]string{"Authorization": {"Bearer nope"}}, 401, "rest_not_logged_in"},
		{"the operator's view through a bridge", token, "GET", "/wp-json/mailsvc/v1/fleet/sites", "a.test",
			map[string][]string{"Authorization": {"Bearer " + token}, "X-Mailsvc-Site": {"key-a"}}, 404, "rest_no_route"},
		{"the operator's view without a token configured", "", "GET", "/wp-json/mailsvc/v1/fleet/sites", "a.test", map[string][]string{"Authorization": {"Bearer "}}, 404, "rest_no_route"},
		{"the operator's view is read only", token, "POST", "/wp-json/mailsvc/v1/fleet/sites", "a.test", map[string][]string{"Authorization": {"Bearer " + token}}, 404, "rest_no_route"},
		{"the process's liveness", token, "GET", "/healthz", "z.test", nil, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			req.Host = tc.host
			for k, vs := range tc.headers {
				for _, v := range vs {
					req.Header.Add(k, v)
				}
			}
			rec := httptest.NewRecorder()
			routes(tc.token).ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tc.want)
			}
			var e struct{ Code string }
			switch {
			case tc.wantBody == "":
			case rec.Code == 200:
				if rec.Body.String() != tc.wantBody {
					t.Errorf("answered by %q, want site %q", rec.Body, tc.wantBody)
				}
			case json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Code != tc.wantBody:
				t.Errorf("error %s, want code %s", rec.Body, tc.wantBody)
			}
		})
	}
	req := httptest.NewRequest("GET", "/wp-json/mailsvc/v1/fleet/sites", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	routes(token).ServeHTTP(rec, req)
	var got []fleet.SiteView
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got) != 2 || got[1].Name != "b.test" {
		t.Errorf("the operator's view: %s (%v)", rec.Body, err)
	}
}
