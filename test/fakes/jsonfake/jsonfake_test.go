package jsonfake_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/jsonfake"
)

const description = `
openapi: 3.0.1
info: {title: t, version: "1"}
paths:
  /send:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [to]
              properties:
                to: {type: array, maxItems: 2, items: {type: string}}
      responses:
        '200': {description: ok}
`

func start() *jsonfake.Server {
	return jsonfake.New(jsonfake.API{
		Send:       "POST /send",
		Reads:      []string{"GET /me"},
		ReadAnswer: `{"me":true}`,
		Key:        func(r *http.Request, _ []byte) string { return r.Header.Get("X-Key") },
		OpenAPI:    []byte(description),
		Decode: func(body []byte) (fakeapi.Mail, string) {
			var in struct{ To []string }
			_ = json.Unmarshal(body, &in)
			m := fakeapi.Mail{}
			to, p := jsonfake.Mailboxes(in.To)
			m.To = to
			return m, p
		},
		Accepted:          func(id string, _ fakeapi.Mail) (int, string) { return 200, `{"id":"` + id + `"}` },
		Error:             func(status int, msg string) string { return `{"error":` + jsonString(msg) + `}` },
		IdempotencyHeader: "Idempotency-Key",
		MaxRecipients:     2,
	}, "k")
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestRequests: the key is checked, the OpenAPI description and the
// provider's rules refuse a bad body, the recipient cap is a 400, a
// repeated idempotency key is answered as the first and not recorded
// again, and SendCalls counts the send route only.
func TestRequests(t *testing.T) {
	s := start()
	defer s.Close()
	tests := []struct {
		name, method, path, key, idem, body string
		wantStatus                          int
		wantBody                            string
	}{
		{"send", "POST", "/send", "k", "a", `{"to":["a@example.com"]}`, 200, `"id"`},
		{"same idempotency key", "POST", "/send", "k", "a", `{"to":["b@example.com"]}`, 200, `"id"`},
		{"wrong key", "POST", "/send", "x", "", `{"to":["a@example.com"]}`, 401, "Invalid API key"},
		{"not in the description", "POST", "/send", "k", "", `{"to":"a@example.com"}`, 400, "error"},
		{"over the description's maxItems", "POST", "/send", "k", "", `{"to":["a@x.org","b@x.org","c@x.org"]}`, 400, "error"},
		{"bad address", "POST", "/send", "k", "", `{"to":["not an address"]}`, 400, "invalid address"},
		{"read", "GET", "/me", "k", "", "", 200, `"me"`},
	}
	var first string
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Key", tc.key)
			if tc.idem != "" {
				req.Header.Set("Idempotency-Key", tc.idem)
			}
			body, _ := fakeapi.Expect(t, req, tc.wantStatus, tc.wantBody)
			switch i {
			case 0:
				first = body
			case 1:
				if body != first {
					t.Errorf("a repeated key answered %s, want the first answer %s", body, first)
				}
			}
		})
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("recorded %d messages, want 1", n)
	}
	if s.SendCalls() != 6 || s.Requests() != 7 {
		t.Errorf("send calls %d of %d requests, want 6 of 7", s.SendCalls(), s.Requests())
	}
}

// TestRateLimitNext: the next request is a 429 in the provider's shape
// with a Retry-After in whole seconds, rounded up; the fake notes it.
func TestRateLimitNext(t *testing.T) {
	s := start()
	defer s.Close()
	s.RateLimitNext(1, 1500*time.Millisecond)
	req, _ := http.NewRequest("GET", s.URL+"/me", nil)
	req.Header.Set("X-Key", "k")
	_, h := fakeapi.Expect(t, req, 429, `"error"`)
	if h.Get("Retry-After") != "2" || len(s.RateLimited()) != 1 {
		t.Errorf("Retry-After %q, %d noted", h.Get("Retry-After"), len(s.RateLimited()))
	}
	req, _ = http.NewRequest("GET", s.URL+"/me", nil)
	req.Header.Set("X-Key", "k")
	fakeapi.Expect(t, req, 200, `"me"`)
}
