package fakeapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/brevofake"
	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/mailersendfake"
	"github.com/mailsvc/mailsvc/test/fakes/mailjetfake"
	"github.com/mailsvc/mailsvc/test/fakes/resendfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtp2gofake"
	"github.com/mailsvc/mailsvc/test/fakes/sparkpostfake"
)

// TestJSONFakesValidate: each fake built on NewServer takes a minimal
// valid send with the provider's credentials, and refuses the wrong
// credentials, a field the provider does not name and a body that is
// not JSON, recording only the valid send.
func TestJSONFakesValidate(t *testing.T) {
	tests := []struct {
		name, path, valid string
		start             func() *fakeapi.Server
		auth, wrongAuth   func(r *http.Request)
		okStatus          int
		badStatus         int // of a body the provider's schema refuses
	}{
		{"brevo", "/v3/smtp/email", `{"sender":{"email":"f@example.com"},"to":[{"email":"a@example.com"}],"subject":"s","textContent":"x"}`,
			func() *fakeapi.Server { return brevofake.New("k") },
			func(r *http.Request) { r.Header.Set("api-key", "k") }, func(r *http.Request) { r.Header.Set("api-key", "bad") }, 201, 400},
		{"sparkpost", "/api/v1/transmissions", `{"recipients":[{"address":{"email":"a@example.com"}}],"content":{"from":{"email":"f@example.com"},"subject":"s","text":"x"}}`,
			func() *fakeapi.Server { return sparkpostfake.New("k") },
			func(r *http.Request) { r.Header.Set("Authorization", "k") }, func(r *http.Request) { r.Header.Set("Authorization", "Bearer k") }, 200, 400},
		{"mailjet", "/v3.1/send", `{"Messages":[{"From":{"Email":"f@example.com"},"To":[{"Email":"a@example.com"}],"Subject":"s","TextPart":"x","CustomID":"c"}]}`,
			func() *fakeapi.Server { return mailjetfake.New("k", "s") },
			func(r *http.Request) { r.SetBasicAuth("k", "s") }, func(r *http.Request) { r.SetBasicAuth("k", "wrong") }, 200, 400},
		{"resend", "/emails", `{"from":"f@example.com","to":["a@example.com"],"subject":"s","text":"x"}`,
			func() *fakeapi.Server { return resendfake.New("re_k") },
			func(r *http.Request) { r.Header.Set("Authorization", "Bearer re_k") }, func(r *http.Request) { r.Header.Set("Authorization", "re_k") }, 200, 422},
		{"smtp2go", "/v3/email/send", `{"sender":"f@example.com","to":["a@example.com"],"subject":"s","text_body":"x"}`,
			func() *fakeapi.Server { return smtp2gofake.New("api-k") },
			func(r *http.Request) { r.Header.Set("X-Smtp2go-Api-Key", "api-k") }, func(r *http.Request) { r.Header.Set("X-Smtp2go-Api-Key", "api-x") }, 200, 400},
		{"mailersend", "/v1/email", `{"from":{"email":"f@example.com"},"to":[{"email":"a@example.com"}],"subject":"s","text":"x"}`,
			func() *fakeapi.Server { return mailersendfake.New("mlsn.k") },
			func(r *http.Request) { r.Header.Set("Authorization", "Bearer mlsn.k") }, func(r *http.Request) { r.Header.Set("Authorization", "Bearer x") }, 202, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.start()
			defer f.Close()
			unknown := strings.Replace(tc.valid, `{`, `{"unknown_field":1,`, 1)
			cases := []struct {
				what, body string
				auth       func(r *http.Request)
				status     int
			}{
				{"valid", tc.valid, tc.auth, tc.okStatus},
				{"wrong credentials", tc.valid, tc.wrongAuth, 401},
				{"unknown field", unknown, tc.auth, tc.badStatus},
				{"not JSON", `{`, tc.auth, tc.badStatus},
			}
			for _, c := range cases {
				req, _ := http.NewRequest("POST", f.URL+tc.path, strings.NewReader(c.body))
				req.Header.Set("Content-Type", "application/json")
				c.auth(req)
				if status, body, _ := fakeapi.Do(t, req); status != c.status {
					t.Errorf("%s: %d %s, want %d", c.what, status, body, c.status)
				}
			}
			if n := len(f.Messages()); n != 1 {
				t.Errorf("recorded %d messages, want 1", n)
			}
		})
	}
}

// TestOpenAPIValidation: a fake given its provider's OpenAPI document
// refuses a send the document does not allow even when the fake's own
// decoding would take it (a recipient without an address, an attachment
// that is not base64).
func TestOpenAPIValidation(t *testing.T) {
	tests := []struct {
		name, body, want string
		status           int
		start            func() *fakeapi.Server
		path             string
		auth             func(r *http.Request)
	}{
		{"brevo recipient without email", `{"sender":{"email":"f@example.com"},"to":[{"name":"Ann"}],"subject":"s","textContent":"x"}`, "email", 400,
			func() *fakeapi.Server { return brevofake.New("k") }, "/v3/smtp/email", func(r *http.Request) { r.Header.Set("api-key", "k") }},
		{"brevo sender not an address", `{"sender":{"email":"not an address"},"to":[{"email":"a@example.com"}],"subject":"s","textContent":"x"}`, "email", 400,
			func() *fakeapi.Server { return brevofake.New("k") }, "/v3/smtp/email", func(r *http.Request) { r.Header.Set("api-key", "k") }},
		{"resend too many to", `{"from":"f@example.com","to":[` + strings.TrimSuffix(strings.Repeat(`"a@example.com",`, 51), ",") + `],"subject":"s","text":"x"}`, "/to", 422,
			func() *fakeapi.Server { return resendfake.New("re_k") }, "/emails", func(r *http.Request) { r.Header.Set("Authorization", "Bearer re_k") }},
		{"resend subject missing", `{"from":"f@example.com","to":["a@example.com"],"text":"x"}`, "subject", 422,
			func() *fakeapi.Server { return resendfake.New("re_k") }, "/emails", func(r *http.Request) { r.Header.Set("Authorization", "Bearer re_k") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.start()
			defer f.Close()
			req, _ := http.NewRequest("POST", f.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			tc.auth(req)
			fakeapi.Expect(t, req, tc.status, tc.want)
			if len(f.Messages()) != 0 {
				t.Error("the fake recorded a refused send")
			}
		})
	}
}
