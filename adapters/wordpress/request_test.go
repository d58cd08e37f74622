package wordpress

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

var cookieHeaderCases = []struct {
	header string
	want   map[string]string
}{
	{"a=b", map[string]string{"a": "b"}},
	{"a=us+er%7C1", map[string]string{"a": "us+er|1"}},
	{"a=1; a=2", map[string]string{"a": "1"}},
	{"  a=1;b=2;   c=3", map[string]string{"a": "1", "b": "2", "c": "3"}},
	{"b.c d=x", map[string]string{"b_c_d": "x"}},
	{"m=%ZZ%41%4", map[string]string{"m": "%ZZA%4"}},
	{"=x; e; f=1=2", map[string]string{"e": "", "f": "1=2"}},
	{"wordpress_logged_in_c984d06aafbecf6bc55569f964148ea3=" + fxCookieValue, map[string]string{"wordpress_logged_in_c984d06aafbecf6bc55569f964148ea3": "admin|1700000000|" + fxToken + "|7f35902a3917205aee7502d70772f2cf387e25fb05360daa3f7ebab01f768857"}},
	{`q="quoted value"`, map[string]string{"q": `"quoted value"`}},
	{"n%20x=1", map[string]string{"n%20x": "1"}}, // PHP 8 does not decode names
}

