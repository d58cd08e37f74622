package sendgridfake

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
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
			_, hdr := fakeapi.Expect(t, req, tc.wantStatus, tc.wantBody)
			if tc.wantStatus == 202 && hdr.Get("X-Message-Id") == "" {
				t.Error("202 without X-Message-Id")
			}
		})
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("recorded %d messages, want 1", n)
	}
}

// TestRateLimitNext: the next n requests are answered 429 with SendGrid's
// error body, a Retry-After in whole seconds (rounded up) and a matching
// X-RateLimit-Reset; the fake notes when; the request after them is served
// as usual.
func TestRateLimitNext(t *testing.T) {
	s := New("SG.good")
	defer s.Close()
	valid := `{"personalizations":[{"to":[{"email":"a@example.com"}]}],"from":{"email":"f@example.com"},"subject":"s","content":[{"type":"text/plain","value":"x"}]}`
	send := func() (int, string, http.Header) {
		req, _ := http.NewRequest("POST", s.URL+"/v3/mail/send", strings.NewReader(valid))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer SG.good")
		return fakeapi.Do(t, req)
	}
	before := time.Now()
	s.RateLimitNext(2, 1500*time.Millisecond)
	for i := range 2 {
		status, body, hdr := send()
		if status != http.StatusTooManyRequests || !strings.Contains(body, `"message":"too many requests"`) {
			t.Fatalf("request %d: %d %s, want 429 too many requests", i, status, body)
		}
		if got := hdr.Get("Retry-After"); got != "2" {
			t.Errorf("request %d: Retry-After %q, want \"2\" (1.5 s rounded up)", i, got)
		}
		reset, err := strconv.ParseInt(hdr.Get("X-RateLimit-Reset"), 10, 64)
		if err != nil || reset < before.Unix()+2 || reset > time.Now().Unix()+2 {
			t.Errorf("request %d: X-RateLimit-Reset %q, want about now+2 s", i, hdr.Get("X-RateLimit-Reset"))
		}
	}
	if status, body, _ := send(); status != http.StatusAccepted {
		t.Fatalf("request after the 429s: %d %s, want 202", status, body)
	}
	times := s.RateLimited()
	if len(times) != 2 || times[0].Before(before) || times[1].Before(times[0]) {
		t.Errorf("RateLimited() = %v, want 2 times in order after %v", times, before)
	}
	msgs := s.Messages()
	if len(msgs) != 1 || msgs[0].At.Before(times[1]) {
		t.Errorf("messages %+v, want 1 accepted after the 429s", msgs)
	}
}
