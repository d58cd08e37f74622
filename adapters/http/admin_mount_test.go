package http_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/http/admin"
)

// TestAdminMount serves the admin screens beside the REST API when Admin
// is set, and leaves /admin/ an unknown route when it is not.
func TestAdminMount(t *testing.T) {
	for _, mounted := range []bool{true, false} {
		s, _ := newAPI()
		if mounted {
			s.Admin = admin.Handler()
		}
		ts := httptest.NewServer(s.Handler())
		defer ts.Close()
		cases := []struct {
			path   string
			status int
			want   string
		}{
			{"/admin/", 200, `src="js/app.js"`},
			{"/admin/js/app.js", 200, "import * as api"},
			{"/administrator", 404, "rest_no_route"},
		}
		if !mounted {
			cases = []struct {
				path   string
				status int
				want   string
			}{{"/admin/", 404, "rest_no_route"}}
		}
		for _, c := range cases {
			resp, err := http.Get(ts.URL + c.path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(string(body), c.want) {
				t.Errorf("mounted=%v GET %s: %d %.200s, want %d with %q", mounted, c.path, resp.StatusCode, body, c.status, c.want)
			}
		}
		// The REST API still answers under its namespace.
		resp, err := http.Get(ts.URL + "/wp-json/mailsvc/v1/settings")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("mounted=%v anonymous GET /settings: %d, want 401", mounted, resp.StatusCode)
		}
	}
}
