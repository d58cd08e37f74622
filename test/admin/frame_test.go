package admin

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// TestScreensFrameAncestors reads who may frame the screens from the
// built binary: standalone only the service itself, beside WordPress also
// the origin of wp-admin (the siteurl option, or MAILSVC_ADMIN_URL when
// set), which frames them in its Mail page.
func TestScreensFrameAncestors(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpf_", SiteURL: "https://Blog.Example:8443"})
	cases := []struct {
		name string
		env  []string
		want string
	}{
		{"standalone", nil, "frame-ancestors 'self'"},
		{"beside WordPress", []string{"MAILSVC_WP_CONFIG=" + site.WPConfigPath}, "frame-ancestors 'self' https://blog.example:8443"},
		{"beside WordPress, admin page elsewhere", []string{"MAILSVC_WP_CONFIG=" + site.WPConfigPath,
			"MAILSVC_ADMIN_URL=https://admin.example/wp-admin/admin.php?page=mailsvc"}, "frame-ancestors 'self' https://admin.example"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			svc := servicetest.StartEnv(t, dir, servicetest.Environ(dir, c.env...))
			for _, path := range []string{"/admin/", "/admin/js/app.js"} {
				resp, err := http.Get("http://" + svc.Addr + path)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				csp := resp.Header.Get("Content-Security-Policy")
				if resp.StatusCode != http.StatusOK || !strings.HasSuffix(csp, "; "+c.want) {
					t.Errorf("GET %s: %d, Content-Security-Policy %q, want it to end with %q", path, resp.StatusCode, csp, c.want)
				}
				if xfo := resp.Header.Get("X-Frame-Options"); xfo != "" {
					t.Errorf("GET %s: X-Frame-Options %q refuses a wp-admin on another origin", path, xfo)
				}
			}
		})
	}
}
