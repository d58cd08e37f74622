package admin

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
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

// serviceFilters is the test's mu-plugin: the spec's filters that govern
// the service, as a site developer writes them.
const serviceFilters = `<?php
add_filter( 'mail_svc_rest_capability', function () { return 'manage_mail'; } );
add_filter( 'mail_svc_sensitive_keys', function ( $keys ) { $keys[] = 'client_id'; return $keys; } );
add_filter( 'mail_svc_log_retention_days', '__return_zero' );
`

// TestFiltersGovernTheService: beside a real WordPress site whose
// mu-plugin sets the capability filter to a custom capability, an
// administrator without it is refused everywhere (403 rest_forbidden on
// the routes, 535 on SMTP AUTH, "Access denied" on wp-admin's Mail page)
// while users granted it, through a role or their own usermeta, pass,
// exactly as WordPress's user_can() answers; the sensitive-keys filter
// masks a key in every answer and encrypts it at rest; the retention
// filter returning 0 keeps a log past the log_retention_days setting when
// the retention job runs.
func TestFiltersGovernTheService(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpg_"})
	dir := t.TempDir()
	if r := servicetest.Run(dir, servicetest.Environ(dir), "", "wp", "install", "--wp-path", site.Dir); r.Code != 0 {
		t.Fatalf("wp install: %+v", r)
	}
	if err := os.WriteFile(filepath.Join(site.ContentDir, "mu-plugins", "service-filters.php"), []byte(serviceFilters), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", site.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	// Users: the installer's administrator lacks manage_mail; mia is an
	// administrator granted it in her own capabilities meta; cleo holds
	// it through a custom role; dan has that role but his meta sets the
	// capability false.
	site.PHP(t, `add_role( 'mail_manager', 'Mail manager', array( 'read' => true, 'manage_mail' => true ) );`)
	site.CreateUser(t, "mia", "mia@example.com", "administrator", "Mia-pass-123")
	site.CreateUser(t, "cleo", "cleo@example.com", "mail_manager", "Cleo-pass-123")
	site.CreateUser(t, "dan", "dan@example.com", "mail_manager", "Dan-pass-123")
	site.PHP(t, `get_user_by( 'login', 'mia' )->add_cap( 'manage_mail' );
get_user_by( 'login', 'dan' )->add_cap( 'manage_mail', false );`)
	users := []struct {
		login string
		can   bool
	}{{site.AdminLogin, false}, {"mia", true}, {"cleo", true}, {"dan", false}}
	passwords := map[string]string{}
	for _, u := range users {
		passwords[u.login] = site.CreateApplicationPassword(t, u.login, "filters test")
		if got := strings.TrimSpace(site.PHP(t, fmt.Sprintf(`echo user_can( get_user_by( 'login', %s ), 'manage_mail' ) ? 'yes' : 'no';`, wpsite.PHPString(u.login)))); got != map[bool]string{true: "yes", false: "no"}[u.can] {
			t.Fatalf("WordPress says %s can manage_mail: %s; the test expects %v", u.login, got, u.can)
		}
	}

	// An old delivered log, queued through the bridge's wp_mail() ten days
	// ago, and a retention setting of one day.
	site.PHP(t, `global $wpdb;
if ( ! wp_mail( 'old@example.com', 'Old news', 'From ten days ago.' ) ) {
	wpsite_fail( 'wp_mail did not queue' );
}
$wpdb->query( "UPDATE {$wpdb->prefix}mailsvc_logs SET status = 'delivered', created_at = UTC_TIMESTAMP(6) - INTERVAL 10 DAY" );
$wpdb->replace( $wpdb->prefix . 'mailsvc_settings', array( 'scope' => 'general', 'setting_key' => 'log_retention_days', 'setting_value' => '1', 'updated_at' => gmdate( 'Y-m-d H:i:s' ) ) );
echo "a page load publishes the filters";`)

	smtpAddr := servicetest.FreeAddr(t)
	svc := servicetest.StartEnv(t, dir, servicetest.Environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath,
		"MAILSVC_TRUSTED_PROXIES=127.0.0.1", "MAILSVC_SMTP_LISTEN="+smtpAddr))
	as := func(login string) func(*http.Request) {
		return func(req *http.Request) {
			req.SetBasicAuth(login, passwords[login])
			req.Header.Set("X-Forwarded-Proto", "https")
		}
	}

	t.Run("capability", func(t *testing.T) {
		routes := []struct{ method, path, body string }{
			{"GET", "/settings", ""},
			{"GET", "/connections", ""},
			{"POST", "/connections", `{"name":"x","driver":"smtp","settings":{"host":"127.0.0.1","port":2525,"encryption":"none","auth":false}}`},
			{"GET", "/logs", ""},
			{"GET", "/dashboard/stats", ""},
			{"GET", "/tools/migration/scan", ""},
		}
		phpAddr := servicetest.FreeAddr(t)
		startWPAdmin(t, site, phpAddr, "MAILSVC_SERVICE_URL=http://"+svc.Addr)
		startSiteProxy(t, site, phpAddr, svc.Addr)
		for _, u := range users {
			t.Run(u.login, func(t *testing.T) {
				for _, rt := range routes {
					r := servicetest.Call(t, rt.method, svc.Base+rt.path, rt.body, as(u.login))
					if u.can && (r.Status == http.StatusForbidden || r.Status == http.StatusUnauthorized) {
						t.Errorf("%s %s: %d %s, want access", rt.method, rt.path, r.Status, r.Body)
					}
					if !u.can && (r.Status != http.StatusForbidden || r.Code() != "rest_forbidden") {
						t.Errorf("%s %s: %d %s, want 403 rest_forbidden", rt.method, rt.path, r.Status, r.Body)
					}
				}

				c, err := smtp.Dial(smtpAddr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				err = c.Auth(sasl.NewPlainClient("", u.login, passwords[u.login]))
				var se *smtp.SMTPError
				switch {
				case u.can && err != nil:
					t.Errorf("SMTP AUTH: %v, want success", err)
				case !u.can && (!errors.As(err, &se) || se.Code != 535):
					t.Errorf("SMTP AUTH: %v, want 535", err)
				}

				status, page := mailPage(t, site, u.login)
				framed := strings.Contains(page, `id="mailsvc-screens"`)
				if u.can && (status != http.StatusOK || !framed) {
					t.Errorf("Mail page: %d without the screens' frame", status)
				}
				if !u.can && (status != http.StatusForbidden || framed || !strings.Contains(page, "Access denied")) {
					t.Errorf("Mail page: %d, framed %v, want 403 Access denied:\n%s", status, framed, page)
				}
			})
		}
	})

	t.Run("sensitive keys", func(t *testing.T) {
		const clientID = "cid-7f3a9e41-plain-client-identifier"
		mia := as("mia")
		r := servicetest.Call(t, "POST", svc.Base+"/connections", fmt.Sprintf(
			`{"name":"Workspace","driver":"gmail","settings":{"client_id":%q,"client_secret":"csecret-0123456789","from_email":"site@example.com"}}`, clientID), mia)
		var conn struct{ ID int64 }
		r.JSON(t, &conn)
		if r.Status != http.StatusCreated || conn.ID == 0 {
			t.Fatalf("create connection: %d %s", r.Status, r.Body)
		}
		answers := map[string]servicetest.Response{
			"create":            r,
			"list":              servicetest.Call(t, "GET", svc.Base+"/connections", "", mia),
			"get":               servicetest.Call(t, "GET", fmt.Sprintf("%s/connections/%d", svc.Base, conn.ID), "", mia),
			"update":            servicetest.Call(t, "PUT", fmt.Sprintf("%s/connections/%d", svc.Base, conn.ID), `{"name":"Workspace mail"}`, mia),
			"export":            servicetest.Call(t, "POST", svc.Base+"/pro/tools/export", "", mia),
			"dashboard":         servicetest.Call(t, "GET", svc.Base+"/dashboard/activity", "", mia),
			"settings":          servicetest.Call(t, "GET", svc.Base+"/settings", "", mia),
			"connections again": servicetest.Call(t, "GET", svc.Base+"/connections?per_page=100", "", mia),
		}
		for name, a := range answers {
			if a.Status >= 300 {
				t.Errorf("%s: %d %s", name, a.Status, a.Body)
			}
			if strings.Contains(string(a.Body), clientID) {
				t.Errorf("%s shows client_id in full: %s", name, a.Body)
			}
		}
		if !strings.Contains(string(answers["get"].Body), `"client_id"`) {
			t.Errorf("the connection has no client_id at all: %s", answers["get"].Body)
		}
		if exp := string(answers["export"].Body); !strings.Contains(exp, `"secrets_omitted"`) || !strings.Contains(exp[strings.Index(exp, `"secrets_omitted"`):], "client_id") {
			t.Errorf("the export does not list client_id among the omitted secrets: %s", exp)
		}
		var stored string
		if err := db.QueryRow("SELECT settings FROM wpg_mailsvc_connections WHERE id = ?", conn.ID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stored, clientID) || !strings.Contains(stored, "client_id") {
			t.Errorf("client_id is not encrypted at rest: %s", stored)
		}
	})

	t.Run("retention", func(t *testing.T) {
		// The retention job runs at the service's first scheduler tick.
		deadline := time.Now().Add(time.Minute)
		for {
			var finished sql.NullString
			err := db.QueryRow("SELECT finished_at FROM wpg_mailsvc_jobs WHERE name = 'log_purge'").Scan(&finished)
			if err == nil && finished.Valid {
				break
			}
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatal("the retention job did not run within a minute")
			}
			time.Sleep(200 * time.Millisecond)
		}
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM wpg_mailsvc_logs WHERE subject = 'Old news'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("the ten-day-old log is gone after the retention job: the filter's 0 must keep it past the one-day setting")
		}
	})
}

// mailPage opens wp-admin's Mail page as login, with the cookies
// WordPress's login sets, and returns the status and the page.
func mailPage(t *testing.T, site *wpsite.Site, login string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", site.SiteURL+"/wp-admin/admin.php?page=mailsvc", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range loginCookies(t, site, login) {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: url.QueryEscape(c.Value)})
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}
