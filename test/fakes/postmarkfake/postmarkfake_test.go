package postmarkfake

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
)

func TestAuthAndValidation(t *testing.T) {
	s := New("tok-good")
	defer s.Close()
	valid := `{"From":"F <f@example.com>","To":"a@example.com, \"Doe, B\" <b@example.com>","Subject":"s","TextBody":"x","MessageStream":"outbound"}`
	tests := []struct {
		name, method, path, header, token, body string
		wantStatus                              int
		wantBody                                string
	}{
		{"send ok", "POST", "/email", "X-Postmark-Server-Token", "tok-good", valid, 200, `"ErrorCode":0`},
		{"wrong token", "POST", "/email", "X-Postmark-Server-Token", "tok-bad", valid, 401, `"ErrorCode":10`},
		{"account token header", "POST", "/email", "X-Postmark-Account-Token", "tok-good", valid, 401, `"ErrorCode":10`},
		{"no recipients", "POST", "/email", "X-Postmark-Server-Token", "tok-good", `{"From":"f@example.com","TextBody":"x"}`, 422, "Zero recipients"},
		{"no body", "POST", "/email", "X-Postmark-Server-Token", "tok-good", `{"From":"f@example.com","To":"a@example.com"}`, 422, "TextBody or HtmlBody"},
		{"bad json", "POST", "/email", "X-Postmark-Server-Token", "tok-good", `{`, 422, `"ErrorCode":402`},
		{"unknown stream", "POST", "/email", "X-Postmark-Server-Token", "tok-good", strings.Replace(valid, "outbound", "nope", 1), 422, `"ErrorCode":1235`},
		{"server ok", "GET", "/server", "X-Postmark-Server-Token", "tok-good", "", 200, `"Name":"Fake Server"`},
		{"server bad token", "GET", "/server", "X-Postmark-Server-Token", "x", "", 401, `"ErrorCode":10`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json")
			req.Header.Set(tc.header, tc.token)
			fakeapi.Expect(t, req, tc.wantStatus, tc.wantBody)
		})
	}
	msgs := s.Messages()
	if len(msgs) != 1 {
		t.Fatalf("recorded %d messages, want 1", len(msgs))
	}
	if m := msgs[0]; len(m.To) != 2 || m.To[1] != (Address{Name: "Doe, B", Email: "b@example.com"}) || m.MessageStream != "outbound" {
		t.Errorf("decoded message = %+v", m)
	}
}
