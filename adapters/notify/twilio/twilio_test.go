package twilio

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/twiliofake"
)

const (
	sid   = "AC0123456789abcdef0123456789abcdef"
	token = "f00dfeedf00dfeedf00dfeedf00dfeed"
)

var alert = core.Alert{Event: core.EventDeliveryFailed, ConnectionID: 2, ConnectionName: "SES eu",
	Title: "Email delivery failed", Message: "Message 9 (\"Welcome\") failed for good after 3 attempt(s): 550 rejected",
	LogID: 9, Site: "https://shop.example", At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}

func notifier(t *testing.T, api string, s core.Settings) core.Notifier {
	t.Helper()
	n, err := New(&core.NotificationChannel{Settings: s}, core.NotifierEnv{TwilioAPI: api, HTTPClient: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func settings(tok string) core.Settings {
	return core.Settings{KeyAccountSID: sid, KeyAuthToken: tok, KeyFrom: "+15005550006", KeyTo: "+447700900123"}
}

func TestNotifySendsTheFormWithBasicAuth(t *testing.T) {
	fake := twiliofake.New(sid, token)
	defer fake.Close()
	answer, err := notifier(t, fake.URL+"/", settings(token)).Notify(context.Background(), alert)
	if err != nil || !strings.HasPrefix(answer, "Twilio accepted the message (sid SM") {
		t.Fatalf("Notify = %q, %v", answer, err)
	}
	msgs := fake.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	want := "Email delivery failed - SES eu\nMessage 9 (\"Welcome\") failed for good after 3 attempt(s): 550 rejected\nhttps://shop.example"
	if m.AccountSID != sid || m.To != "+447700900123" || m.From != "+15005550006" || m.Body != want {
		t.Fatalf("message = %+v\nwant body %q", m, want)
	}
	if len(m.Form) != 3 {
		t.Errorf("form fields = %v, want To, From and Body only", m.Form)
	}
}

func TestNotifyClassifiesTwilioErrors(t *testing.T) {
	fake := twiliofake.New(sid, token)
	defer fake.Close()
	// A wrong token: 401, permanent, the token never in the text.
	wrong := "deadbeefdeadbeefdeadbeefdeadbeef"
	_, err := notifier(t, fake.URL, settings(wrong)).Notify(context.Background(), alert)
	if err == nil || core.IsTemporary(err) || !strings.Contains(err.Error(), "20003") || strings.Contains(err.Error(), wrong) {
		t.Fatalf("wrong token: %v", err)
	}
	// 429 with Retry-After: temporary, the wait kept.
	fake.FailNext(1, http.StatusTooManyRequests, 7)
	_, err = notifier(t, fake.URL, settings(token)).Notify(context.Background(), alert)
	if d, ok := notify.RetryAfter(err); !core.IsTemporary(err) || !ok || d != 7*time.Second || !strings.Contains(err.Error(), "20429") {
		t.Fatalf("429: %v (retry after %v %v)", err, d, ok)
	}
	// 503 without a wait: temporary.
	fake.FailNext(1, http.StatusServiceUnavailable, 0)
	if _, err = notifier(t, fake.URL, settings(token)).Notify(context.Background(), alert); !core.IsTemporary(err) {
		t.Fatalf("503: %v", err)
	}
	// Unreachable: temporary.
	dead := twiliofake.New(sid, token)
	dead.Close()
	if _, err = notifier(t, dead.URL, settings(token)).Notify(context.Background(), alert); !core.IsTemporary(err) {
		t.Fatalf("unreachable: %v", err)
	}
	if n := len(fake.Messages()); n != 0 {
		t.Fatalf("%d messages accepted", n)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(core.Settings)
		field string
	}{
		{"valid", func(core.Settings) {}, ""},
		{"alphanumeric sender", func(s core.Settings) { s[KeyFrom] = "Shop Alert" }, ""},
		{"sid not AC", func(s core.Settings) { s[KeyAccountSID] = "SK0123456789abcdef0123456789abcdef" }, KeyAccountSID},
		{"sid short", func(s core.Settings) { s[KeyAccountSID] = "AC0123" }, KeyAccountSID},
		{"token with spaces", func(s core.Settings) { s[KeyAuthToken] = "abc def abc def abc def" }, KeyAuthToken},
		{"to not E.164", func(s core.Settings) { s[KeyTo] = "07700 900123" }, KeyTo},
		{"from digits only sender", func(s core.Settings) { s[KeyFrom] = "12345" }, KeyFrom},
		{"from too long", func(s core.Settings) { s[KeyFrom] = "A sender too long" }, KeyFrom},
	}
	for _, tt := range tests {
		s := settings(token)
		tt.edit(s)
		fields := validate(s)
		if tt.field == "" && len(fields) != 0 || tt.field != "" && (len(fields) != 1 || fields[tt.field] == "") {
			t.Errorf("%s: %v", tt.name, fields)
		}
	}
}

// TestValidateSaysHowLongATokenIs: a token cut short when pasted is all
// letters and digits; the message must not claim those are what is wrong.
func TestValidateSaysHowLongATokenIs(t *testing.T) {
	s := settings(token)
	s[KeyAuthToken] = "abc123"
	if msg := validate(s)[KeyAuthToken]; !strings.Contains(msg, "16 to 128") {
		t.Errorf("a short token is refused with %q, want its length named", msg)
	}
}

func TestAuthTokenIsSensitive(t *testing.T) {
	typ := Type()
	if f := typ.Field(KeyAuthToken); f == nil || !f.Sensitive || f.Type != core.FieldPassword {
		t.Fatalf("auth_token field = %+v", f)
	}
	if f := typ.Field(KeyAccountSID); f == nil || f.Sensitive {
		t.Fatalf("account_sid field = %+v", f)
	}
}

func TestBodyStaysWithinTwoSegments(t *testing.T) {
	tests := []struct {
		name    string
		message string
		gsm     bool
	}{
		{"short", "550 rejected", true},
		{"long GSM", strings.Repeat("mailbox full ", 100), true},
		{"long UCS-2", strings.Repeat("Письмо не доставлено ", 30), false},
		{"emoji", strings.Repeat("📧 bounced ", 40), false},
	}
	for _, tt := range tests {
		a := alert
		a.Message = tt.message
		body := Body(a)
		if got := Segments(body); got > maxSegments {
			t.Errorf("%s: %d segments: %q", tt.name, got, body)
		}
		if _, gsm := septets(body); gsm != tt.gsm {
			t.Errorf("%s: gsm = %v", tt.name, gsm)
		}
		if !strings.HasPrefix(body, "Email delivery failed - SES eu\n") || !strings.HasSuffix(body, "\nhttps://shop.example") {
			t.Errorf("%s: head or site lost: %q", tt.name, body)
		}
	}
	if Segments(strings.Repeat("a", 160)) != 1 || Segments(strings.Repeat("a", 161)) != 2 ||
		Segments(strings.Repeat("é", 160)) != 1 || Segments(strings.Repeat("ж", 70)) != 1 || Segments(strings.Repeat("ж", 71)) != 2 ||
		Segments(strings.Repeat("{", 80)) != 1 || Segments(strings.Repeat("{", 81)) != 2 {
		t.Error("segment counting is off")
	}
}

func TestNewRefusesMissingSettings(t *testing.T) {
	_, err := New(&core.NotificationChannel{Settings: core.Settings{KeyAccountSID: sid}}, core.NotifierEnv{})
	if err == nil || core.ErrorCode(err) != core.EINVALID {
		t.Fatalf("New = %v", err)
	}
	var target interface{ RetryAfter() time.Duration }
	if errors.As(err, &target) {
		t.Fatal("unexpected wait")
	}
}
