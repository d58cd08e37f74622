package wpsite

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPHPServerREST(t *testing.T) {
	// "local" lets WordPress accept application passwords over plain HTTP.
	s := Install(t, Options{EnvironmentType: "local"})
	base := s.StartPHPServer(t)
	if base != s.SiteURL {
		t.Fatalf("server base URL %q, want the site URL %q", base, s.SiteURL)
	}
	if again := s.StartPHPServer(t); again != base {
		t.Errorf("second StartPHPServer = %q, want %q", again, base)
	}
	adminPW := s.CreateApplicationPassword(t, "admin", "rest")
	subID := s.CreateUser(t, "sue", "sue@example.com", "subscriber", "sue-login-pw")
	subPW := s.CreateApplicationPassword(t, "sue", "rest")
	cookie := s.LoginCookie(t, "sue")
	nonce := s.RESTNonce(t, "sue", cookie)

	client := &http.Client{Timeout: time.Minute}
	tests := []struct {
		name       string
		path       string
		user, pw   string
		cookie     bool
		nonce      string
		wantStatus int
		wantID     int64  // for 200
		wantCode   string // for errors
		wantNonce  bool   // a fresh X-WP-Nonce header in the response
	}{
		{name: "admin app password", path: "/wp-json/wp/v2/users/me", user: "admin", pw: adminPW, wantStatus: 200, wantID: 1},
		{name: "subscriber app password, chunked", path: "/wp-json/wp/v2/users/me", user: "sue", pw: chunk(subPW), wantStatus: 200, wantID: subID},
		{name: "query-string route", path: "/?rest_route=/wp/v2/users/me", user: "admin", pw: adminPW, wantStatus: 200, wantID: 1},
		{name: "wrong app password", path: "/wp-json/wp/v2/users/me", user: "admin", pw: subPW, wantStatus: 401, wantCode: "rest_not_logged_in"},
		{name: "login password over Basic", path: "/wp-json/wp/v2/users/me", user: "sue", pw: "sue-login-pw", wantStatus: 401, wantCode: "rest_not_logged_in"},
		{name: "anonymous", path: "/wp-json/wp/v2/users/me", wantStatus: 401, wantCode: "rest_not_logged_in"},
		{name: "cookie and nonce", path: "/wp-json/wp/v2/users/me", cookie: true, nonce: nonce, wantStatus: 200, wantID: subID, wantNonce: true},
		{name: "cookie without nonce", path: "/wp-json/wp/v2/users/me", cookie: true, wantStatus: 401, wantCode: "rest_not_logged_in"},
		{name: "cookie and bad nonce", path: "/wp-json/wp/v2/users/me", cookie: true, nonce: tamper(nonce, 0), wantStatus: 403, wantCode: "rest_cookie_invalid_nonce"},
		{name: "nonce without cookie", path: "/wp-json/wp/v2/users/me", nonce: nonce, wantStatus: 403, wantCode: "rest_cookie_invalid_nonce"},
		{name: "unknown route", path: "/wp-json/wpsite/v1/none", user: "admin", pw: adminPW, wantStatus: 404, wantCode: "rest_no_route"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, base+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.user != "" {
				req.SetBasicAuth(tc.user, tc.pw)
			}
			if tc.cookie {
				req.AddCookie(cookie)
			}
			if tc.nonce != "" {
				req.Header.Set("X-WP-Nonce", tc.nonce)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("GET %s: %v", tc.path, err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("read body: %v", err)
			}
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tc.wantStatus, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			var got struct {
				ID   int64  `json:"id"`
				Code string `json:"code"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("decode %s: %v", body, err)
			}
			if tc.wantStatus == 200 && got.ID != tc.wantID {
				t.Errorf("users/me id = %d, want %d", got.ID, tc.wantID)
			}
			if got.Code != tc.wantCode {
				t.Errorf("error code %q, want %q", got.Code, tc.wantCode)
			}
			if has := resp.Header.Get("X-WP-Nonce") != ""; has != tc.wantNonce {
				t.Errorf("X-WP-Nonce header present = %v, want %v", has, tc.wantNonce)
			}
		})
	}

	t.Run("other PHP entry points are refused", func(t *testing.T) {
		resp, err := client.Get(base + "/wp-login.php")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotImplemented {
			t.Errorf("GET /wp-login.php: status %d, want 501", resp.StatusCode)
		}
	})
	t.Run("static WordPress file", func(t *testing.T) {
		resp, err := client.Get(base + "/wp-includes/js/jquery/jquery.js")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), "jQuery") {
			t.Errorf("GET jquery.js: status %d, %d bytes; want 200 with jQuery", resp.StatusCode, len(b))
		}
	})
}

// TestPHPServerOnATakenPort: when another server holds the port, php -S
// exits with "Failed to listen" and the start fails saying so, instead of
// going on with the other server answering in its place.
func TestPHPServerOnATakenPort(t *testing.T) {
	if _, err := exec.LookPath("php"); err != nil {
		toolsMissing(t, "no php: %v", err)
	}
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	go http.Serve(other, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "another server") }))

	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ServeAdmin(rec, t.TempDir(), filepath.Join(t.TempDir(), "wp-config.php"), other.Addr().String(), "")
	}()
	<-done
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !strings.Contains(rec.msg, "exited") || !strings.Contains(rec.msg, "Failed to listen") {
		t.Fatalf("ServeAdmin on a taken port: %q, want the start to fail with php's own reason", rec.msg)
	}
}
