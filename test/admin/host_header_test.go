package admin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// hostFromRequest is the common wp-config.php pattern that derives the
// site's address from the request's Host header.
const hostFromRequest = `if ( isset( $_SERVER['HTTP_HOST'] ) ) {
	define( 'WP_HOME', 'http://' . $_SERVER['HTTP_HOST'] );
	define( 'WP_SITEURL', 'http://' . $_SERVER['HTTP_HOST'] );
}`

// testEmailListener records, in an option, that mail_svc_test_email_sent
// ran in WordPress.
const testEmailListener = `<?php
add_action( 'mail_svc_test_email_sent', function ( $connection_id ) {
	update_option( 'test_hook_ran', (string) $connection_id );
} );
`

// TestChosenHostNeverSteersTheService: on a site whose wp-config.php
// derives WP_HOME from the Host header, anonymous page loads with a Host
// naming another server make the service send nothing there: the hook
// runner request after a test email goes to the site's stored address,
// where the hook runs.
func TestChosenHostNeverSteersTheService(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wph_", ExtraConfig: hostFromRequest})
	dir := t.TempDir()
	if r := servicetest.Run(dir, servicetest.Environ(dir), "", "wp", "install", "--wp-path", site.Dir); r.Code != 0 {
		t.Fatalf("wp install: %+v", r)
	}
	if err := os.WriteFile(filepath.Join(site.ContentDir, "mu-plugins", "test-email-listener.php"), []byte(testEmailListener), 0o644); err != nil {
		t.Fatal(err)
	}
	var stolen atomic.Int32
	recorder := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer recorder.Close()
	recorderHost := strings.TrimPrefix(recorder.URL, "http://")

	svc := servicetest.StartEnv(t, dir, servicetest.Environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1"))
	u, err := url.Parse(site.SiteURL)
	if err != nil {
		t.Fatal(err)
	}
	startWPAdmin(t, site, u.Host, "MAILSVC_SERVICE_URL=http://"+svc.Addr)

	pw := site.CreateApplicationPassword(t, site.AdminLogin, "host test")
	sink := smtpsink.Start(t)
	api := func(method, path, body string) servicetest.Response {
		t.Helper()
		return servicetest.Call(t, method, svc.Base+path, body, func(r *http.Request) {
			r.SetBasicAuth(site.AdminLogin, pw)
			r.Header.Set("X-Forwarded-Proto", "https")
		})
	}
	r := api("POST", "/connections", fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"from_email":"site@example.com"}}`, sink.Host(), sink.Port()))
	var conn struct{ ID int64 }
	r.JSON(t, &conn)
	if r.Status != http.StatusCreated {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	// Anonymous page loads with the recorder's address as their Host, the
	// last ones before the hook runs.
	for _, path := range []string{"/", "/?rest_route=/"} {
		req, err := http.NewRequest("GET", site.SiteURL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = recorderHost
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	if r := api("POST", fmt.Sprintf("/connections/%d/test", conn.ID), `{"to":"owner@example.com"}`); r.Status != http.StatusOK {
		t.Fatalf("test email: %d %s", r.Status, r.Body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for strings.TrimSpace(site.PHP(t, `echo get_option( 'test_hook_ran', '' );`)) == "" {
		if n := stolen.Load(); n != 0 {
			t.Fatalf("the server a Host header named received %d requests from the service", n)
		}
		if time.Now().After(deadline) {
			t.Fatal("mail_svc_test_email_sent never ran in WordPress: the runner request did not reach the site")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := stolen.Load(); n != 0 {
		t.Errorf("the server a Host header named received %d requests from the service", n)
	}
}
