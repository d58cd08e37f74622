package protest

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	api "github.com/mailsvc/mailsvc/adapters/http"
	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
)

// proRoutes returns every route the Pro module registers today.
func proRoutes(t *testing.T) []api.Route {
	t.Helper()
	s := &api.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Modules: []api.Module{&httppro.Module{}}}
	s.Handler()
	routes := s.ModuleRoutes()
	if len(routes) < 6 {
		t.Fatalf("the Pro module registers %d routes: %v", len(routes), routes)
	}
	for _, r := range routes {
		if !strings.HasPrefix(r.Path, "/pro/") {
			t.Errorf("Pro route %s %s is outside /pro/", r.Method, r.Path)
		}
	}
	return routes
}

// concrete fills a route's path variables.
func concrete(path string) string {
	for strings.Contains(path, "{") {
		i, j := strings.Index(path, "{"), strings.Index(path, "}")
		path = path[:i] + "1" + path[j+1:]
	}
	return path
}

func TestProSwitchedOff(t *testing.T) {
	routes := proRoutes(t)
	for _, tt := range []struct {
		name  string
		env   []string
		isOff bool
	}{
		{"off", []string{"MAIL_SVC_PRO_ENABLED=false"}, true},
		{"on by default", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc, call := start(t, t.TempDir(), tt.env...)
			// The screens' navigation shows the Pro tab only while Pro
			// serves its routes.
			if tabs := proTab(t, "http://"+svc.Addr); tabs != !tt.isOff {
				t.Errorf("the Pro tab in the navigation: %v, want %v", tabs, !tt.isOff)
			}
			for _, r := range routes {
				got := call(r.Method, concrete(r.Path), "{}")
				unknown := call(r.Method, "/no-such-route/at-all", "{}")
				if unknown.Status != 404 {
					t.Fatalf("unknown route: %d %s", unknown.Status, unknown.Body)
				}
				same := got.Status == unknown.Status && bytes.Equal(got.Body, unknown.Body)
				if same != tt.isOff {
					t.Errorf("%s %s: %d %s (unknown route: %d %s)", r.Method, r.Path, got.Status, got.Body, unknown.Status, unknown.Body)
				}
			}
		})
	}
}

// proTab reports whether the screens served at base list the Pro tab in
// their navigation (/admin/js/nav.js).
func proTab(t *testing.T, base string) bool {
	t.Helper()
	resp, err := http.Get(base + "/admin/js/nav.js")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /admin/js/nav.js: %d %v %s", resp.StatusCode, err, body)
	}
	return strings.Contains(string(body), `{"slug":"pro","title":"Pro","module":"pro.js"}`)
}
