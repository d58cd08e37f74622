package wordpress

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestHostHooksListens reads the listeners the bridge publishes (a
// serialized PHP array), and answers false for anything else, a missing
// option or a malformed one. A "runner" an older bridge published is
// ignored (TestHookRunnerGoesToTheStoredHome).
func TestHostHooksListens(t *testing.T) {
	published := `a:2:{s:9:"listeners";a:2:{i:0;s:24:"mail_svc_test_email_sent";i:1;s:18:"mail_svc_api_debug";}s:6:"runner";s:45:"http://127.0.0.1:8080/wp-json/mailsvc-bridge/";}`
	tests := []struct {
		name    string
		options mapOptions
		want    map[string]bool
	}{
		{"published", mapOptions{HostHooksOption: published},
			map[string]bool{"mail_svc_test_email_sent": true, "mail_svc_api_debug": true, "mail_svc_delivered": false}},
		{"missing", mapOptions{}, map[string]bool{"mail_svc_test_email_sent": false}},
		{"malformed", mapOptions{HostHooksOption: "a:1:{"}, map[string]bool{"mail_svc_test_email_sent": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &HostHooks{Options: tt.options}
			for hook, want := range tt.want {
				if got := h.Listens(context.Background(), hook); got != want {
					t.Errorf("Listens(%s) = %v, want %v", hook, got, want)
				}
			}
		})
	}
}

// TestHookRunner: nudges never block, coalesce while a request is out,
// and each request carries a fresh timestamp signed with the key derived
// from wp_salt('auth'); a site that fails the request does not stop the
// next one.
func TestHookRunner(t *testing.T) {
	salter := NewSalter(standardSalts, nil, nil)
	salt, err := salter.Salt(context.Background(), "auth")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var requests, bad atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		ts, _ := strconv.ParseInt(r.Header.Get(HookRunTimestampHeader), 10, 64)
		if r.Method != http.MethodPost || r.Header.Get(HookRunSignatureHeader) != SignHookRun(HookRunKey(salt), ts) || time.Since(time.Unix(ts, 0)).Abs() > HookRunWindow {
			bad.Add(1)
		}
		if n == 1 {
			<-release // the first request hangs until the nudges are in
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	r := &HookRunner{Salter: salter, URL: srv.URL}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	r.Nudge()
	for requests.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	for range 100 {
		r.Nudge() // never blocks while the request is out
	}
	close(release)
	for requests.Load() != 2 {
		time.Sleep(time.Millisecond)
	}
	r.Nudge()
	for requests.Load() != 3 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if got := requests.Load(); got != 3 {
		t.Fatalf("%d requests, want 3 (the hundred nudges coalesced into one)", got)
	}
	if bad.Load() != 0 {
		t.Fatalf("%d requests were not signed as the bridge checks", bad.Load())
	}
}

// TestHookRunnerGoesToTheStoredHome: the runner request goes to the hook
// route under the site's stored home option, whatever address a page
// load published (an anonymous visitor's Host header can choose that),
// and a redirect from the site is not followed.
func TestHookRunnerGoesToTheStoredHome(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	got := make(chan string, 4)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.URL.String()
		http.Redirect(w, r, other.URL+"/redirected", http.StatusTemporaryRedirect)
	}))
	defer site.Close()
	options := mapOptions{
		"home":          site.URL + "/",
		HostHooksOption: `a:2:{s:9:"listeners";a:0:{}s:6:"runner";s:` + strconv.Itoa(len(other.URL+"/wp-json/mailsvc-bridge/v1/hooks")) + `:"` + other.URL + `/wp-json/mailsvc-bridge/v1/hooks";}`,
	}
	r := &HookRunner{Sites: &SiteHomes{Options: options}, Salter: NewSalter(standardSalts, nil, nil)}
	err := r.request(context.Background())
	if err == nil {
		t.Fatal("a redirect answered the runner request, and request reported success")
	}
	if u := <-got; u != "/index.php?rest_route=/mailsvc-bridge/v1/hooks" {
		t.Errorf("the runner request went to %q on the site", u)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests reached the address the option named or the redirect pointed to", n)
	}
}
