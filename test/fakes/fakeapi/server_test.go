package fakeapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

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

// TestResendIdempotencyKey: the Resend fake honours Idempotency-Key as
// Resend documents it: the same key and body are answered with the first
// id and held once; the same key with another body is 409
// invalid_idempotent_request; a key whose first send is still in
// progress is 409 concurrent_idempotent_requests, and answered with the
// first id once that send is; a key over 256 characters is 400
// invalid_idempotency_key; sends without a key are each held.
func TestResendIdempotencyKey(t *testing.T) {
	f := resendfake.New("re_k")
	defer f.Close()
	const body = `{"from":"f@example.com","to":["a@example.com"],"subject":"s","text":"x"}`
	send := func(key, body string) (int, string) {
		req, _ := http.NewRequest("POST", f.URL+"/emails", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer re_k")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		status, answer, _ := fakeapi.Do(t, req)
		return status, string(answer)
	}
	var firstID string
	tests := []struct {
		name, key, body string
		wantStatus      int
		wantIn          string // in the answer; "first" for the first send's id
		wantHeld        int
	}{
		{"first", "k1", body, 200, `"id"`, 1},
		{"same key and body", "k1", body, 200, "first", 1},
		{"same key, another body", "k1", strings.Replace(body, `"s"`, `"t"`, 1), 409, "invalid_idempotent_request", 1},
		{"key too long", strings.Repeat("k", resendfake.MaxKeyLen+1), body, 400, "invalid_idempotency_key", 1},
		{"longest key", strings.Repeat("k", resendfake.MaxKeyLen), body, 200, `"id"`, 2},
		{"no key", "", body, 200, `"id"`, 3},
		{"no key again", "", body, 200, `"id"`, 4},
	}
	for _, tc := range tests {
		status, answer := send(tc.key, tc.body)
		want := tc.wantIn
		if want == "first" {
			want = firstID
		}
		if status != tc.wantStatus || !strings.Contains(answer, want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, status, answer, tc.wantStatus, want)
		}
		if tc.name == "first" {
			var a struct{ ID string }
			_ = json.Unmarshal([]byte(answer), &a)
			firstID = a.ID
		}
		if n := len(f.Messages()); n != tc.wantHeld {
			t.Errorf("%s: the fake holds %d messages, want %d", tc.name, n, tc.wantHeld)
		}
	}

	release := f.HoldSends()
	defer release()
	type answer struct {
		status int
		body   string
	}
	held := make(chan answer, 1)
	go func() {
		status, a := send("k2", body)
		held <- answer{status, a}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for f.HeldSends() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the held send did not reach the fake")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if status, a := send("k2", body); status != 409 || !strings.Contains(a, "concurrent_idempotent_requests") {
		t.Errorf("while the first is in progress: %d %s, want 409 concurrent_idempotent_requests", status, a)
	}
	release()
	first := <-held
	if status, a := send("k2", body); first.status != 200 || status != 200 || a != first.body {
		t.Errorf("after the first was answered (%d %s): %d %s, want its answer", first.status, first.body, status, a)
	}
	if n := len(f.Messages()); n != 5 {
		t.Errorf("the fake holds %d messages, want 5", n)
	}
}
