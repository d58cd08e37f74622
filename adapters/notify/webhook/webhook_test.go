package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/adapters/notify/netguard"
	"github.com/mailsvc/mailsvc/adapters/notify/notifytest"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/webhooksink"
)

var alert = core.Alert{
	Event: core.EventConnectionDown, ConnectionID: 3, ConnectionName: "SES <main>",
	Title: "Connection SES is down", Message: "AUTH failed: 535", Site: "https://example.com",
	At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Test: true,
}

func newNotifier(t *testing.T, url, secret string, now time.Time) *Notifier {
	t.Helper()
	n, err := New(&core.NotificationChannel{Type: Slug, Settings: core.Settings{KeyURL: url, KeySecret: secret}}, notifytest.Env())
	if err != nil {
		t.Fatal(err)
	}
	wn := n.(*Notifier)
	wn.now = func() time.Time { return now }
	return wn
}

func TestNotifySendsSignedAlert(t *testing.T) {
	sink := webhooksink.New()
	defer sink.Close()
	now := time.Unix(1735787045, 0)
	tests := []struct {
		name   string
		secret string
	}{
		{"signed", "s3cret-signing-key"},
		{"unsigned", ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer, err := newNotifier(t, sink.URL+"/hooks/mailsvc?k=1", tt.secret, now).Notify(context.Background(), alert)
			if err != nil {
				t.Fatal(err)
			}
			if answer != "The webhook answered HTTP 200: ok" {
				t.Errorf("answer = %q", answer)
			}
			reqs, err := sink.Await(i+1, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			r := reqs[i]
			if r.Method != http.MethodPost || r.Path != "/hooks/mailsvc" || r.RawQuery != "k=1" {
				t.Errorf("request %s %s?%s", r.Method, r.Path, r.RawQuery)
			}
			wantBody := `{"event":"connection_down","connection_id":3,"connection_name":"SES \u003cmain\u003e","title":"Connection SES is down","message":"AUTH failed: 535","site":"https://example.com","at":"2025-01-02T03:04:05Z","test":true}`
			if string(r.Body) != wantBody {
				t.Errorf("body\n got %s\nwant %s", r.Body, wantBody)
			}
			var decoded core.Alert
			if err := json.Unmarshal(r.Body, &decoded); err != nil || !decoded.At.Equal(alert.At) || decoded.Title != alert.Title {
				t.Errorf("body does not decode to the alert: %v %+v", err, decoded)
			}
			wantHeaders := map[string]string{
				"Content-Type":  "application/json",
				"User-Agent":    notify.UserAgent,
				HeaderEvent:     "connection_down",
				HeaderTimestamp: strconv.FormatInt(now.Unix(), 10),
				HeaderSignature: "",
			}
			if tt.secret != "" {
				wantHeaders[HeaderSignature] = Sign(tt.secret, "1735787045", r.Body)
			}
			for k, want := range wantHeaders {
				if got := r.Header.Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if tt.secret == "" {
				return
			}
			sig := r.Header.Get(HeaderSignature)
			ts := r.Header.Get(HeaderTimestamp)
			checks := []struct {
				secret, ts, body, sig string
				want                  bool
			}{
				{tt.secret, ts, string(r.Body), sig, true},
				{"wrong-secret", ts, string(r.Body), sig, false},
				{tt.secret, ts, strings.Replace(string(r.Body), "down", "up", 1), sig, false},
				{tt.secret, "1735787046", string(r.Body), sig, false},
				{tt.secret, ts, string(r.Body), strings.TrimPrefix(sig, "sha256="), false},
				{tt.secret, ts, string(r.Body), "sha256=zz", false},
				{"", ts, string(r.Body), Sign("", ts, r.Body), false},
			}
			for j, c := range checks {
				if got := Verify(c.secret, c.ts, c.body, c.sig); got != c.want {
					t.Errorf("check %d: Verify = %v, want %v", j, got, c.want)
				}
			}
		})
	}
}

// TestSignKnownValue pins the scheme so a receiver written from the
// package doc agrees: hex HMAC-SHA256 keyed "key" over
// `1700000000.{"event":"x"}`, as `openssl dgst -sha256 -hmac key` gives.
func TestSignKnownValue(t *testing.T) {
	const want = "sha256=47523adf0d7a4582ed29b23c5da82307133f3f300d2d2253ac716853571b2806"
	if got := Sign("key", "1700000000", []byte(`{"event":"x"}`)); got != want {
		t.Errorf("Sign = %q, want %q", got, want)
	}
	if !Verify("key", "1700000000", `{"event":"x"}`, want) {
		t.Error("Verify refuses the known signature")
	}
}

func TestNotifyClassifiesAnswers(t *testing.T) {
	sink := webhooksink.New()
	defer sink.Close()
	const secret = "s3cret-signing-key"
	tests := []struct {
		status        int
		retryAfter    string
		wantTemporary bool
		wantWait      time.Duration
	}{
		{http.StatusTooManyRequests, "7", true, 7 * time.Second},
		{http.StatusInternalServerError, "", true, 0},
		{http.StatusBadGateway, "", true, 0},
		{http.StatusServiceUnavailable, "2", true, 2 * time.Second},
		{http.StatusBadRequest, "", false, 0},
		{http.StatusUnauthorized, "", false, 0},
		{http.StatusNotFound, "", false, 0},
		{http.StatusGone, "", false, 0},
	}
	url := sink.URL + "/private/" + secret // a URL holding a secret path
	n := newNotifier(t, url, secret, time.Now())
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			h := http.Header{}
			if tt.retryAfter != "" {
				h.Set("Retry-After", tt.retryAfter)
			}
			sink.FailNextWith(1, tt.status, h, "echo "+url)
			_, err := n.Notify(context.Background(), alert)
			if err == nil {
				t.Fatal("Notify succeeded")
			}
			if core.IsTemporary(err) != tt.wantTemporary {
				t.Errorf("IsTemporary = %v, want %v (%v)", !tt.wantTemporary, tt.wantTemporary, err)
			}
			if !strings.Contains(err.Error(), strconv.Itoa(tt.status)) {
				t.Errorf("error %q does not name the status", err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q shows the secret", err)
			}
			wait, ok := notify.RetryAfter(err)
			if ok != (tt.wantWait > 0) || wait != tt.wantWait {
				t.Errorf("RetryAfter = %v, %v, want %v", wait, ok, tt.wantWait)
			}
			var ra interface{ RetryAfter() time.Duration }
			if errors.As(err, &ra) != (tt.wantWait > 0) {
				t.Errorf("errors.As(RetryAfter interface) disagrees")
			}
		})
	}
}

func TestNotifyNetworkAndGuardFailures(t *testing.T) {
	sink := webhooksink.New()
	url := sink.URL + "/hook/tok-abc123"
	sink.Close() // nothing listens any more
	tests := []struct {
		name          string
		allowPrivate  bool
		wantTemporary bool
		wantRefused   bool
	}{
		{"connection refused is temporary", true, true, false},
		{"guard refusal is permanent", false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := New(&core.NotificationChannel{Settings: core.Settings{KeyURL: url}},
				core.NotifierEnv{HTTPClient: netguard.NewClient(tt.allowPrivate, 5*time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = n.Notify(context.Background(), alert)
			if err == nil {
				t.Fatal("Notify succeeded")
			}
			if core.IsTemporary(err) != tt.wantTemporary || errors.Is(err, netguard.ErrRefused) != tt.wantRefused {
				t.Errorf("err = %v: temporary %v refused %v", err, core.IsTemporary(err), errors.Is(err, netguard.ErrRefused))
			}
			if strings.Contains(err.Error(), "tok-abc123") {
				t.Errorf("error %q shows the URL's path", err)
			}
		})
	}
}
