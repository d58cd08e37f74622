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
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
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
// directories linked, and the PHP entry points the test uses (the front
// controller, wp-login.php, wp-admin's admin.php and the Dashboard's
// index.php) written to load the site's own wp-config.php (Debian's
// wp-config.php is a dispatcher to /etc/wordpress) and then run
// WordPress's own file without its wp-load.php line.
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
		if e.Name() != "admin.php" && e.Name() != "index.php" {
			link(filepath.Join(wpsite.WordPressDir, "wp-admin", e.Name()), filepath.Join(admin, e.Name()))
		}
	}
	config := wpsite.PHPString(site.WPConfigPath)
	adminPHP := "<?php\ndefine( 'WP_ADMIN', true );\nrequire " + config + ";\nchdir( ABSPATH . 'wp-admin' );\n" +
		"$src = str_replace( \"require_once dirname( __DIR__ ) . '/wp-load.php';\", '', file_get_contents( ABSPATH . 'wp-admin/admin.php' ) );\n" +
		"eval( '?>' . $src );\n"
	files := map[string]string{
		filepath.Join(root, "index.php"): "<?php\ndefine( 'WP_USE_THEMES', true );\n$wp_did_header = true;\nrequire " + config +
			";\nwp();\nrequire ABSPATH . WPINC . '/template-loader.php';\n",
		filepath.Join(root, "wp-login.php"): "<?php\nrequire " + config + ";\n" +
			"$src = str_replace( \"require __DIR__ . '/wp-load.php';\", '', file_get_contents( ABSPATH . 'wp-login.php' ) );\n" +
			"eval( '?>' . $src );\n",
		filepath.Join(admin, "admin.php"): adminPHP,
		filepath.Join(admin, "index.php"): adminPHP +
			"$src = str_replace( \"require_once __DIR__ . '/admin.php';\", '', file_get_contents( ABSPATH . 'wp-admin/index.php' ) );\n" +
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
// On the way, as a site owner would with pretty permalinks: the setup
// wizard with "Other SMTP" pointed at an SMTP server sends its test email;
// a password reset asked on wp-login.php arrives From the wizard's
// address; and with the SMTP server stopped, three more resets make the
// WordPress Dashboard show that mail is failing.
func TestNginxDocumentedConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	for _, tool := range []string{"nginx", "php-fpm8.2"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, "%s is missing: scripts/install-deps.sh installs it", tool)
		}
	}
	// A local site (application passwords over plain HTTP) that is the
	// live one: its mail is sent, not held by the staging guard.
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpn_", EnvironmentType: "local",
		ExtraConfig: "define( 'MAILSVC_SCREENS_URL', '/mailsvc/admin/' );\ndefine( 'MAILSVC_ENVIRONMENT', 'production' );"})
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

	b := newBrowser(t)
	browserLogin(t, b, site, site.AdminLogin)
	sink := smtpsink.Start(t, smtpsink.WithAuth("mailer", "s3cret-pass"))
	ownerWalkthrough(t, b, site, sink)

	appPW := site.CreateApplicationPassword(t, site.AdminLogin, "nginx test")
	admin := func(req *http.Request) { req.SetBasicAuth(site.AdminLogin, appPW) }
	r := servicetest.Call(t, "POST", site.SiteURL+"/wp-json/mailsvc/v1/connections",
		`{"name":"Office relay","driver":"smtp","settings":{"host":"127.0.0.1","port":2525,"encryption":"none","auth":false}}`, admin)
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("create connection through nginx: %d %s", r.Status, r.Body)
	}
	for _, pretty := range []bool{false, true} {
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
	ownerSeesFailure(t, b, site, sink)
}

