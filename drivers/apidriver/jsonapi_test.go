package apidriver_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// TestJSONAPIDo: the request carries the JSON body, the auth and the
// extra header; each answer is classified (429 a rate limit with its
// Retry-After, 5xx temporary, 4xx permanent, the provider's own refusal
// as Refused says), the key never shows in an error, and a 2xx answer
// that cannot be read does not fail a message the provider took.
func TestJSONAPIDo(t *testing.T) {
	const key = "secret-key-123"
	var status int
	var answer string
	var got *http.Request
	var gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, gotBody = r, string(b)
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	defer srv.Close()
	api := apidriver.JSONAPI{Name: "acme", BaseURL: srv.URL, Client: srv.Client(), Auth: apidriver.BearerAuth(key), Secrets: []string{key},
		Refused: func(status int, body []byte) error {
			if strings.Contains(string(body), "refused") {
				return core.Permanent(errors.New("refused by name"))
			}
			return nil
		}}
	tests := []struct {
		name          string
		status        int
		answer        string
		wantErr       bool
		wantTemporary bool
		wantWait      time.Duration
		wantID        string
	}{
		{"accepted", 200, `{"id":"m1"}`, false, false, 0, "m1"},
		{"accepted, unreadable answer", 202, `not json`, false, false, 0, ""},
		{"rate limited", 429, `{"error":"slow down"}`, true, true, 7 * time.Second, ""},
		{"server error", 503, `{"error":"down"}`, true, true, 0, ""},
		{"bad request echoing the key", 400, `{"error":"bad key secret-key-123"}`, true, false, 0, ""},
		{"refused by the provider's rule", 200, `{"status":"refused"}`, true, false, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, answer = tc.status, tc.answer
			var out struct{ ID string }
			_, err := api.DoWithHeader(context.Background(), "send", "POST", "/send", http.Header{"Idempotency-Key": {"k1"}}, map[string]string{"a": "b"}, &out)
			if got.Header.Get("Authorization") != "Bearer "+key || got.Header.Get("Idempotency-Key") != "k1" ||
				got.Header.Get("Content-Type") != "application/json" || gotBody != `{"a":"b"}` {
				t.Fatalf("request %v %q", got.Header, gotBody)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, wantErr %v", err, tc.wantErr)
			}
			if out.ID != tc.wantID {
				t.Errorf("id %q, want %q", out.ID, tc.wantID)
			}
			if err == nil {
				return
			}
			if core.IsTemporary(err) != tc.wantTemporary || strings.Contains(err.Error(), key) || !strings.HasPrefix(err.Error(), "acme: send: ") {
				t.Errorf("err %q: temporary %v, want %v, no key, named", err, core.IsTemporary(err), tc.wantTemporary)
			}
			if wait, ok := core.AsRateLimited(err); tc.wantWait != 0 && (!ok || wait != tc.wantWait) {
				t.Errorf("rate limit %v %v, want %v", wait, ok, tc.wantWait)
			}
		})
	}
	status, answer = 401, `{}`
	if err := api.Verify(context.Background(), "GET", "/me", nil, nil); err == nil || core.IsTemporary(err) || !strings.Contains(err.Error(), "rejected") {
		t.Errorf("Verify on 401: %v, want a permanent rejection", err)
	}
}

func TestNewJSONAPI(t *testing.T) {
	if _, _, err := apidriver.NewJSONAPI("acme", "https://api.acme.example", core.Settings{}, core.DriverEnv{}, apidriver.BearerAuth); core.ErrorFields(err)["api_key"] == "" {
		t.Errorf("no api_key: %v, want a field error", err)
	}
	api, key, err := apidriver.NewJSONAPI("acme", "https://api.acme.example", core.Settings{"api_key": "k", "base_url": "https://eu.acme.example/"}, core.DriverEnv{},
		apidriver.HeaderAuth("X-Acme-Key"))
	if err != nil || key != "k" || api.BaseURL != "https://eu.acme.example" {
		t.Fatalf("NewJSONAPI = %+v %q %v", api, key, err)
	}
	h := http.Header{}
	api.Auth(h)
	if h.Get("X-Acme-Key") != "k" {
		t.Errorf("auth header %v", h)
	}
}

