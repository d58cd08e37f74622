package admin

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/internal/testenv"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// documentedNginx returns the nginx configuration of docs/operations.md
// for this test's site: the server listens at addr over plain HTTP (no
// certificate), serves docroot, passes PHP to the FPM socket and proxies
// to the service at svcAddr. Each replaced line must be in the document
// exactly once, so the test follows the document.
func documentedNginx(t *testing.T, addr, docroot, sock, svcAddr string) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```nginx\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/operations.md has no nginx block")
	}
	conf := string(m[1])
	for _, r := range []struct{ old, new string }{
		{"listen 443 ssl http2;", "listen " + addr + ";"},
		{"    ssl_certificate     /etc/letsencrypt/live/example.org/fullchain.pem;\n", ""},
		{"    ssl_certificate_key /etc/letsencrypt/live/example.org/privkey.pem;\n", ""},
		{"server_name example.org;", "server_name 127.0.0.1;"},
		{"root /var/www/example.org;", "root " + docroot + ";"},
		{"server 127.0.0.1:8025;", "server " + svcAddr + ";"},
	} {
		if strings.Count(conf, r.old) != 1 {
			t.Fatalf("docs/operations.md's nginx block has %q %d times, want once", r.old, strings.Count(conf, r.old))
		}
		conf = strings.Replace(conf, r.old, r.new, 1)
	}
	conf = strings.ReplaceAll(conf, "unix:/run/php/php8.2-fpm.sock", "unix:"+sock)
	return conf
}

// docrootFiles lays out a document root for nginx: WordPress's own
// directories linked, and the two PHP entry points the test uses written
// to load the site's own wp-config.php (Debian's wp-config.php is a
// dispatcher to /etc/wordpress).
func docrootFiles(t *testing.T, site *wpsite.Site) string {
	t.Helper()
	root := filepath.Join(site.Dir, "docroot")
	admin := filepath.Join(root, "wp-admin")
	if err := os.MkdirAll(admin, 0o755); err != nil {
		t.Fatal(err)
	}
	link := func(target, name string) {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(wpsite.WordPressDir, "wp-includes"), filepath.Join(root, "wp-includes"))
	link(site.ContentDir, filepath.Join(root, "wp-content"))
	entries, err := os.ReadDir(filepath.Join(wpsite.WordPressDir, "wp-admin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "admin.php" {
			link(filepath.Join(wpsite.WordPressDir, "wp-admin", e.Name()), filepath.Join(admin, e.Name()))
		}
	}
	config := wpsite.PHPString(site.WPConfigPath)
	files := map[string]string{
		filepath.Join(root, "index.php"): "<?php\ndefine( 'WP_USE_THEMES', true );\n$wp_did_header = true;\nrequire " + config +
			";\nwp();\nrequire ABSPATH . WPINC . '/template-loader.php';\n",
		filepath.Join(admin, "admin.php"): "<?php\ndefine( 'WP_ADMIN', true );\nrequire " + config + ";\nchdir( ABSPATH . 'wp-admin' );\n" +
			"$src = str_replace( \"require_once dirname( __DIR__ ) . '/wp-load.php';\", '', file_get_contents( ABSPATH . 'wp-admin/admin.php' ) );\n" +
			"eval( '?>' . $src );\n",
	}
	for name, body := range files {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// startProcess starts a foreground server for the test's duration and
// waits until ready reports true.
func startProcess(t *testing.T, name string, ready func() bool, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	logs := &servicetest.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, logs)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !ready() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not become ready:\n%s", name, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestNginxDocumentedConfig runs the nginx configuration of
// docs/operations.md (the fast path) with Debian's nginx and php-fpm in
// front of a real site: nginx -t accepts it; the REST API answers an
// application password straight from the service in every form the
// document routes (/wp-json/, ?rest_route= on / and /index.php, with
// literal and with encoded slashes) while the bridge's own routes stay
// with PHP; and wp-admin's Mail page loads the screens from
// /mailsvc/admin/ with their data, with pretty and with plain permalinks.
func TestNginxDocumentedConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	for _, tool := range []string{"nginx", "php-fpm8.2"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, "%s is missing: scripts/install-deps.sh installs it", tool)
		}
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpn_", EnvironmentType: "local",
		ExtraConfig: "define( 'MAILSVC_SCREENS_URL', '/mailsvc/admin/' );"})
	dir := t.TempDir()
	if r := servicetest.Run(dir, servicetest.Environ(dir), "", "wp", "install", "--wp-path", site.Dir); r.Code != 0 {
		t.Fatalf("wp install: %+v", r)
	}
	svc := servicetest.StartEnv(t, dir, servicetest.Environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1"))
	u, err := url.Parse(site.SiteURL)
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(site.Dir, "run")
	for _, d := range []string{"tmp", "logs"} {
		if err := os.MkdirAll(filepath.Join(run, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root := os.Geteuid() == 0
	// The test's directories are private to the user running it: the
	// workers run as that user (root in CI, which both servers allow only
	// when told).
	sock := filepath.Join(run, "fpm.sock")
	fpmConf := filepath.Join(run, "php-fpm.conf")
	fpm := fmt.Sprintf("[global]\npid = %[1]s/fpm.pid\nerror_log = %[1]s/logs/fpm.log\ndaemonize = no\n\n[www]\nlisten = %[2]s\npm = static\npm.max_children = 3\nclear_env = no\nenv[MAILSVC_SERVICE_URL] = http://%[3]s\n", run, sock, svc.Addr)
	if root {
		fpm += "user = root\ngroup = root\n"
	}
	if err := os.WriteFile(fpmConf, []byte(fpm), 0o644); err != nil {
		t.Fatal(err)
	}
	fpmArgs := []string{"-F", "-y", fpmConf, "-p", run}
	if root {
		fpmArgs = append(fpmArgs, "-R")
	}
	startProcess(t, "php-fpm8.2", func() bool { _, err := os.Stat(sock); return err == nil }, fpmArgs...)

	docroot := docrootFiles(t, site)
	main := fmt.Sprintf("pid %[1]s/nginx.pid;\nerror_log %[1]s/logs/error.log;\ndaemon off;\nevents {}\nhttp {\n"+
		"include /etc/nginx/mime.types;\naccess_log off;\nclient_body_temp_path %[1]s/tmp/body;\nproxy_temp_path %[1]s/tmp/proxy;\n"+
		"fastcgi_temp_path %[1]s/tmp/fastcgi;\nuwsgi_temp_path %[1]s/tmp/uwsgi;\nscgi_temp_path %[1]s/tmp/scgi;\n%[2]s\n}\n",
		run, documentedNginx(t, u.Host, docroot, sock, svc.Addr))
	if root {
		main = "user root root;\n" + main
	}
	// Relative includes are relative to the configuration's directory, as
	// they are to /etc/nginx.
	for _, f := range []string{"snippets", "fastcgi.conf"} {
		if err := os.Symlink(filepath.Join("/etc/nginx", f), filepath.Join(run, f)); err != nil {
			t.Fatal(err)
		}
	}
	nginxConf := filepath.Join(run, "nginx.conf")
	if err := os.WriteFile(nginxConf, []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("nginx", "-t", "-c", nginxConf, "-p", run).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t: %v\n%s\n%s", err, out, main)
	}
	startProcess(t, "nginx", func() bool {
		resp, err := http.Get(site.SiteURL + "/wp-includes/css/dashicons.min.css")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}, "-c", nginxConf, "-p", run)

	appPW := site.CreateApplicationPassword(t, site.AdminLogin, "nginx test")
	admin := func(req *http.Request) { req.SetBasicAuth(site.AdminLogin, appPW) }
	r := servicetest.Call(t, "POST", site.SiteURL+"/wp-json/mailsvc/v1/connections",
		`{"name":"Office relay","driver":"smtp","settings":{"host":"127.0.0.1","port":2525,"encryption":"none","auth":false}}`, admin)
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("create connection through nginx: %d %s", r.Status, r.Body)
	}
	b := newBrowser(t)
	browserLogin(t, b, site, site.AdminLogin)
	for _, pretty := range []bool{true, false} {
		structure := ""
		if pretty {
			structure = "/%postname%/"
		}
		site.PHP(t, fmt.Sprintf(`update_option( 'permalink_structure', %s ); delete_option( 'rewrite_rules' );`, wpsite.PHPString(structure)))
		name := map[bool]string{true: "pretty", false: "plain"}[pretty]
		// Straight from the service: WordPress's REST server would add
		// its Access-Control-Allow-Headers.
		for _, path := range []string{"/wp-json/mailsvc/v1/settings", "/?rest_route=/mailsvc/v1/settings",
			"/index.php?rest_route=/mailsvc/v1/settings", "/index.php?rest_route=%2Fmailsvc%2Fv1%2Fsettings&context=edit"} {
			r := servicetest.Call(t, "GET", site.SiteURL+path, "", admin)
			if r.Status != 200 || r.Header.Get("Access-Control-Allow-Headers") != "" {
				t.Errorf("%s permalinks, GET %s: %d %v %s, want 200 from the service", name, path, r.Status, r.Header, r.Body)
			}
		}
		r := servicetest.Call(t, "GET", site.SiteURL+"/?rest_route=/wp/v2/users/me", "", admin)
		if r.Status != 200 || r.Header.Get("Access-Control-Allow-Headers") == "" {
			t.Errorf("%s permalinks, WordPress's own users/me: %d %s, want 200 from WordPress", name, r.Status, r.Body)
		}

		b.run("open wp-admin's Mail page ("+name+" permalinks)",
			chromedp.Navigate(site.SiteURL+"/wp-admin/admin.php?page=mailsvc"),
			chromedp.WaitVisible("iframe#mailsvc-screens", chromedp.ByQuery))
		var frames []*cdp.Node
		b.run("find the frame", chromedp.Nodes("iframe#mailsvc-screens", &frames, chromedp.ByQuery))
		in := chromedp.FromNode(frames[0])
		b.run("the dashboard loads its data ("+name+" permalinks)", chromedp.WaitVisible("svg.chart", chromedp.ByQuery, in))
		b.run("the connections load ("+name+" permalinks)",
			chromedp.Click(`nav a[data-screen="connections"]`, chromedp.ByQuery, in),
			chromedp.WaitVisible(`a[href="#/connections/1"]`, chromedp.ByQuery, in))
	}
}
