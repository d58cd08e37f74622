package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// adminRouter serves wp-admin with php -S for this test: wpsite's router
// serves only the front controller, and wp-admin/admin.php would load
// Debian's dispatcher through wp-load.php. This router boots WordPress
// with the site's own wp-config.php as an admin request, then runs
// admin.php without its wp-load.php line. Static files (CSS, JS) and
// load-styles.php/load-scripts.php (which need no configuration) are
// served as they are; everything else goes to the front controller.
const adminRouter = `<?php
$path = rawurldecode( parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ) );
if ( str_contains( $path, '..' ) ) { http_response_code( 400 ); return true; }
if ( in_array( $path, array( '/wp-admin/load-styles.php', '/wp-admin/load-scripts.php' ), true ) ) { return false; }
if ( ! str_ends_with( $path, '.php' ) && '/' !== $path && is_file( %[1]s . ltrim( $path, '/' ) ) ) { return false; }
if ( '/wp-admin/' === $path || '/wp-admin/admin.php' === $path || '/wp-admin/index.php' === $path ) {
	define( 'WP_ADMIN', true );
	$_SERVER['SCRIPT_NAME'] = $_SERVER['PHP_SELF'] = '/wp-admin/admin.php';
	require %[2]s;
	chdir( ABSPATH . 'wp-admin' );
	$src = file_get_contents( ABSPATH . 'wp-admin/admin.php' );
	$src = str_replace( "require_once dirname( __DIR__ ) . '/wp-load.php';", '', $src );
	eval( '?>' . $src );
	return true;
}
$_SERVER['SCRIPT_NAME'] = $_SERVER['PHP_SELF'] = '/index.php';
define( 'WP_USE_THEMES', true );
require %[2]s;
wp();
require ABSPATH . WPINC . '/template-loader.php';
`

