package e2e

import (
	"github.com/mailsvc/mailsvc/test/servicetest"

	"net/http"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/wpsite"
)

// TestRealWordPressAuth installs a real WordPress site, makes users,
// application passwords, a logged-in cookie and REST nonces with
// WordPress's own functions, and checks that mailsvc, pointed at that
// site's wp-config.php, accepts exactly what it should.
func TestRealWordPressAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpx_"})
	site.CreateUser(t, "boss", "boss@example.com", "administrator", "Boss-pass-123")
	site.CreateUser(t, "reader", "reader@example.com", "subscriber", "Reader-pass-123")
	bossPW := site.CreateApplicationPassword(t, "boss", "mailsvc")
	readerPW := site.CreateApplicationPassword(t, "reader", "mailsvc")
	cookie := site.LoginCookie(t, "boss")
	nonce := site.RESTNonce(t, "boss", cookie)
	// A nonce from two ticks ago, computed by WordPress's own wp_hash for
	// the same user and session: stale, as one older than a day is.
	stale := strings.TrimSpace(site.PHPWithCookie(t, cookie.Value, `$u = get_user_by( 'login', 'boss' );
wp_set_current_user( $u->ID );
$i = wp_nonce_tick() - 2;
echo substr( wp_hash( $i . '|wp_rest|' . $u->ID . '|' . wp_get_session_token(), 'nonce' ), -12, 10 );`))
	readerCookie := site.LoginCookie(t, "reader")
	readerNonce := site.RESTNonce(t, "reader", readerCookie)

	svc := servicetest.Start(t, t.TempDir(), "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1")
	if svc.AdminPassword() != "" {
		t.Errorf("a WordPress-backed service created its own administrator:\n%s", svc.Stdout)
	}

	https := func(r *http.Request) { r.Header.Set("X-Forwarded-Proto", "https") }
	withCookie := func(c *http.Cookie, nonce string) func(*http.Request) {
		return func(r *http.Request) {
			r.AddCookie(c)
			if nonce != "" {
				r.Header.Set("X-WP-Nonce", nonce)
			}
		}
	}
	both := func(fs ...func(*http.Request)) func(*http.Request) {
		return func(r *http.Request) {
			for _, f := range fs {
				f(r)
			}
		}
	}
	tampered := *cookie
	tampered.Value = cookie.Value[:len(cookie.Value)-1] + flip(cookie.Value[len(cookie.Value)-1])

	cases := []struct {
		name   string
		auth   func(*http.Request)
		status int
		code   string
	}{
		{"administrator app password over https", both(basic("boss", bossPW), https), 200, ""},
		{"administrator app password, email as login", both(basic("boss@example.com", bossPW), https), 200, ""},
		{"app password over plain http on a production site", basic("boss", bossPW), 401, "rest_not_logged_in"},
		{"subscriber app password", both(basic("reader", readerPW), https), 403, "rest_forbidden"},
		{"wrong app password", both(basic("boss", "AAAA BBBB CCCC DDDD EEEE FFFF"), https), 401, "rest_not_logged_in"},
		{"login password over basic", both(basic("boss", "Boss-pass-123"), https), 401, "rest_not_logged_in"},
		{"cookie and nonce", withCookie(cookie, nonce), 200, ""},
		{"cookie and nonce as _wpnonce", withCookie(cookie, ""), 200, ""},
		{"cookie without nonce", withCookie(cookie, ""), 401, "rest_not_logged_in"},
		{"cookie and stale nonce", withCookie(cookie, stale), 401, "rest_not_logged_in"},
		{"cookie and another user's nonce", withCookie(cookie, readerNonce), 401, "rest_not_logged_in"},
		{"tampered cookie and nonce", withCookie(&tampered, nonce), 401, "rest_not_logged_in"},
		{"subscriber cookie and nonce", withCookie(readerCookie, readerNonce), 403, "rest_forbidden"},
		{"nothing", nil, 401, "rest_not_logged_in"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := svc.Base + "/settings"
			if c.name == "cookie and nonce as _wpnonce" {
				url += "?_wpnonce=" + nonce
			}
			r := call(t, "GET", url, "", c.auth)
			if r.Status != c.status || (c.code != "" && r.Code() != c.code) {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, c.status, c.code)
			}
		})
	}

	// A cookie request gets a fresh nonce back, as from WordPress, and it works.
	r := call(t, "GET", svc.Base+"/settings", "", withCookie(cookie, nonce))
	fresh := r.Header.Get("X-WP-Nonce")
	if len(fresh) != 10 {
		t.Fatalf("no fresh X-WP-Nonce after cookie auth: %v", r.Header)
	}
	if r := call(t, "GET", svc.Base+"/settings", "", withCookie(cookie, fresh)); r.Status != 200 {
		t.Errorf("fresh nonce refused: %d %s", r.Status, r.Body)
	}
	if r := call(t, "GET", svc.Base+"/settings", "", both(basic("boss", bossPW), https)); r.Header.Get("X-WP-Nonce") != "" {
		t.Errorf("an application-password request got a nonce")
	}

	// The service's own tables live in the WordPress database with its prefix.
	out := site.PHP(t, `global $wpdb; echo $wpdb->get_var( "SHOW TABLES LIKE 'wpx_mailsvc_connections'" );`)
	if strings.TrimSpace(out) != "wpx_mailsvc_connections" {
		t.Errorf("connections table not in the site database with its prefix: %q", out)
	}

	// Logging out in WordPress destroys the session: the cookie stops working.
	site.PHP(t, `WP_Session_Tokens::get_instance( get_user_by( 'login', 'boss' )->ID )->destroy_all();`)
	if r := call(t, "GET", svc.Base+"/settings", "", withCookie(cookie, nonce)); r.Status != 401 {
		t.Errorf("cookie after WordPress logout: %d %s", r.Status, r.Body)
	}
}

// flip changes one hex character so an HMAC no longer matches.
func flip(c byte) string {
	if c == '0' {
		return "1"
	}
	return "0"
}
