package gmailfake

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
)

const sample = "From: \"Shop\" <shop@example.com>\r\nTo: a@example.org\r\nBcc: b@example.org\r\nSubject: =?UTF-8?q?h=C3=A9llo?=\r\nX-Order: 42\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\nhi\r\nthere\r\n"

func TestEndpoints(t *testing.T) {
	s := New(func(tok string) bool { return tok == "good" })
	defer s.Close()
	jsonRaw := func(enc *base64.Encoding, raw string) string {
		b, _ := json.Marshal(map[string]string{"raw": enc.EncodeToString([]byte(raw))})
		return string(b)
	}
	tests := []struct {
		name, method, path, ctype, token, body string
		wantStatus                             int
		wantBody                               string
	}{
		{"json padded", "POST", "/gmail/v1/users/me/messages/send", "application/json", "good", jsonRaw(base64.URLEncoding, sample), 200, `"labelIds":["SENT"]`},
		{"json unpadded", "POST", "/gmail/v1/users/me/messages/send", "application/json", "good", jsonRaw(base64.RawURLEncoding, sample+"x"), 200, `"threadId"`},
		{"upload", "POST", "/upload/gmail/v1/users/me/messages/send?uploadType=media", "message/rfc822", "good", sample, 200, `"id"`},
		{"bad token", "POST", "/gmail/v1/users/me/messages/send", "application/json", "bad", jsonRaw(base64.URLEncoding, sample), 401, `"reason":"authError"`},
		{"no raw", "POST", "/gmail/v1/users/me/messages/send", "application/json", "good", `{}`, 400, `"code":400`},
		{"upload without From", "POST", "/upload/gmail/v1/users/me/messages/send?uploadType=media", "message/rfc822", "good", sample[strings.Index(sample, "To:"):], 400, "Invalid RFC822 message: parse From"},
		{"upload wrong type", "POST", "/upload/gmail/v1/users/me/messages/send?uploadType=media", "text/plain", "good", sample, 400, "badContent"},
		{"too large for json", "POST", "/gmail/v1/users/me/messages/send", "application/json", "good", jsonRaw(base64.URLEncoding, sample+strings.Repeat("x", MaxJSONRaw)), 400, "payload size exceeds"},
		{"profile", "GET", "/gmail/v1/users/me/profile", "", "good", "", 200, `"emailAddress":"me@example.com"`},
		{"profile bad token", "GET", "/gmail/v1/users/me/profile", "", "nope", "", 401, "UNAUTHENTICATED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(tc.body))
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			req.Header.Set("Authorization", "Bearer "+tc.token)
			fakeapi.Expect(t, req, tc.wantStatus, tc.wantBody)
		})
	}
	msgs := s.Messages()
	if len(msgs) != 3 {
		t.Fatalf("recorded %d messages, want 3", len(msgs))
	}
	m := msgs[0]
	if m.Subject != "héllo" || m.Text != "hi\nthere\n" || len(m.Bcc) != 1 || m.Headers["X-Order"] != "42" || m.From.Name != "Shop" || m.Upload {
		t.Errorf("decoded %+v", m)
	}
	if !msgs[2].Upload || msgs[2].Token != "good" {
		t.Errorf("upload not recorded as such: %+v", msgs[2])
	}
	s.SetSendOnly(true)
	req, _ := http.NewRequest("GET", s.URL+"/gmail/v1/users/me/profile", nil)
	req.Header.Set("Authorization", "Bearer good")
	if status, b, _ := fakeapi.Do(t, req); status != 403 || !strings.Contains(b, "insufficientPermissions") {
		t.Errorf("send-only profile: %d %s", status, b)
	}
}