func TestParsePHPCookies(t *testing.T) {
	for _, tc := range cookieHeaderCases {
		if got := ParsePHPCookies([]string{tc.header}); !maps.Equal(got, tc.want) {
			t.Errorf("ParsePHPCookies(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
	// Several Cookie header lines (HTTP/2) are one list; the first wins.
	got := ParsePHPCookies([]string{"a=1; b=2", "a=3; c=4"})
	if !maps.Equal(got, map[string]string{"a": "1", "b": "2", "c": "4"}) {
		t.Errorf("two headers: %v", got)
	}
}

var basicCases = []struct {
	header              string
	user, pass          string
	present, ok         bool
	comparableWithPHP   bool // PHP's own PHP_AUTH_* parsing must agree
	phpUser, phpPass    string
	phpHasNoCredentials bool
}{
	{header: basic("username", "password"), user: "username", pass: "password", present: true, ok: true, comparableWithPHP: true},
	{header: "Basic dXNlcm5hbWU6cGFzczp3b3Jk", user: "username", pass: "pass:word", present: true, ok: true, comparableWithPHP: true},
	{header: "basic " + base64.StdEncoding.EncodeToString([]byte("u:p")), user: "u", pass: "p", present: true, ok: true, comparableWithPHP: true},
	{header: "Basic " + base64.RawStdEncoding.EncodeToString([]byte("ab:c")), user: "ab", pass: "c", present: true, ok: true},
	{header: basic("", ""), user: "", pass: "", present: true, ok: true}, // PHP sets no PHP_AUTH_PW; WordPress ignores it
	{header: basic("admin", "abcd efgh ijkl mnop qrst uvwx"), user: "admin", pass: "abcd efgh ijkl mnop qrst uvwx", present: true, ok: true, comparableWithPHP: true},
	{header: "Basic " + base64.StdEncoding.EncodeToString([]byte("nocolon")), present: true, comparableWithPHP: true, phpHasNoCredentials: true},
	{header: "Basic !!!", present: true},
	{header: "Basic a===", present: true},
	{header: "Basic", present: false},
	{header: "Bearer x", present: false},
	{header: "", present: false},
}

func TestParseBasicAuth(t *testing.T) {
	for _, tc := range basicCases {
		u, p, present, ok := ParseBasicAuth(tc.header)
		if u != tc.user || p != tc.pass || present != tc.present || ok != tc.ok {
			t.Errorf("ParseBasicAuth(%q) = %q, %q, %v, %v; want %q, %q, %v, %v", tc.header, u, p, present, ok, tc.user, tc.pass, tc.present, tc.ok)
		}
	}
}

// TestRequestParsingAgainstPHP sends the same headers to PHP's built-in web
// server and compares $_COOKIE and PHP_AUTH_USER/PHP_AUTH_PW.
func TestRequestParsingAgainstPHP(t *testing.T) {
	php := requirePHP(t)
	dir := t.TempDir()
	router := filepath.Join(dir, "router.php")
	if err := os.WriteFile(router, []byte(`<?php
header('Content-Type: application/json');
echo json_encode(array(
	'cookie' => (object) $_COOKIE,
	'user' => isset($_SERVER['PHP_AUTH_USER']) ? $_SERVER['PHP_AUTH_USER'] : null,
	'pw' => isset($_SERVER['PHP_AUTH_PW']) ? $_SERVER['PHP_AUTH_PW'] : null,
));
`), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(php, "-S", addr, router)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start php -S: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("php -S did not start on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	type phpResult struct {
		Cookie map[string]string `json:"cookie"`
		User   *string           `json:"user"`
		PW     *string           `json:"pw"`
	}
	ask := func(header, value string) phpResult {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		req.Header.Set(header, value)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("php -S: %v", err)
		}
		defer resp.Body.Close()
		var res phpResult
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
			t.Fatalf("decode: %v", err)
		}
		return res
	}
	for _, tc := range cookieHeaderCases {
		res := ask("Cookie", tc.header)
		if got := ParsePHPCookies([]string{tc.header}); !maps.Equal(got, res.Cookie) {
			t.Errorf("Cookie %q: Go %v, PHP %v", tc.header, got, res.Cookie)
		}
	}
	for _, tc := range basicCases {
		if !tc.comparableWithPHP {
			continue
		}
		res := ask("Authorization", tc.header)
		u, p, _, ok := ParseBasicAuth(tc.header)
		if tc.phpHasNoCredentials {
			if res.User != nil || ok {
				t.Errorf("Authorization %q: PHP user %v, Go ok=%v; want no credentials", tc.header, res.User, ok)
			}
			continue
		}
		if res.User == nil || res.PW == nil || *res.User != u || *res.PW != p {
			t.Errorf("Authorization %q: Go %q/%q, PHP %v/%v", tc.header, u, p, res.User, res.PW)
		}
	}
}

func TestSanitizeUserAndIsEmail(t *testing.T) {
	users := []struct{ in, want string }{
		{"admin", "admin"},
		{"  ad  min \t", "ad min"},
		{"ad<b>min</b>", "admin"},
		{"a%41dmin", "admin"},
		{"adm&amp;in", "admin"},
		{"x<script>alert(1)</script>y", "xy"},
		{"Jane.Doe@Example", "Jane.Doe@Example"},
	}
	for _, tc := range users {
		if got := SanitizeUser(tc.in); got != tc.want {
			t.Errorf("SanitizeUser(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	emails := []struct {
		in   string
		want bool
	}{
		{"admin@example.com", true},
		{"a@b.co", true},
		{"admin@localhost.localdomain", true},
		{"a@b.c", false}, // shorter than 6
		{"admin@localhost", false},
		{"@example.com", false},
		{"ad min@example.com", false},
		{"admin@exa..mple.com", false},
		{"admin@-example.com", false},
		{"admin@example.com.", false},
		{"admin@ex_ample.com", false},
		{"o'brien+tag@example.org", true},
	}
	for _, tc := range emails {
		if got := IsEmail(tc.in); got != tc.want {
			t.Errorf("IsEmail(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func FuzzParseCookieHeader(f *testing.F) {
	for _, tc := range cookieHeaderCases {
		f.Add(tc.header)
	}
	f.Fuzz(func(t *testing.T, header string) {
		for name, value := range ParsePHPCookies([]string{header}) {
			if name == "" {
				t.Fatalf("empty cookie name from %q", header)
			}
			if c, ok := ParseAuthCookie(value); ok {
				if got := fmt.Sprintf("%s|%s|%s|%s", c.Username, c.Expiration, c.Token, c.HMAC); got != value {
					t.Fatalf("ParseAuthCookie(%q) lost data: %q", value, got)
				}
			}
		}
	})
}

func FuzzParseBasicAuth(f *testing.F) {
	for _, tc := range basicCases {
		f.Add(tc.header)
	}
	f.Fuzz(func(t *testing.T, header string) {
		u, p, present, ok := ParseBasicAuth(header)
		if ok && !present {
			t.Fatalf("ok without present for %q", header)
		}
		if ok {
			// Re-encoding the credentials must give the same credentials.
			u2, p2, _, ok2 := ParseBasicAuth("Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)))
			if !ok2 || u2 != u || p2 != p {
				t.Fatalf("round trip of %q: %q/%q vs %q/%q", header, u, p, u2, p2)
			}
		}
		_ = SanitizeUser(header)
		_ = IsEmail(header)
		_ = NormalizeApplicationPassword(header)
	})
}