// ownerWalkthrough: with pretty permalinks, the setup wizard of wp-admin's
// Mail page (the screens its frame shows, opened at the frame's address)
// with "Other SMTP" pointed at sink sends its test email; then a password
// reset asked on wp-login.php arrives From the wizard's address and name,
// not WordPress's wordpress@ sender.
func ownerWalkthrough(t *testing.T, b *browser, site *wpsite.Site, sink *smtpsink.Sink) {
	t.Helper()
	site.PHP(t, `update_option( 'permalink_structure', '/%postname%/' ); delete_option( 'rewrite_rules' );`)
	site.CreateUser(t, "resetme", "resetme@example.com", "subscriber", "Old-pass-123")
	var src string
	b.run("open wp-admin's Mail page", chromedp.Navigate(site.SiteURL+"/wp-admin/admin.php?page=mailsvc"),
		chromedp.WaitVisible("iframe#mailsvc-screens", chromedp.ByQuery),
		chromedp.AttributeValue("iframe#mailsvc-screens", "src", &src, nil, chromedp.ByQuery))
	base, _ := url.Parse(site.SiteURL + "/wp-admin/")
	frame, err := base.Parse(src)
	if err != nil {
		t.Fatalf("the frame's address %q: %v", src, err)
	}
	b.run("set up sending with the wizard", append(append([]chromedp.Action{chromedp.Navigate(frame.String()),
		chromedp.WaitVisible("#ob-driver", chromedp.ByQuery),
		fill("#ob-driver", "smtp"),
		chromedp.WaitVisible(`#onboarding [name="host"]`, chromedp.ByQuery)},
		wizardRelaySteps(sink)...),
		chromedp.WaitVisible("#onboarding .notice-success", chromedp.ByQuery))...)
	if _, err := sink.WaitFor(1, time.Minute); err != nil {
		t.Fatalf("the wizard's test email did not arrive: %v", err)
	}
	resp, err := http.PostForm(site.SiteURL+"/wp-login.php?action=lostpassword", url.Values{"user_login": {"resetme"}, "wp-submit": {"Get New Password"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got, err := sink.WaitFor(2, time.Minute)
	if err != nil {
		t.Fatalf("the password reset asked on wp-login.php (%d) did not arrive: %v", resp.StatusCode, err)
	}
	if a := sender(t, got[1].Data); a.Address != "hello@shop.example" || a.Name != "Example Shop" {
		t.Errorf("the password reset arrived from %q <%s>, want the wizard's \"Example Shop\" <hello@shop.example>", a.Name, a.Address)
	}
}

// ownerSeesFailure: the SMTP server stops; three password resets asked
// on wp-login.php are refused, and the WordPress Dashboard (index.php
// through nginx and PHP-FPM) tells the owner that mail is failing.
func ownerSeesFailure(t *testing.T, b *browser, site *wpsite.Site, sink *smtpsink.Sink) {
	t.Helper()
	sink.Close()
	for range 3 {
		resp, err := http.PostForm(site.SiteURL+"/wp-login.php?action=lostpassword", url.Values{"user_login": {"resetme"}, "wp-submit": {"Get New Password"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		// The bridge keeps the service's answer a minute: drop it so the
		// Dashboard asks again.
		site.PHP(t, `delete_transient( 'mailsvc_attention' );`)
		b.run("open the WordPress Dashboard", chromedp.Navigate(site.SiteURL+"/wp-admin/index.php"), chromedp.WaitVisible("#adminmenu", chromedp.ByQuery))
		if b.has("#mailsvc-attention-failing") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the WordPress Dashboard never said mail is failing:\n%s", b.text())
		}
		time.Sleep(time.Second)
	}
	if txt := b.textOf("#mailsvc-attention-failing"); !strings.Contains(txt, "Mail is failing.") || !strings.Contains(txt, "The connection Office relay has been failing since") {
		t.Errorf("the Dashboard's notice says:\n%s", txt)
	}
	if txt := b.textOf("#mailsvc-widget"); !strings.Contains(txt, "Office relay") || !strings.Contains(txt, "Failing") {
		t.Errorf("the Mail widget says:\n%s", txt)
	}
}
