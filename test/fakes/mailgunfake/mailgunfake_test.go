package mailgunfake

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
)

func TestAuthAndValidation(t *testing.T) {
	s := New("key-good", "mg.example.com")
	defer s.Close()
	valid := url.Values{"from": {"F <f@mg.example.com>"}, "to": {"a@example.com, B <b@example.com>"}, "subject": {"s"}, "text": {"x"}, "h:Reply-To": {"r@example.com"}, "h:X-Id": {"7"}}
	tests := []struct {
		name, method, path, user, pass string
		form                           url.Values
		wantStatus                     int
		wantBody                       string
	}{
		{"send ok", "POST", "/v3/mg.example.com/messages", "api", "key-good", valid, 200, "Queued. Thank you."},
		{"wrong user", "POST", "/v3/mg.example.com/messages", "user", "key-good", valid, 401, "Forbidden"},
		{"wrong key", "POST", "/v3/mg.example.com/messages", "api", "key-bad", valid, 401, "Forbidden"},
		{"no auth", "POST", "/v3/mg.example.com/messages", "", "", valid, 401, "Forbidden"},
		{"unknown domain", "POST", "/v3/other.example.com/messages", "api", "key-good", valid, 404, "Domain not found"},
		{"missing from", "POST", "/v3/mg.example.com/messages", "api", "key-good", url.Values{"to": {"a@example.com"}, "text": {"x"}}, 400, "'from' parameter is missing"},
		{"missing body", "POST", "/v3/mg.example.com/messages", "api", "key-good", url.Values{"from": {"f@mg.example.com"}, "to": {"a@example.com"}}, 400, "'text', 'html' or 'template'"},
		{"domain ok", "GET", "/v3/domains/mg.example.com", "api", "key-good", nil, 200, `"state":"active"`},
		{"domain unknown", "GET", "/v3/domains/x.example.com", "api", "key-good", nil, 404, "Domain not found"},
		{"domain bad key", "GET", "/v3/domains/mg.example.com", "api", "nope", nil, 401, "Forbidden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.form != nil {
				body = strings.NewReader(tc.form.Encode())
			}
			req, _ := http.NewRequest(tc.method, s.URL+tc.path, body)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.user != "" {
				req.SetBasicAuth(tc.user, tc.pass)
			}
			fakeapi.Expect(t, req, tc.wantStatus, tc.wantBody)
		})
	}
	msgs := s.Messages()
	if len(msgs) != 1 {
		t.Fatalf("recorded %d messages, want 1", len(msgs))
	}
	m := msgs[0]
	if len(m.To) != 2 || m.To[1] != (Address{Name: "B", Email: "b@example.com"}) || len(m.ReplyTo) != 1 || m.Headers["X-Id"] != "7" || m.From.Name != "F" {
		t.Errorf("decoded message = %+v", m)
	}
}
