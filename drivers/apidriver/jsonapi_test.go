package apidriver_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// TestJSONClientOutcomes: a send whose body reached the provider and
// got no answer is uncertain; one that never reached it is temporary
// and not uncertain; answers are classified by status with the key
// masked; a credentials check accepts what valid says proves the key.
func TestJSONClientOutcomes(t *testing.T) {
	const key = "secret-key-123"
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/hang":
			<-release
		case "/ok":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"m1"}`)
		case "/teapot":
			w.WriteHeader(418)
			_, _ = io.WriteString(w, `{"message":"key `+key+` refused"}`)
		case "/limited":
			w.Header().Set("Retry-After", "9")
			w.WriteHeader(429)
		case "/sendonly":
			w.WriteHeader(401)
			_, _ = io.WriteString(w, `{"name":"send_only"}`)
		}
	}))
	defer srv.Close()
	defer close(release)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	client := func(base string) *apidriver.JSONClient {
		return &apidriver.JSONClient{Provider: "acme", BaseURL: base, HTTP: apidriver.HTTPClient(core.DriverEnv{}),
			Authorize: func(r *http.Request) { r.Header.Set("X-Key", key) }, Secrets: []string{key}}
	}
	tests := []struct {
		name                 string
		base, path           string
		wantErr              bool
		temporary, uncertain bool
		wantWait             time.Duration
	}{
		{"answered", srv.URL, "/ok", false, false, false, 0},
		{"no answer after the body", srv.URL, "/hang", true, true, true, 0},
		{"never reached", closed.URL, "/ok", true, true, false, 0},
		{"4xx permanent", srv.URL, "/teapot", true, false, false, 0},
		{"429 with Retry-After", srv.URL, "/limited", true, true, false, 9 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			var out struct{ ID string }
			_, err := client(tc.base).Do(ctx, "send", http.MethodPost, tc.path, map[string]string{"a": "b"}, &out)
			if (err != nil) != tc.wantErr || core.IsTemporary(err) != tc.temporary || core.IsUncertain(err) != tc.uncertain {
				t.Fatalf("err %v: temporary %v uncertain %v, want error %v temporary %v uncertain %v",
					err, core.IsTemporary(err), core.IsUncertain(err), tc.wantErr, tc.temporary, tc.uncertain)
			}
			if wait, _ := core.AsRateLimited(err); wait != tc.wantWait {
				t.Errorf("rate limit wait %v, want %v", wait, tc.wantWait)
			}
			if err != nil && strings.Contains(err.Error(), key) {
				t.Errorf("the key is in the error: %v", err)
			}
			if !tc.wantErr && out.ID != "m1" {
				t.Errorf("answer decoded as %+v", out)
			}
		})
	}
	valid := func(r *apidriver.Response) bool { return strings.Contains(string(r.Body), "send_only") }
	if err := client(srv.URL).Verify(context.Background(), http.MethodGet, "/sendonly", nil, valid); err != nil {
		t.Errorf("Verify with a send-only key: %v", err)
	}
	if err := client(srv.URL).Verify(context.Background(), http.MethodGet, "/sendonly", nil, nil); err == nil || core.IsTemporary(err) {
		t.Errorf("Verify of a 401: %v, want a permanent failure", err)
	}
}
