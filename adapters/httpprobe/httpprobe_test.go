package httpprobe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/httpprobe"
)

func TestGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"code":"rest_not_logged_in","message":"x","data":{"status":401}}`))
		default:
			_, _ = w.Write([]byte("<html>"))
		}
	}))
	defer srv.Close()
	for _, tt := range []struct {
		path   string
		status int
		code   string
	}{{"/json", 401, "rest_not_logged_in"}, {"/html", 200, ""}} {
		status, code, err := httpprobe.Client{}.Get(context.Background(), srv.URL+tt.path)
		if err != nil || status != tt.status || code != tt.code {
			t.Errorf("%s: %d %q %v", tt.path, status, code, err)
		}
	}
	srv.Close()
	if _, _, err := (httpprobe.Client{}).Get(context.Background(), srv.URL+"/json"); err == nil {
		t.Error("no error from a closed server")
	}
}

// TestServiceHeaderGoesToTheServiceOnly checks that the service's header
// (a fleet's site key) goes with the requests to the service's address
// and with no other.
func TestServiceHeaderGoesToTheServiceOnly(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+"="+r.Header.Get("X-Mailsvc-Site"))
	}))
	defer srv.Close()
	c := httpprobe.Client{ServiceBase: srv.URL + "/svc/", ServiceHeader: http.Header{"X-Mailsvc-Site": {"key"}}}
	for _, path := range []string{"/svc/wp-json/mailsvc/v1/settings", "/svcx/wp-json", "/wp-json/mailsvc/v1/settings"} {
		if _, _, err := c.Get(context.Background(), srv.URL+path); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"/svc/wp-json/mailsvc/v1/settings=key", "/svcx/wp-json=", "/wp-json/mailsvc/v1/settings="}
	if len(got) != len(want) {
		t.Fatalf("requests %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d: %q, want %q", i, got[i], want[i])
		}
	}
}
