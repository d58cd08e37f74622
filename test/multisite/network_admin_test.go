package multisite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/internal/testenv"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// networkAdminRoutes serves Network Admin's admin.php with php -S,
// booted with the network's wp-config.php as a Network Admin request.
const networkAdminRoutes = `if ( '/wp-admin/network/admin.php' === $path ) {
	define( 'WP_ADMIN', true );
	define( 'WP_NETWORK_ADMIN', true );
	$_SERVER['SCRIPT_NAME'] = $_SERVER['PHP_SELF'] = '/wp-admin/network/admin.php';
	require %[2]s;
	chdir( ABSPATH . 'wp-admin/network' );
	$src = file_get_contents( ABSPATH . 'wp-admin/admin.php' );
	$src = str_replace( "require_once dirname( __DIR__ ) . '/wp-load.php';", '', $src );
	eval( '?>' . $src );
	return true;
}
`

// startNetworkAdmin serves the network (Network Admin's admin.php
// included) with php -S at its site URL, the bridge reaching the service
// at service, until the test ends.
func startNetworkAdmin(t *testing.T, n *wpsite.Network, service string) string {
	t.Helper()
	u, err := url.Parse(n.SiteURL)
	if err != nil {
		t.Fatal(err)
	}
	wpsite.ServeAdmin(t, n.Dir, n.WPConfigPath, u.Host, networkAdminRoutes, "MAILSVC_SERVICE_URL="+service)
	return "http://" + u.Host
}

// checkNetworkAdminMail opens Network Admin in chromium as the super
// admin: the Mail menu is there, its page lists every site of the
// network in its Site filter, and choosing a site shows the screens on
// the main site's REST URL limited to that site. service is the
// service's URL, for the bridge.
func checkNetworkAdminMail(t *testing.T, n *wpsite.Network, service string) {
	wp := startNetworkAdmin(t, n, service)
	var chromium string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		testenv.Missing(t, "chromium is not installed (Debian package chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	defer cancel()
	// Start the browser on ctx itself: the steps' deadlines end steps,
	// not the browser.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		c, done := context.WithTimeout(ctx, 60*time.Second)
		defer done()
		if err := chromedp.Run(c, actions...); err != nil {
			var text string
			_ = chromedp.Run(ctx, chromedp.Evaluate(`document.body ? document.body.innerText : ""`, &text))
			t.Fatalf("%s: %v\npage:\n%s", what, err, text)
		}
	}
	// The cookies WordPress's login sets: the auth cookie for wp-admin and
	// the logged-in cookie, on one session token.
	out := n.PHP(t, fmt.Sprintf(`$user = get_user_by( 'login', %s );
$exp = time() + 2 * DAY_IN_SECONDS;
$token = WP_Session_Tokens::get_instance( $user->ID )->create( $exp );
echo json_encode( array(
	array( 'name' => AUTH_COOKIE, 'value' => wp_generate_auth_cookie( $user->ID, $exp, 'auth', $token ), 'path' => ADMIN_COOKIE_PATH ),
	array( 'name' => LOGGED_IN_COOKIE, 'value' => wp_generate_auth_cookie( $user->ID, $exp, 'logged_in', $token ), 'path' => COOKIEPATH ),
) );`, wpsite.PHPString(n.AdminLogin)))
	var cookies []struct{ Name, Value, Path string }
	if err := json.Unmarshal([]byte(out), &cookies); err != nil || len(cookies) != 2 {
		t.Fatalf("login cookies %q: %v", out, err)
	}
	host := strings.Split(strings.TrimPrefix(wp, "http://"), ":")[0]
	for _, c := range cookies {
		run("set cookie "+c.Name, network.SetCookie(c.Name, url.QueryEscape(c.Value)).WithDomain(host).WithPath(c.Path).WithHTTPOnly(true))
	}

	run("open the Mail page", chromedp.Navigate(wp+"/wp-admin/network/admin.php?page=mailsvc-network"),
		chromedp.WaitReady(`#mailsvc-site`, chromedp.ByQuery))
	var menu string
	run("find the Mail menu", chromedp.Evaluate(`(document.querySelector('#adminmenu a[href*="page=mailsvc-network"]') || {}).href || ""`, &menu))
	if !strings.Contains(menu, "network/admin.php?page=mailsvc-network") {
		t.Fatalf("Mail menu links to %q", menu)
	}
	var options []string
	run("read the site filter", chromedp.Evaluate(`[...document.querySelectorAll('#mailsvc-site option')].map(o => o.value + ' ' + o.textContent)`, &options))
	want := []string{"0 All sites"}
	for _, s := range n.Sites {
		want = append(want, strconv.FormatInt(s.ID, 10)+" "+n.Domain+s.Path)
	}
	if !slices.Equal(options, want) {
		t.Fatalf("site filter %q, want %q", options, want)
	}
	var src string
	run("read the screens' frame", chromedp.AttributeValue(`#mailsvc-screens`, "src", &src, nil, chromedp.ByQuery))
	if strings.Contains(src, "site=") || !strings.Contains(src, "api=") {
		t.Fatalf("all sites: frame %q", src)
	}

	// Choosing a site submits the filter (its change handler).
	run("choose site 3", chromedp.Evaluate(`setTimeout(() => { const s = document.getElementById('mailsvc-site'); s.value = '3'; s.dispatchEvent(new Event('change')); }, 0)`, nil))
	// The filter's submit loads the page again. Ask the page, in one
	// script each time, until the new one is whole and shows the choice:
	// a step that holds a node across the reload, or a poll inside the
	// page being replaced, fails on the navigation itself.
	var choice []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
			const chosen = document.querySelector('#mailsvc-site option[value="3"][selected]');
			const frame = document.getElementById('mailsvc-screens');
			return document.readyState === 'complete' && chosen && frame
				? [document.getElementById('mailsvc-site').value, frame.getAttribute('src')] : [];
		})()`, &choice))
		if err == nil && len(choice) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("site 3 chosen: the page never showed it: %v, %q", err, choice)
		}
		time.Sleep(50 * time.Millisecond)
	}
	selected := choice[0]
	src = choice[1]
	_, fragment, _ := strings.Cut(src, "#")
	args, err := url.ParseQuery(fragment)
	if err != nil {
		t.Fatalf("frame %q: %v", src, err)
	}
	// The screens call the main site's REST API, for site 3.
	if api := args.Get("api"); selected != "3" || args.Get("site") != "3" || !strings.HasPrefix(api, strings.TrimSuffix(n.SiteURL, "/")) ||
		strings.Contains(api, "site3") || args.Get("nonce") == "" {
		t.Fatalf("site 3 chosen: %q, frame %q", selected, src)
	}
}
