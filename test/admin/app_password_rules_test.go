package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// appPasswordRules is the test's mu-plugin: the three ways a site tells
// WordPress to refuse an application password, chosen by an option so
// that one site serves every case.
const appPasswordRules = `<?php
switch ( get_option( 'test_app_password_rule', '' ) ) {
	case 'unavailable':
		add_filter( 'wp_is_application_passwords_available', '__return_false' );
		break;
	case 'not_for_administrators':
		add_filter(
			'wp_is_application_passwords_available_for_user',
			function ( $available, $user ) {
				return $available && ! user_can( $user, 'manage_options' );
			},
			10,
			2
		);
		break;
	case 'allow_list':
		add_action(
			'wp_authenticate_application_password_errors',
			function ( $error ) {
				if ( '203.0.113.7' !== $_SERVER['REMOTE_ADDR'] ) {
					$error->add( 'ip_not_allowed', 'Application passwords are accepted only from the office.' );
				}
			}
		);
		break;
}
`

// TestWordPressDecidesApplicationPasswords: beside a real WordPress site
// served by PHP's built-in server, each of WordPress's three
// application-password filters (wp_is_application_passwords_available,
// wp_is_application_passwords_available_for_user,
// wp_authenticate_application_password_errors as an IP allow-list) makes
// the service refuse the password exactly when WordPress's own
// /wp/v2/users/me refuses it: through the bridge (401), on the direct
// path (401) and on SMTP AUTH (535). The allow-list sees the client's
// address a trusted proxy forwarded, and the address a password was last
// used from is the client's, not the bridge's.
func TestWordPressDecidesApplicationPasswords(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpr_", EnvironmentType: "local"})
	dir := t.TempDir()
	if r := servicetest.Run(dir, servicetest.Environ(dir), "", "wp", "install", "--wp-path", site.Dir); r.Code != 0 {
		t.Fatalf("wp install: %+v", r)
	}
	if err := os.WriteFile(filepath.Join(site.ContentDir, "mu-plugins", "app-password-rules.php"), []byte(appPasswordRules), 0o644); err != nil {
		t.Fatal(err)
	}
	smtpAddr := servicetest.FreeAddr(t)
	svc := servicetest.StartEnv(t, dir, servicetest.Environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath,
		"MAILSVC_TRUSTED_PROXIES=127.0.0.1", "MAILSVC_SMTP_LISTEN="+smtpAddr, "MAILSVC_FILTERS_REFRESH=1"))
	u, err := url.Parse(site.SiteURL)
	if err != nil {
		t.Fatal(err)
	}
	startWPAdmin(t, site, u.Host, "MAILSVC_SERVICE_URL=http://"+svc.Addr)
	pw := site.CreateApplicationPassword(t, site.AdminLogin, "rules test")
	admin := servicetest.Basic(site.AdminLogin, pw)
	wordpressOwn := site.SiteURL + "/?rest_route=/wp/v2/users/me"
	bridged := site.SiteURL + "/?rest_route=/mailsvc/v1/settings"
	direct := svc.Base + "/settings"

	smtpAuth := func() error {
		c, err := smtp.Dial(smtpAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.Auth(sasl.NewPlainClient("", site.AdminLogin, pw))
	}
	setRule := func(rule string) {
		site.PHP(t, fmt.Sprintf(`update_option( 'test_app_password_rule', %s );`, wpsite.PHPString(rule)))
		site.PHP(t, `echo "a page load with the rule publishes it";`)
	}
	// awaitDirect waits until the service has read what the bridge
	// published (MAILSVC_FILTERS_REFRESH=1) and answers want.
	awaitDirect := func(want int, auth func(*http.Request)) servicetest.Response {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			r := servicetest.Call(t, "GET", direct, "", auth)
			if r.Status == want || time.Now().After(deadline) {
				return r
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	for _, tc := range []struct {
		rule    string
		refused bool
	}{
		{"", false},
		{"unavailable", true},
		{"not_for_administrators", true},
		{"allow_list", true},
		{"", false},
	} {
		name := tc.rule
		if name == "" {
			name = "no rule"
		}
		t.Run(name, func(t *testing.T) {
			setRule(tc.rule)
			want, wantSMTP := http.StatusOK, 0
			if tc.refused {
				want, wantSMTP = http.StatusUnauthorized, 535
			}
			if r := servicetest.Call(t, "GET", wordpressOwn, "", admin); r.Status != want {
				t.Fatalf("WordPress's own users/me: %d %s; the test expects %d", r.Status, r.Body, want)
			}
			if r := awaitDirect(want, admin); r.Status != want {
				t.Errorf("the direct path: %d %s, want %d as WordPress answers", r.Status, r.Body, want)
			}
			r := servicetest.Call(t, "GET", bridged, "", admin)
			if r.Status != want || (tc.refused && r.Code() != "rest_not_logged_in") {
				t.Errorf("through the bridge: %d %s, want %d as WordPress answers", r.Status, r.Body, want)
			}
			err := smtpAuth()
			var se *smtp.SMTPError
			switch {
			case wantSMTP == 0 && err != nil:
				t.Errorf("SMTP AUTH: %v, want success", err)
			case wantSMTP != 0 && (!errors.As(err, &se) || se.Code != wantSMTP):
				t.Errorf("SMTP AUTH: %v, want %d", err, wantSMTP)
			}
			if tc.rule == "allow_list" {
				// From the allowed address, forwarded by a trusted proxy:
				// WordPress is asked with the client's address, accepts, and
				// records it as the password's last address (a fresh one:
				// WordPress records a use at most once a day).
				officePW := site.CreateApplicationPassword(t, site.AdminLogin, "office")
				office := func(req *http.Request) {
					req.SetBasicAuth(site.AdminLogin, officePW)
					req.Header.Set("X-Forwarded-For", "203.0.113.7")
				}
				if r := awaitDirect(http.StatusOK, office); r.Status != http.StatusOK {
					t.Errorf("the direct path from the allowed address: %d %s, want 200", r.Status, r.Body)
				}
				if got := lastIP(t, site, site.AdminLogin, "office"); got != "203.0.113.7" {
					t.Errorf("last_ip = %q, want the client's 203.0.113.7", got)
				}
			}
		})
	}

	t.Run("last_ip through the bridge", func(t *testing.T) {
		// A client at 127.0.0.2 (not the bridge's 127.0.0.1) uses a fresh
		// password through the bridge: WordPress records its address.
		fresh := site.CreateApplicationPassword(t, site.AdminLogin, "from another address")
		client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
			LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
		req, err := http.NewRequestWithContext(context.Background(), "GET", bridged, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(site.AdminLogin, fresh)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("through the bridge from 127.0.0.2: %d %s", resp.StatusCode, body)
		}
		if got := lastIP(t, site, site.AdminLogin, "from another address"); got != "127.0.0.2" {
			t.Errorf("last_ip = %q, want the client's 127.0.0.2", got)
		}
	})
}

// lastIP is the last_ip WordPress keeps for a user's application password.
func lastIP(t *testing.T, site *wpsite.Site, login, name string) string {
	t.Helper()
	return strings.TrimSpace(site.PHP(t, fmt.Sprintf(`foreach ( WP_Application_Passwords::get_user_application_passwords( get_user_by( 'login', %s )->ID ) as $item ) {
	if ( %s === $item['name'] ) {
		echo $item['last_ip'];
	}
}`, wpsite.PHPString(login), wpsite.PHPString(name))))
}
