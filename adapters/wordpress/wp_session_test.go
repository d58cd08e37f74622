package wordpress

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// TestSessionStatement: a request with the bridge's signed statement of
// the WordPress user authenticates exactly that user, with the roles and
// capabilities of a cookie's user, and its body stays readable; a
// statement for another method, host, path, query, body, user, key or
// time, or a malformed one, is refused (never treated as anonymous).
func TestSessionStatement(t *testing.T) {
	salt, err := NewSalter(standardSalts, nil, nil).Salt(context.Background(), "auth")
	if err != nil {
		t.Fatal(err)
	}
	key := VerdictKey(salt)
	const (
		host   = "example.com"
		target = "/wp-json/mailsvc/v1/test-email?x=1"
		body   = `{"to":"a@example.com","connection_id":1}`
	)
	good := SignSession(key, 2, fxNow, "POST", host, target, []byte(body))
	tests := []struct {
		name                       string
		header, method, url, bodyS string
		wantID                     int64
		wantCode                   string
	}{
		{name: "signed", header: good, wantID: 2},
		{name: "another method", header: good, method: "PUT", wantCode: core.EUNAUTHORIZED},
		{name: "another path", header: good, url: "/wp-json/mailsvc/v1/logs/resend?x=1", wantCode: core.EUNAUTHORIZED},
		{name: "another query", header: good, url: "/wp-json/mailsvc/v1/test-email?x=2", wantCode: core.EUNAUTHORIZED},
		{name: "another site", header: good, url: "http://other.example.com" + target, wantCode: core.EUNAUTHORIZED},
		{name: "another body", header: good, bodyS: `{"to":"b@example.com","connection_id":1}`, wantCode: core.EUNAUTHORIZED},
		{name: "another user", header: strings.Replace(good, "2:", "1:", 1), wantCode: core.EUNAUTHORIZED},
		{name: "another key", header: SignSession(VerdictKey("not the salt"), 2, fxNow, "POST", host, target, []byte(body)), wantCode: core.EUNAUTHORIZED},
		{name: "too old", header: SignSession(key, 2, fxNow-61, "POST", host, target, []byte(body)), wantCode: core.EUNAUTHORIZED},
		{name: "from the future", header: SignSession(key, 2, fxNow+61, "POST", host, target, []byte(body)), wantCode: core.EUNAUTHORIZED},
		{name: "within the window", header: SignSession(key, 2, fxNow-59, "POST", host, target, []byte(body)), wantID: 2},
		{name: "unknown user", header: SignSession(key, 9, fxNow, "POST", host, target, []byte(body)), wantCode: core.EUNAUTHORIZED},
		{name: "user 0", header: SignSession(key, 0, fxNow, "POST", host, target, []byte(body)), wantCode: core.EUNAUTHORIZED},
		{name: "malformed", header: "2:" + good, wantCode: core.EUNAUTHORIZED},
		{name: "the application password verdict", header: SignVerdict(key, 2, "u-1", fxNow, ""), wantCode: core.EUNAUTHORIZED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{
				options: map[string]string{"siteurl": "https://example.com", "wp_user_roles": DefaultUserRoles()},
				users: []UserRow{
					{ID: 1, Login: "admin", Email: "admin@example.com"},
					{ID: 2, Login: "sue", Email: "sue@example.com"},
				},
				meta: map[int64]map[string]string{
					1: {"wp_capabilities": `a:1:{s:13:"administrator";b:1;}`},
					2: {"wp_capabilities": `a:1:{s:6:"editor";b:1;}`},
				},
			}
			a := NewAuthenticator(src, Site{Salts: standardSalts}, WithClock(func() time.Time { return time.Unix(fxNow, 0) }))
			method, url, b := "POST", "http://"+host+target, body
			if tt.method != "" {
				method = tt.method
			}
			if tt.url != "" {
				url = tt.url
				if strings.HasPrefix(url, "/") {
					url = "http://" + host + url
				}
			}
			if tt.bodyS != "" {
				b = tt.bodyS
			}
			r := httptest.NewRequest(method, url, strings.NewReader(b))
			r.Header.Set(SessionHeader, tt.header)
			u, err := a.Authenticate(r, false)
			if got := core.ErrorCode(err); got != tt.wantCode {
				t.Fatalf("Authenticate = %+v, %v; want code %q", u, err, tt.wantCode)
			}
			if tt.wantCode != "" {
				if u != nil {
					t.Fatalf("refused statement gave user %+v", u)
				}
				return
			}
			if u == nil || u.ID != tt.wantID || u.Via != "wordpress" || !u.Can("edit_others_posts") || u.Can("manage_options") {
				t.Fatalf("user = %+v, want user %d as an editor", u, tt.wantID)
			}
			if rest, _ := io.ReadAll(r.Body); string(rest) != b {
				t.Errorf("body after authentication = %q, want %q", rest, b)
			}
		})
	}
}

// TestSessionStatementNotRescued: a request carrying a statement is
// decided by it, whatever else it carries (a bad statement is not
// rescued by Basic credentials).
func TestSessionStatementNotRescued(t *testing.T) {
	src := &fakeSource{options: map[string]string{"wp_user_roles": DefaultUserRoles()}, users: []UserRow{{ID: 1, Login: "admin"}}}
	a := NewAuthenticator(src, Site{Salts: standardSalts}, WithClock(func() time.Time { return time.Unix(fxNow, 0) }))
	r := httptest.NewRequest(http.MethodGet, "/wp-json/mailsvc/v1/logs", nil)
	r.Header.Set(SessionHeader, "1:1700000000:"+strings.Repeat("0", 64))
	r.Header.Set("Authorization", basic("admin", fxAppPassword))
	if u, err := a.Authenticate(r, true); core.ErrorCode(err) != core.EUNAUTHORIZED || u != nil {
		t.Fatalf("Authenticate = %+v, %v; want refused", u, err)
	}
}

// FuzzCheckSession: no header makes checkSession panic, and none but the
// signed one is accepted.
func FuzzCheckSession(f *testing.F) {
	key := VerdictKey("salt")
	good := SignSession(key, 1, 1700000000, "GET", "example.com", "/wp-json/mailsvc/v1/logs", nil)
	f.Add(good)
	f.Add("1:1700000000:")
	f.Add("::")
	f.Add("1:notanumber:" + strings.Repeat("a", 64))
	f.Add("-1:1700000000:" + strings.Repeat("a", 64))
	f.Fuzz(func(t *testing.T, header string) {
		id, ok := checkSession(key, header, "GET", "example.com", "/wp-json/mailsvc/v1/logs", nil, time.Unix(1700000000, 0))
		if ok && (!strings.EqualFold(header, good) || id != 1) {
			t.Fatalf("accepted %q as user %d", header, id)
		}
	})
}
