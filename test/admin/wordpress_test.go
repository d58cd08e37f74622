package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// adminRoutes are the admin entry points the tests serve with php -S:
// admin.php booted with the site's own wp-config.php as an admin request
// (and, for the WordPress Dashboard, index.php after it), and
// admin-ajax.php the same way.
const adminRoutes = `if ( '/wp-admin/' === $path || '/wp-admin/admin.php' === $path || '/wp-admin/index.php' === $path ) {
	define( 'WP_ADMIN', true );
	$dashboard = '/wp-admin/admin.php' !== $path;
	$_SERVER['SCRIPT_NAME'] = $_SERVER['PHP_SELF'] = $dashboard ? '/wp-admin/index.php' : '/wp-admin/admin.php';
	require %[2]s;
	chdir( ABSPATH . 'wp-admin' );
	$src = file_get_contents( ABSPATH . 'wp-admin/admin.php' );
	$src = str_replace( "require_once dirname( __DIR__ ) . '/wp-load.php';", '', $src );
	eval( '?>' . $src );
	if ( $dashboard ) {
		// The WordPress Dashboard: index.php after admin.php, as its own
		// first line would load it.
		$src = file_get_contents( ABSPATH . 'wp-admin/index.php' );
		eval( '?>' . str_replace( "require_once __DIR__ . '/admin.php';", '', $src ) );
	}
	return true;
}
if ( '/wp-admin/admin-ajax.php' === $path ) {
	define( 'DOING_AJAX', true );
	define( 'WP_ADMIN', true );
	$_SERVER['SCRIPT_NAME'] = $_SERVER['PHP_SELF'] = '/wp-admin/admin-ajax.php';
	require %[2]s;
	chdir( ABSPATH . 'wp-admin' );
	$src = file_get_contents( ABSPATH . 'wp-admin/admin-ajax.php' );
	$src = str_replace( array( "require_once dirname( __DIR__ ) . '/wp-load.php';", "define( 'DOING_AJAX', true );" ), '', $src );
	eval( '?>' . $src );
	return true;
}
`

// startWPAdmin serves the site (wp-admin included) with php -S at addr,
// the PHP-FPM behind the web server of a real deployment, with extra
// environment variables for wp-config.php.
func startWPAdmin(t testing.TB, site *wpsite.Site, addr string, env ...string) {
	t.Helper()
	wpsite.ServeAdmin(t, site.Dir, site.WPConfigPath, addr, adminRoutes, env...)
}