// startWPAdmin serves the site (wp-admin included) at its site URL with
// extra environment variables for wp-config.php.
func startWPAdmin(t *testing.T, site *wpsite.Site, env ...string) {
	t.Helper()
	u, err := url.Parse(site.SiteURL)
	if err != nil {
		t.Fatal(err)
	}
	router := filepath.Join(site.Dir, "admin-router.php")
	script := fmt.Sprintf(adminRouter, wpsite.PHPString(wpsite.WordPressDir), wpsite.PHPString(site.WPConfigPath))
	if err := os.WriteFile(router, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("php", "-d", "display_errors=stderr", "-d", "log_errors=0", "-d", "html_errors=0",
		"-S", u.Host, "-t", wpsite.WordPressDir, router)
	cmd.Dir = site.Dir
	cmd.Env = append(append(os.Environ(), "PHP_CLI_SERVER_WORKERS=4"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	logs := &servicetest.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("php -S: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("php -S output:\n%s", logs)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(site.SiteURL + "/wp-admin/load-styles.php")
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("php -S did not answer at %s: %v\n%s", site.SiteURL, err, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// browserLogin gives the browser the cookies WordPress's login sets: the
// auth cookie for wp-admin and the logged-in cookie, on one session token.
func browserLogin(t *testing.T, b *browser, site *wpsite.Site, login string) {
	t.Helper()
	out := site.PHP(t, fmt.Sprintf(`$user = get_user_by( 'login', %s );
$exp = time() + 2 * DAY_IN_SECONDS;
$token = WP_Session_Tokens::get_instance( $user->ID )->create( $exp );
echo json_encode( array(
	array( 'name' => AUTH_COOKIE, 'value' => wp_generate_auth_cookie( $user->ID, $exp, 'auth', $token ), 'path' => ADMIN_COOKIE_PATH ),
	array( 'name' => LOGGED_IN_COOKIE, 'value' => wp_generate_auth_cookie( $user->ID, $exp, 'logged_in', $token ), 'path' => COOKIEPATH ),
) );`, wpsite.PHPString(login)))
	var cookies []struct{ Name, Value, Path string }
	if err := json.Unmarshal([]byte(out), &cookies); err != nil {
		t.Fatalf("login cookies %q: %v", out, err)
	}
	b.run("clear cookies", network.ClearBrowserCookies())
	for _, c := range cookies {
		b.run("set cookie "+c.Name, network.SetCookie(c.Name, url.QueryEscape(c.Value)).
			WithDomain("127.0.0.1").WithPath(c.Path).WithHTTPOnly(true))
	}
}

// TestWPAdminMailMenu opens the Mail menu of a real wp-admin with a real
// login: the screens load the service's data with the session cookie and
// the page's nonce, without a second sign-in; a subscriber has no menu and
// the screens show access denied, never data.
func TestWPAdminMailMenu(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	b := newBrowser(t)
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpa_",
		ExtraConfig: "define( 'MAILSVC_SCREENS_URL', getenv( 'MAILSVC_TEST_SCREENS_URL' ) );\n" +
			"define( 'MAILSVC_SCREENS_API_URL', getenv( 'MAILSVC_TEST_SCREENS_API_URL' ) );\n"})
	dir := t.TempDir()
	if r := servicetest.Run(dir, servicetest.Environ(dir), "", "wp", "install", "--wp-path", site.Dir); r.Code != 0 {
		t.Fatalf("wp install: %+v", r)
	}
	svc := servicetest.StartEnv(t, dir, servicetest.Environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1"))
	appPW := site.CreateApplicationPassword(t, site.AdminLogin, "admin screens test")
	r := servicetest.Call(t, "POST", svc.Base+"/connections",
		`{"name":"Office relay","driver":"smtp","settings":{"host":"127.0.0.1","port":2525,"encryption":"none","auth":false}}`,
		func(req *http.Request) {
			req.SetBasicAuth(site.AdminLogin, appPW)
			req.Header.Set("X-Forwarded-Proto", "https")
		})
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	site.CreateUser(t, "sam", "sam@example.com", "subscriber", "sam-password-1")
	startWPAdmin(t, site, "MAILSVC_TEST_SCREENS_URL=http://"+svc.Addr+"/admin/", "MAILSVC_TEST_SCREENS_API_URL="+svc.Base)

	// The administrator: the Mail menu, and the screens inside it with data.
	browserLogin(t, b, site, site.AdminLogin)
	b.run("open wp-admin's Mail page",
		chromedp.Navigate(site.SiteURL+"/wp-admin/admin.php?page=mailsvc"),
		chromedp.WaitVisible(`#adminmenu a[href="admin.php?page=mailsvc"]`, chromedp.ByQuery),
		chromedp.WaitVisible("iframe#mailsvc-screens", chromedp.ByQuery))
	var frames []*cdp.Node
	b.run("find the frame", chromedp.Nodes("iframe#mailsvc-screens", &frames, chromedp.ByQuery))
	b.run("the screens inside wp-admin load data",
		chromedp.WaitVisible("svg.chart", chromedp.ByQuery, chromedp.FromNode(frames[0])),
		chromedp.WaitVisible(`a[href="#/connections/1"]`, chromedp.ByQuery, chromedp.FromNode(frames[0])))
	var frameText string
	b.run("frame text", chromedp.Text("#main", &frameText, chromedp.ByQuery, chromedp.FromNode(frames[0])))
	if !strings.Contains(frameText, "Office relay") || strings.Contains(frameText, "Sign in") {
		t.Errorf("the screens in wp-admin did not load the connections without a sign-in:\n%s", frameText)
	}
	b.screenshot("wp-admin-mail")
	b.run("open the connections inside wp-admin",
		chromedp.Click(`nav a[data-screen="connections"]`, chromedp.ByQuery, chromedp.FromNode(frames[0])),
		chromedp.WaitVisible(`#set-default_connection_id`, chromedp.ByQuery, chromedp.FromNode(frames[0])))
	b.screenshot("wp-admin-connections")

	// The subscriber: no menu, WordPress refuses the page, and the screens
	// given the subscriber's own session show access denied.
	browserLogin(t, b, site, "sam")
	b.run("subscriber opens the Mail page", chromedp.Navigate(site.SiteURL+"/wp-admin/admin.php?page=mailsvc"),
		chromedp.WaitReady("body", chromedp.ByQuery))
	if txt := b.text(); !strings.Contains(txt, "not allowed") || strings.Contains(txt, "Office relay") {
		t.Errorf("subscriber's Mail page is not refused:\n%s", txt)
	}
	var frameCount int
	b.eval(`document.querySelectorAll("iframe#mailsvc-screens").length`, &frameCount)
	if frameCount != 0 {
		t.Error("the subscriber got the screens' frame")
	}
	samCookie := site.LoginCookie(t, "sam")
	nonce := site.RESTNonce(t, "sam", samCookie)
	b.run("clear cookies", network.ClearBrowserCookies())
	b.run("subscriber cookie", network.SetCookie(samCookie.Name, samCookie.Value).WithDomain("127.0.0.1").WithPath("/").WithHTTPOnly(true))
	b.run("subscriber opens the screens",
		chromedp.Navigate("http://"+svc.Addr+"/admin/#embed=wp&nonce="+nonce),
		chromedp.WaitVisible("main.denied", chromedp.ByQuery))
	if txt := b.text(); strings.Contains(txt, "Office relay") || !strings.Contains(txt, "Access denied") {
		t.Errorf("subscriber sees data or no denial:\n%s", txt)
	}
	b.screenshot("access-denied")
}
