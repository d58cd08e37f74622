package install

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// siteProxy serves the site's own URL on addr as the documented nginx
// proxy does: /wp-json/mailsvc/… and /?rest_route=/mailsvc/… go to the
// service at service (host:port), everything else is 404.
func siteProxy(t *testing.T, addr, service string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: service})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if route := r.URL.Query().Get("rest_route"); r.URL.Path == "/" && strings.HasPrefix(route, "/mailsvc/") {
			r.URL.Path, r.URL.RawQuery = "/wp-json"+route, ""
		}
		if !strings.HasPrefix(r.URL.Path, "/wp-json/mailsvc/") {
			http.NotFound(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
}

// hasVerdict reports whether the doctor's output has a line with verdict
// for the check titled title.
func hasVerdict(out, verdict, title string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == verdict && strings.Contains(line, title) {
			return true
		}
	}
	return false
}

func TestDoctorBesideWordPress(t *testing.T) {
	siteAddr := servicetest.FreeAddr(t)
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpd_", EnvironmentType: "local", SiteURL: "http://" + siteAddr})
	dir := t.TempDir()
	// An application password made before the bridge is installed, so
	// that no page load runs the bridge before the service is called.
	pass := site.CreateApplicationPassword(t, site.AdminLogin, "doctor")
	installEnv := servicetest.Environ(dir)
	r := servicetest.Run(dir, installEnv, "", "wp", "install", "--wp-path", site.Dir)
	if r.Code != 0 {
		t.Fatalf("wp install: %s%s", r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "Load any page of the site once") {
		t.Errorf("wp install does not say a page load publishes the site's filters:\n%s", r.Stdout)
	}
	// The migrations are one line; the next step, run by hand, is serve.
	if !strings.Contains(r.Stdout, "Database: migrated to schema ") || strings.Contains(r.Stderr, "applied schema migration") {
		t.Errorf("wp install does not say the migration in one line:\n%s%s", r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "run `mailsvc serve`") {
		t.Errorf("wp install of a binary outside the package does not say to run mailsvc serve:\n%s", r.Stdout)
	}
	svc := servicetest.Start(t, dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath)
	if want := "Open wp-admin → Mail (http://" + siteAddr + "/wp-admin/admin.php?page=mailsvc)"; !strings.Contains(svc.Stdout.String(), want) {
		t.Errorf("serve beside WordPress does not point to wp-admin → Mail %q:\n%s", want, svc.Stdout)
	}
	// Until the bridge's first page load publishes the site's filters the
	// service refuses every route, and its log says what to do; the first
	// page load opens the API at once.
	if resp := servicetest.Call(t, "GET", svc.Base+"/settings", "", servicetest.Basic(site.AdminLogin, pass)); resp.Status != 403 {
		t.Errorf("GET /settings before the bridge's first page load: %d %s, want 403", resp.Status, resp.Body)
	}
	if !strings.Contains(svc.Stderr.String(), "load any page of the site") {
		t.Errorf("the service's log does not say to load a page of the site:\n%s", svc.Stderr)
	}
	site.PHP(t, `echo "the first page load runs the bridge";`)
	if resp := servicetest.Call(t, "GET", svc.Base+"/settings", "", servicetest.Basic(site.AdminLogin, pass)); resp.Status != 200 {
		t.Errorf("GET /settings after the first page load: %d %s, want 200", resp.Status, resp.Body)
	}
	siteProxy(t, siteAddr, svc.Addr)
	doctorEnv := servicetest.Environ(dir, "MAILSVC_ADDR="+svc.Addr)

	r = servicetest.Run(dir, doctorEnv, "", "doctor", "--wp-path", site.Dir)
	if r.Code != 0 {
		t.Fatalf("doctor on a working site: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, title := range []string{
		"Database reachable and migrated",
		"wp-config.php read and the table prefix",
		"wp_mail() bridge installed and matching the service",
		"Service running",
		"REST API reachable through the site's URL",
		"Admin screens reachable",
		"HTTPS for application passwords",
	} {
		if !hasVerdict(r.Stdout, "ok", title) {
			t.Errorf("doctor output lacks ok for %q:\n%s", title, r.Stdout)
		}
	}
	// The site is "local": the staging guard holds its mail, and says so.
	if !hasVerdict(r.Stdout, "warning", "Staging guard") || !strings.Contains(r.Stdout, "This site is a local site (WP_ENVIRONMENT_TYPE). Mail is being held.") {
		t.Errorf("doctor output lacks the staging guard's warning:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stdout, "table prefix wpd_") {
		t.Errorf("doctor does not show the table prefix:\n%s", r.Stdout)
	}

	// The same report from GET /tools/doctor, with an application password.
	resp := servicetest.Call(t, "GET", svc.Base+"/tools/doctor", "", servicetest.Basic(site.AdminLogin, pass))
	var report struct {
		Healthy bool
		Checks  []struct{ Name, Verdict string }
	}
	if resp.JSON(t, &report); resp.Status != 200 || !report.Healthy || len(report.Checks) < 10 {
		t.Fatalf("GET /tools/doctor: %d %s", resp.Status, resp.Body)
	}

	// The service stopped: non-zero, and the fix says to start it.
	svc.Stop(t)
	r = servicetest.Run(dir, doctorEnv, "", "doctor", "--wp-path", site.Dir)
	if r.Code == 0 {
		t.Fatalf("doctor with the service stopped exited 0:\n%s", r.Stdout)
	}
	if !hasVerdict(r.Stdout, "error", "Service running") {
		t.Errorf("doctor output lacks the service's error:\n%s", r.Stdout)
	}
	for _, want := range []string{"The service does not answer at http://" + svc.Addr, "fix: Start it: systemctl start mailsvc"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, r.Stdout)
		}
	}
	if !strings.Contains(r.Stderr, "checks failed") {
		t.Errorf("doctor's error: %s", r.Stderr)
	}
	var js struct{ Healthy bool }
	out := servicetest.Run(dir, doctorEnv, "", "doctor", "--wp-path", site.Dir, "--json")
	if err := json.Unmarshal([]byte(out.Stdout), &js); err != nil || js.Healthy || out.Code == 0 {
		t.Errorf("doctor --json: exit %d, %v\n%s", out.Code, err, out.Stdout)
	}
}