// startSiteProxy stands in for nginx configured as docs/operations.md
// says, at the site's address: /wp-json/mailsvc/ (and the ?rest_route=
// form) to the service as it is, /mailsvc/admin/ to the service's /admin/
// (the screens wp-admin's Mail page frames by default), everything else
// to WordPress at phpAddr. The Host header is passed on (proxy_set_header
// Host $host), with X-Forwarded-For and X-Forwarded-Proto.
func startSiteProxy(t *testing.T, site *wpsite.Site, phpAddr, svcAddr string) {
	t.Helper()
	u, err := url.Parse(site.SiteURL)
	if err != nil {
		t.Fatal(err)
	}
	to := func(addr string, path func(string) string) *httputil.ReverseProxy {
		target := &url.URL{Scheme: "http", Host: addr}
		return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.SetXForwarded()
			if path != nil {
				r.Out.URL.Path, r.Out.URL.RawPath = path(r.In.URL.Path), ""
			}
		}}
	}
	wordpress := to(phpAddr, nil)
	api := to(svcAddr, nil)
	screens := to(svcAddr, func(p string) string { return "/admin/" + strings.TrimPrefix(p, "/mailsvc/admin/") })
	mux := http.NewServeMux()
	mux.Handle("/wp-json/mailsvc/", api)                                                               // location ^~ /wp-json/mailsvc/
	mux.Handle("/mailsvc/admin/", screens)                                                             // location ^~ /mailsvc/admin/
	mux.Handle("/mailsvc/admin", http.RedirectHandler("/mailsvc/admin/", http.StatusMovedPermanently)) // nginx's redirect to the prefix
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.URL.Path == "/" || r.URL.Path == "/index.php") && strings.HasPrefix(r.URL.Query().Get("rest_route"), "/mailsvc/") {
			api.ServeHTTP(w, r) // map $arg_rest_route $mailsvc_rest_route
			return
		}
		wordpress.ServeHTTP(w, r)
	}))
	l, err := net.Listen("tcp", u.Host)
	if err != nil {
		t.Fatalf("listen at the site's address %s: %v", u.Host, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// loginCookie is a cookie WordPress's login sets, as PHP makes it.
type loginCookie struct{ Name, Value, Path string }

// loginCookies returns the cookies WordPress's login sets: the auth
// cookie for wp-admin and the logged-in cookie, on one session token.
func loginCookies(t *testing.T, site *wpsite.Site, login string) []loginCookie {
	t.Helper()
	out := site.PHP(t, fmt.Sprintf(`$user = get_user_by( 'login', %s );
$exp = time() + 2 * DAY_IN_SECONDS;
$token = WP_Session_Tokens::get_instance( $user->ID )->create( $exp );
echo json_encode( array(
	array( 'name' => AUTH_COOKIE, 'value' => wp_generate_auth_cookie( $user->ID, $exp, 'auth', $token ), 'path' => ADMIN_COOKIE_PATH ),
	array( 'name' => LOGGED_IN_COOKIE, 'value' => wp_generate_auth_cookie( $user->ID, $exp, 'logged_in', $token ), 'path' => COOKIEPATH ),
) );`, wpsite.PHPString(login)))
	var cookies []loginCookie
	if err := json.Unmarshal([]byte(out), &cookies); err != nil {
		t.Fatalf("login cookies %q: %v", out, err)
	}
	return cookies
}

// browserLogin gives the browser the cookies WordPress's login sets.
func browserLogin(t *testing.T, b *browser, site *wpsite.Site, login string) {
	t.Helper()
	cookies := loginCookies(t, site, login)
	b.run("clear cookies", network.ClearBrowserCookies())
	for _, c := range cookies {
		b.run("set cookie "+c.Name, network.SetCookie(c.Name, url.QueryEscape(c.Value)).
			WithDomain("127.0.0.1").WithPath(c.Path).WithHTTPOnly(true))
	}
}

// seedPostSMTPLog gives the site Post SMTP's log table with rows rows, one
// an hour from first (the site is on UTC, so its current_time('timestamp')
// is the Unix time).
func seedPostSMTPLog(t *testing.T, site *wpsite.Site, first time.Time, rows int) {
	t.Helper()
	site.CreateTable(t, wpsite.PostSMTPLogTable)
	site.PHP(t, fmt.Sprintf(`global $wpdb;
$values = array();
for ( $i = 0; $i < %d; $i++ ) {
	$values[] = $wpdb->prepare( '(%%s, %%s, %%s, %%s, %%s, %%s, %%d)', 0 === $i %% 10 ? 'SMTP Error: Could not authenticate.' : '1',
		'Shop <shop@example.com>', "customer$i@example.org", "customer$i@example.org", "Order #$i", "Order $i", %d + $i * HOUR_IN_SECONDS );
}
$sql = "INSERT INTO {$wpdb->prefix}post_smtp_logs (success, from_header, to_header, original_to, original_subject, original_message, time) VALUES " . implode( ',', $values );
if ( false === $wpdb->query( $sql ) ) {
	wpsite_fail( 'insert: ' . $wpdb->last_error );
}
`, rows, first.Unix()))
}

// logPage is the first page of a log list as the API answers it.
type logPage struct {
	total int
	ids   []int64
}

// TestWPAdminMailMenu opens the Mail menu of a real wp-admin with a real
// login, the screens served through the site's own /mailsvc/admin/ as
// the nginx configuration of docs/operations.md proxies it: they load the
// service's data with the session cookie and the page's nonce, without a
// second sign-in; another plugin's log is imported chunk by chunk with its
// progress; the imported logs are filtered by date and several deleted at
// once. A subscriber has no menu and the screens show access denied,
// never data.
func TestWPAdminMailMenu(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	b := newBrowser(t)
	// The fast path: the screens straight from the service, as nginx
	// proxies /mailsvc/admin/ (docs/operations.md).
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpa_", ExtraConfig: "define( 'MAILSVC_SCREENS_URL', '/mailsvc/admin/' );"})
	// Post SMTP's log: 650 rows (four chunks of the import), one an hour
	// from midnight UTC 28 days ago, so day d (0-based) holds rows
	// 24d..24d+23 and day 27 (yesterday) the last two.
	const imported = 650
	first := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -28)
	day := func(d int) string { return first.AddDate(0, 0, d).Format("2006-01-02") }
	seedPostSMTPLog(t, site, first, imported)
	dir := t.TempDir()
	if r := servicetest.Run(dir, servicetest.Environ(dir), "", "wp", "install", "--wp-path", site.Dir); r.Code != 0 {
		t.Fatalf("wp install: %+v", r)
	}
	svc := servicetest.StartEnv(t, dir, servicetest.Environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1"))
	appPW := site.CreateApplicationPassword(t, site.AdminLogin, "admin screens test")
	admin := func(req *http.Request) {
		req.SetBasicAuth(site.AdminLogin, appPW)
		req.Header.Set("X-Forwarded-Proto", "https")
	}
	r := servicetest.Call(t, "POST", svc.Base+"/connections",
		`{"name":"Office relay","driver":"smtp","settings":{"host":"127.0.0.1","port":2525,"encryption":"none","auth":false}}`, admin)
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	site.CreateUser(t, "sam", "sam@example.com", "subscriber", "sam-password-1")
	phpAddr := servicetest.FreeAddr(t)
	startWPAdmin(t, site, phpAddr, "MAILSVC_SERVICE_URL=http://"+svc.Addr)
	startSiteProxy(t, site, phpAddr, svc.Addr)
	logs := func(query string) logPage {
		t.Helper()
		r := servicetest.Call(t, "GET", svc.Base+"/logs?per_page=100&"+query, "", admin)
		var items []struct {
			ID int64 `json:"id"`
		}
		r.JSON(t, &items)
		var p logPage
		p.total, _ = strconv.Atoi(r.Header.Get("X-WP-Total"))
		for _, it := range items {
			p.ids = append(p.ids, it.ID)
		}
		return p
	}

	// The administrator: the Mail menu, and the screens inside it with
	// data, framed from the site's own /mailsvc/admin/.
	browserLogin(t, b, site, site.AdminLogin)
	b.run("open wp-admin's Mail page",
		chromedp.Navigate(site.SiteURL+"/wp-admin/admin.php?page=mailsvc"),
		chromedp.WaitVisible(`#adminmenu a[href="admin.php?page=mailsvc"]`, chromedp.ByQuery),
		chromedp.WaitVisible("iframe#mailsvc-screens", chromedp.ByQuery))
	var src string
	b.eval(`document.querySelector("iframe#mailsvc-screens").src`, &src)
	if !strings.HasPrefix(src, site.SiteURL+"/mailsvc/admin/#") || !strings.Contains(src, url.QueryEscape(site.SiteURL+"/wp-json/mailsvc/v1")) {
		t.Errorf("the Mail page frames %s, want the site's /mailsvc/admin/ calling the site's /wp-json/mailsvc/v1", src)
	}
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

	// The same screens in the tab itself, at the address the Mail page
	// frames (the session's cookie and its nonce), for the longer work.
	b.run("open the framed screens in the tab", chromedp.Navigate(src), chromedp.WaitVisible(`nav a[data-screen="tools"]`, chromedp.ByQuery))

	// Tools: Post SMTP's log comes in four chunks; the progress bar
	// advances through them and the import ends with the count.
	b.run("open tools", show("#/tools"), chromedp.WaitVisible("#mig-h", chromedp.ByQuery), settled())
	if txt := b.text(); !strings.Contains(txt, "Post SMTP") {
		t.Errorf("the import does not offer Post SMTP:\n%s", txt)
	}
	b.eval(`(() => { window.progressSeen = [];
		new MutationObserver(() => {
			const bar = document.querySelector("#mig-out progress"), line = document.querySelector("#mig-out p");
			if (bar) window.progressSeen.push({ value: bar.value, max: bar.max, line: line ? line.textContent : "" });
		}).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
		return true; })()`, nil)
	b.run("import Post SMTP", clickButton("Import Post SMTP"), chromedp.WaitVisible("#mig-out .notice-success", chromedp.ByQuery))
	if txt := b.textOf("#mig-out .notice-success"); !strings.Contains(txt, fmt.Sprintf("Imported. %d log rows.", imported)) {
		t.Errorf("the import ended with %q, want %d log rows", txt, imported)
	}
	var seen []struct {
		Value float64 `json:"value"`
		Max   float64 `json:"max"`
		Line  string  `json:"line"`
	}
	b.eval(`window.progressSeen`, &seen)
	var steps []float64
	for _, p := range seen {
		if p.Max == imported && p.Value > 0 && p.Value < imported && (len(steps) == 0 || steps[len(steps)-1] != p.Value) {
			steps = append(steps, p.Value)
			if want := fmt.Sprintf("%d of %d log rows imported", int(p.Value), imported); !strings.Contains(p.Line, want) {
				t.Errorf("progress at %v says %q, want %q", p.Value, p.Line, want)
			}
		}
	}
	if len(steps) < 3 || steps[0] != 200 || steps[1] != 400 || steps[2] != 600 {
		t.Errorf("the progress bar went through %v (all seen: %+v), want 200, 400, 600 of %d", steps, seen, imported)
	}
	if p := logs(""); p.total != imported {
		t.Errorf("the API lists %d logs after the import, want %d", p.total, imported)
	}
	b.screenshot("tools-import")

	// The logs' date filters narrow to the days asked (a date is its UTC
	// day, the bounds included), as the API does.
	b.run("open the logs", show("#/logs"), chromedp.WaitVisible("#log-date_from", chromedp.ByQuery), settled())
	filter := func(from, to string) (total string, ids []int64) {
		t.Helper()
		b.run("filter from "+from+" to "+to, fill("#log-date_from", from), fill("#log-date_to", to), submit("#log-date_from"))
		b.run("read the filtered list", chromedp.Poll(fmt.Sprintf(`(() => { const box = document.querySelector("#log-results");
			if (!box || box.hasAttribute("aria-busy") || !box.querySelector(".pager") || document.querySelector("#log-date_from").value !== %q
				|| document.querySelector("#log-date_to").value !== %q) return false;
			return { total: box.querySelector(".pager .muted").textContent,
				ids: [...box.querySelectorAll("tbody input[type=checkbox]")].map((c) => Number(c.value)) }; })()`, from, to), &struct {
			Total *string  `json:"total"`
			IDs   *[]int64 `json:"ids"`
		}{&total, &ids}, pollFast))
		return total, ids
	}
	for _, c := range []struct {
		name, from, to string
		want           int
	}{
		{"two days", day(3), day(4), 48},
		{"one day", day(10), day(10), 24},
		{"from the last full day on", day(26), "", 26},
		{"up to the first day", "", day(0), 24},
		{"a day with nothing", day(30), day(30), 0},
		{"everything", "", "", imported},
	} {
		total, ids := filter(c.from, c.to)
		if !strings.HasPrefix(total, fmt.Sprintf("%d logs", c.want)) {
			t.Errorf("%s (%s to %s): the list says %q, want %d logs", c.name, c.from, c.to, total, c.want)
		}
		api := logs("date_from=" + c.from + "&date_to=" + c.to)
		if api.total != c.want || len(ids) != min(c.want, 20) || (len(ids) > 0 && !contains(api.ids, ids...)) {
			t.Errorf("%s: the list shows %v, the API has %d logs %v", c.name, ids, api.total, api.ids)
		}
	}
	b.screenshot("logs-date-filter")

	// Bulk delete: three of the two days' logs, chosen by their boxes, are
	// gone from the list and from the API; the other 45 stay.
	ctx, stopListening := context.WithCancel(b.ctx)
	defer stopListening()
	chromedp.ListenTarget(ctx, func(ev any) { // "Delete 3 log(s)?": OK

		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			go func() { _ = chromedp.Run(b.ctx, page.HandleJavaScriptDialog(true)) }()
		}
	})
	_, shown := filter(day(3), day(4))
	if len(shown) < 5 {
		t.Fatalf("the two days show %d logs", len(shown))
	}
	gone := []int64{shown[0], shown[2], shown[4]}
	for _, id := range gone {
		b.run(fmt.Sprintf("select log %d", id), click(fmt.Sprintf(`#log-results tbody input[value="%d"]`, id)))
	}
	b.run("delete the selected logs", clickButton("Delete selected"), chromedp.WaitVisible("#flash .notice-success", chromedp.ByQuery))
	if txt := b.textOf("#flash .notice-success"); !strings.Contains(txt, "3 deleted") {
		t.Errorf("after the bulk delete the notice says %q", txt)
	}
	total, after := filter(day(3), day(4))
	if !strings.HasPrefix(total, "45 logs") || contains(after, gone[0]) || contains(after, gone[1]) || contains(after, gone[2]) {
		t.Errorf("after deleting %v the list says %q and shows %v", gone, total, after)
	}
	for _, id := range gone {
		if r := servicetest.Call(t, "GET", fmt.Sprintf("%s/logs/%d", svc.Base, id), "", admin); r.Status != http.StatusNotFound {
			t.Errorf("deleted log %d: GET answers %d", id, r.Status)
		}
	}
	if p := logs("date_from=" + day(3) + "&date_to=" + day(4)); p.total != 45 {
		t.Errorf("the API has %d logs on the two days after deleting 3 of 48", p.total)
	}
	b.screenshot("logs-bulk-deleted")
	stopListening()

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
		chromedp.Navigate(site.SiteURL+"/mailsvc/admin/#embed=wp&nonce="+nonce+"&api="+url.QueryEscape(site.SiteURL+"/wp-json/mailsvc/v1")),
		chromedp.WaitVisible("main.denied", chromedp.ByQuery))
	if txt := b.text(); strings.Contains(txt, "Office relay") || !strings.Contains(txt, "Access denied") {
		t.Errorf("subscriber sees data or no denial:\n%s", txt)
	}
	b.screenshot("access-denied")
}

// contains reports whether every one of want is in ids.
func contains(ids []int64, want ...int64) bool {
	for _, w := range want {
		found := false
		for _, id := range ids {
			found = found || id == w
		}
		if !found {
			return false
		}
	}
	return true
}