func TestMessageParts(t *testing.T) {
	if got := apidriver.Mailbox(core.Address{Name: `Zoë "Z" \ Co`, Email: "z@example.com"}); got != `"Zoë \"Z\" \\ Co" <z@example.com>` {
		t.Errorf("Mailbox = %s", got)
	}
	if got := apidriver.Mailbox(core.Address{Email: "a@example.com"}); got != "a@example.com" {
		t.Errorf("bare Mailbox = %s", got)
	}
	one := []core.Address{{Email: "a@example.com"}}
	two := append(one, core.Address{Name: "B", Email: "b@example.com"})
	if h := apidriver.WithReplyTo(nil, one); h != nil {
		t.Errorf("one Reply-To made headers %v", h)
	}
	if h := apidriver.WithReplyTo(nil, two); h["Reply-To"] != `a@example.com, "B" <b@example.com>` {
		t.Errorf("two Reply-To: %v", h)
	}
	msg := &core.Message{Headers: []core.Header{{Name: "X-Order", Value: "42"}, {Name: "reply-to", Value: "x"}, {Name: "Subject", Value: "s"}}}
	if h := apidriver.CustomHeaders(msg); len(h) != 1 || h["X-Order"] != "42" {
		t.Errorf("CustomHeaders = %v", h)
	}
	big := &core.Message{Attachments: []core.Attachment{{Data: make([]byte, 3000)}}}
	if err := apidriver.CheckSize(big, 3999); err == nil || core.IsTemporary(err) {
		t.Errorf("CheckSize over the cap (base64 counted): %v, want a permanent error", err)
	}
	if err := apidriver.CheckSize(big, 4000); err != nil {
		t.Errorf("CheckSize within the cap: %v", err)
	}
}

func TestSenderForceFrom(t *testing.T) {
	msgFrom := core.Address{Name: "Shop", Email: "shop@example.com"}
	tests := []struct {
		name     string
		settings core.Settings
		from     core.Address
		want     core.Address
	}{
		{"forced by default", core.Settings{"from_email": "n@example.net", "from_name": "N"}, msgFrom, core.Address{Name: "N", Email: "n@example.net"}},
		{"off keeps the sender", core.Settings{"from_email": "n@example.net", "force_from": false}, msgFrom, msgFrom},
		{"off fills a missing sender", core.Settings{"from_email": "n@example.net", "force_from": false}, core.Address{}, core.Address{Email: "n@example.net"}},
	}
	for _, tc := range tests {
		if got := apidriver.SenderOf(tc.settings).Apply(tc.from); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestJSONAPIUnanswered: a send whose request left whole and got no
// answer before the deadline is uncertain (the engine looks before it
// sends again); a read is not.
func TestJSONAPIUnanswered(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		<-release
	}))
	defer srv.Close()
	defer close(release)
	api := apidriver.JSONAPI{Name: "acme", BaseURL: srv.URL, Client: apidriver.HTTPClient(core.DriverEnv{})}
	for _, tc := range []struct {
		method        string
		wantUncertain bool
	}{{"POST", true}, {"GET", false}} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := api.Do(ctx, "send", tc.method, "/send", nil, nil)
		cancel()
		if err == nil || core.IsUncertain(err) != tc.wantUncertain || !core.IsTemporary(err) {
			t.Errorf("%s: err %v, uncertain %v, want %v and temporary", tc.method, err, core.IsUncertain(err), tc.wantUncertain)
		}
	}
}

// TestJSONAPIProviderAnswers: a request that never reached the provider
// is temporary and not uncertain; a 429 without Retry-After waits what
// the provider's own reset header says; a credentials check accepts the
// refusal that valid says proves a key allowed to send only, and calls
// any other 401 a rejected key, for good, without showing it.
func TestJSONAPIProviderAnswers(t *testing.T) {
	const key = "secret-key-123"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/limited":
			w.Header().Set("X-Acme-Reset", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/sendonly":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"name":"send_only","key":"`+key+`"}`)
		}
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	api := func(base string) *apidriver.JSONAPI {
		return &apidriver.JSONAPI{Name: "acme", BaseURL: base, Client: apidriver.HTTPClient(core.DriverEnv{}),
			Auth: apidriver.BearerAuth(key), Secrets: []string{key}, RateLimitReset: "X-Acme-Reset"}
	}
	if _, err := api(closed.URL).Do(context.Background(), "send", http.MethodPost, "/send", map[string]string{"a": "b"}, nil); err == nil || !core.IsTemporary(err) || core.IsUncertain(err) {
		t.Errorf("never reached: %v, want temporary and not uncertain", err)
	}
	_, err := api(srv.URL).Do(context.Background(), "send", http.MethodPost, "/limited", map[string]string{"a": "b"}, nil)
	if wait, ok := core.AsRateLimited(err); !ok || wait != 7*time.Second {
		t.Errorf("429 with the reset header: %v, wait %v, want 7s", err, wait)
	}
	valid := func(r *apidriver.Response) bool { return strings.Contains(string(r.Body), "send_only") }
	if err := api(srv.URL).Verify(context.Background(), http.MethodGet, "/sendonly", nil, valid); err != nil {
		t.Errorf("Verify with a send-only key: %v", err)
	}
	err = api(srv.URL).Verify(context.Background(), http.MethodGet, "/sendonly", nil, nil)
	if err == nil || core.IsTemporary(err) || strings.Contains(err.Error(), key) {
		t.Errorf("Verify of a 401: %v, want a permanent failure without the key", err)
	}
}
