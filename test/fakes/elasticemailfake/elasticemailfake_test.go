package elasticemailfake

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
)

// TestRequestsValidated: the key is read from X-ElasticEmail-ApiKey, and
// a body the OpenAPI description or the provider's rules refuse is 400.
func TestRequestsValidated(t *testing.T) {
	s := New("k1")
	defer s.Close()
	valid := `{"Recipients":{"To":["a@example.com"]},"Content":{"From":"f@example.com","Subject":"s","Body":[{"ContentType":"PlainText","Content":"x","Charset":"utf-8"}]}}`
	tests := []struct {
		name, method, path, key, body string
		wantStatus                    int
		wantBody                      string
	}{
		{"send ok", "POST", "/v4/emails/transactional", "k1", valid, 200, `"MessageID"`},
		{"no key", "POST", "/v4/emails/transactional", "", valid, 401, "Invalid API key"},
		{"wrong key", "POST", "/v4/emails/transactional", "k2", valid, 401, "Invalid API key"},
		{"body type outside the enum", "POST", "/v4/emails/transactional", "k1", strings.Replace(valid, `"PlainText"`, `"text/plain"`, 1), 400, "ContentType"},
		{"recipients not a list", "POST", "/v4/emails/transactional", "k1", strings.Replace(valid, `["a@example.com"]`, `"a@example.com"`, 1), 400, "To"},
		{"attachment without name", "POST", "/v4/emails/transactional", "k1", strings.Replace(valid, `"Subject":"s"`, `"Subject":"s","Attachments":[{"BinaryContent":"eA=="}]`, 1), 400, "Name"},
		{"no To recipient", "POST", "/v4/emails/transactional", "k1", strings.Replace(valid, `"To":["a@example.com"]`, `"To":[],"CC":["c@example.com"]`, 1), 400, "recipient"},
		{"domains read", "GET", "/v4/domains", "k1", "", 200, "example.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.key != "" {
				req.Header.Set("X-ElasticEmail-ApiKey", tc.key)
			}
			fakeapi.Expect(t, req, tc.wantStatus, tc.wantBody)
		})
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("recorded %d messages, want 1", n)
	}
}
