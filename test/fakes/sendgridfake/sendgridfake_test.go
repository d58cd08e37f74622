package sendgridfake

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestAuthAndValidation(t *testing.T) {
	s := New("SG.good")
	defer s.Close()
	valid := `{"personalizations":[{"to":[{"email":"a@example.com"}]}],"from":{"email":"f@example.com"},"subject":"s","content":[{"type":"text/plain","value":"x"}]}`
	tests := []struct {
		name, method, path, auth, body string
		wantStatus                     int
		wantBody                       string
	}{
		{"send ok", "POST", "/v3/mail/send", "Bearer SG.good", valid, 202, ""},
		{"no auth", "POST", "/v3/mail/send", "", valid, 401, "authorization grant is invalid"},
		{"key without Bearer", "POST", "/v3/mail/send", "SG.good", valid, 401, "authorization grant is invalid"},
		{"basic instead of bearer", "POST", "/v3/mail/send", "Basic U0cuZ29vZA==", valid, 401, "authorization grant is invalid"},
		{"missing from", "POST", "/v3/mail/send", "Bearer SG.good", `{"personalizations":[{"to":[{"email":"a@example.com"}]}],"subject":"s","content":[{"type":"text/plain","value":"x"}]}`, 400, `"field":"from.email"`},
		{"reserved header", "POST", "/v3/mail/send", "Bearer SG.good", strings.Replace(valid, `"subject":"s"`, `"subject":"s","headers":{"Reply-To":"x@example.com"}`, 1), 400, "reserved header"},
		{"bad base64", "POST", "/v3/mail/send", "Bearer SG.good", strings.Replace(valid, `"subject":"s"`, `"subject":"s","attachments":[{"content":"%%%","filename":"a.bin"}]`, 1), 400, "base64"},
		{"scopes ok", "GET", "/v3/scopes", "Bearer SG.good", "", 200, "mail.send"},
		{"scopes bad key", "GET", "/v3/scopes", "Bearer SG.bad", "", 401, "errors"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			status, body, hdr := do(t, req)
			if status != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
				t.Fatalf("got %d %q, want %d containing %q", status, body, tc.wantStatus, tc.wantBody)
			}
			if status == 202 && hdr.Get("X-Message-Id") == "" {
				t.Error("202 without X-Message-Id")
			}
		})
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("recorded %d messages, want 1", n)
	}
}

func do(t *testing.T, req *http.Request) (int, string, http.Header) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}
