package gmail_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/gmail"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver/oauthdrivertest"
	"github.com/mailsvc/mailsvc/test/fakes/gmailfake"
)

const goodToken = "ya29.good-access-token"

func only(tok string) func(string) bool { return func(t string) bool { return t == tok } }

// newTransport builds a gmail transport with src as the OAuth service and
// hc, when not nil, as the HTTP client.
func newTransport(t *testing.T, settings core.Settings, src core.TokenSource, hc *http.Client) core.Transport {
	t.Helper()
	return drivertest.NewTransportEnv(t, gmail.Slug, settings, core.DriverEnv{HTTPClient: hc, Tokens: src})
}

// startGmail starts a Gmail fake that accepts goodToken, closed when t
// ends.
func startGmail(t *testing.T) *gmailfake.Server {
	f := gmailfake.New(only(goodToken))
	t.Cleanup(f.Close)
	return f
}

func settingsFor(url string) core.Settings {
	return core.Settings{"client_id": "cid", "client_secret": "csecret", "base_url": url}
}

func TestSendFullMessage(t *testing.T) {
	fake := startGmail(t)
	override := settingsFor(fake.URL + "/")
	override["from_email"], override["from_name"] = "alias@example.net", "Alias Net"
	tests := []struct {
		name     string
		settings core.Settings
		wantFrom gmailfake.Address
	}{
		{"message sender", settingsFor(fake.URL), gmailfake.Address{Name: "Shop", Email: "shop@example.com"}},
		{"connection sender overrides", override, gmailfake.Address{Name: "Alias Net", Email: "alias@example.net"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := drivertest.FullMessage()
			msg.Bcc = append(msg.Bcc, core.Address{Name: "Dörte", Email: "doerte@example.org"})
			msg.ReplyTo = append(msg.ReplyTo, core.Address{Email: "second@example.com"})
			rc, m := drivertest.SendRecorded(t, newTransport(t, tc.settings, oauthdrivertest.NewTokens(goodToken), nil), msg, fake.Messages, i+1)
			if rc.MessageID == "" || rc.MessageID != m.ID || m.Upload {
				t.Errorf("receipt id %q, fake id %q, upload %v", rc.MessageID, m.ID, m.Upload)
			}
			if m.From != tc.wantFrom {
				t.Errorf("from = %+v, want %+v", m.From, tc.wantFrom)
			}
			// Raw MIME puts the inline image in its own multipart/related
			// part ahead of the attachments: match them by name.
			drivertest.Harness{AttachmentsByName: true}.CheckMessage(t, drivertest.Recorded([]gmailfake.Message{m})[0], msg)
		})
	}
}

func TestLargeMessageGoesThroughUpload(t *testing.T) {
	fake := startGmail(t)
	big := make([]byte, 4<<20) // base64 in MIME: ~5.4 MB, over the threshold
	for i := range big {
		big[i] = byte(i * 7)
	}
	tests := []struct {
		name       string
		data       []byte
		wantUpload bool
	}{
		{"small message as JSON raw", drivertest.PDFBytes(), false},
		{"large message as media upload", big, true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := drivertest.FullMessage()
			msg.Attachments = []core.Attachment{{Filename: "data.bin", ContentType: "application/octet-stream", Data: tc.data}}
			rc, err := newTransport(t, settingsFor(fake.URL), oauthdrivertest.NewTokens(goodToken), nil).Send(context.Background(), msg)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			m := fake.Messages()[i]
			if m.Upload != tc.wantUpload || rc.MessageID != m.ID {
				t.Fatalf("upload = %v (want %v), receipt %q vs %q", m.Upload, tc.wantUpload, rc.MessageID, m.ID)
			}
			if tc.wantUpload != (len(m.Raw) > gmail.UploadThreshold) {
				t.Errorf("raw size %d vs threshold %d", len(m.Raw), gmail.UploadThreshold)
			}
			if len(m.Attachments) != 1 || !bytes.Equal(m.Attachments[0].Data, tc.data) || m.Subject != msg.Subject {
				t.Errorf("the message did not arrive intact: %d attachments, subject %q", len(m.Attachments), m.Subject)
			}
		})
	}
}

func TestTokenRefusedRefreshesOnce(t *testing.T) {
	tests := []struct {
		name          string
		src           *oauthdrivertest.Tokens
		wantErr       bool
		wantTokens    []string
		wantRefreshes int
	}{
		{"401 then refreshed token accepted", oauthdrivertest.NewTokens("ya29.expired", goodToken), false,
			[]string{"ya29.expired", goodToken}, 1},
		{"401 twice is permanent", oauthdrivertest.NewTokens("ya29.expired", "ya29.also-bad", goodToken), true,
			[]string{"ya29.expired", "ya29.also-bad"}, 1},
		{"valid token, no refresh", oauthdrivertest.NewTokens(goodToken), false, []string{goodToken}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := startGmail(t)
			_, err := newTransport(t, settingsFor(fake.URL), tc.src, nil).Send(context.Background(), drivertest.FullMessage())
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				if core.IsTemporary(err) || !strings.Contains(err.Error(), "401") {
					t.Errorf("err = %v, want a permanent HTTP 401 error", err)
				}
				for _, tok := range tc.wantTokens {
					if strings.Contains(err.Error(), tok) {
						t.Errorf("error shows a token: %v", err)
					}
				}
			}
			if got := fake.Tokens(); strings.Join(got, ",") != strings.Join(tc.wantTokens, ",") || tc.src.Refreshes() != tc.wantRefreshes {
				t.Errorf("tokens sent %v (refreshes %d), want %v (%d)", got, tc.src.Refreshes(), tc.wantTokens, tc.wantRefreshes)
			}
			if n := len(fake.Messages()); n != map[bool]int{true: 0, false: 1}[tc.wantErr] {
				t.Errorf("recorded %d messages", n)
			}
		})
	}
}

func TestErrorsClassified(t *testing.T) {
	type fake = *gmailfake.Server
	oauthdrivertest.SendErrors(t, startGmail, []oauthdrivertest.ErrorCase[fake]{
		{Name: "400 bad request", Fail: func(f fake) { f.FailNext(1, 400) }},
		{Name: "403 forbidden", Fail: func(f fake) { f.FailNext(1, 403) }},
		{Name: "403 rate limit", Fail: func(f fake) {
			f.Server.FailNext(1, 403, gmailfake.ErrorBody(403, "userRateLimitExceeded", "User-rate limit exceeded."))
		}, WantTemporary: true},
		{Name: "429 rate limit", Fail: func(f fake) { f.FailNext(1, 429) }, WantTemporary: true},
		{Name: "500", Fail: func(f fake) { f.FailNext(1, 500) }, WantTemporary: true},
		{Name: "503", Fail: func(f fake) { f.FailNext(1, 503) }, WantTemporary: true},
		{Name: "stalled server", Fail: func(f fake) { f.StallNext(1) }, Stall: true, WantTemporary: true},
	}, func(ctx context.Context, t *testing.T, f fake, src *oauthdrivertest.Tokens) error {
		_, err := newTransport(t, settingsFor(f.URL), src, nil).Send(ctx, drivertest.FullMessage())
		return err
	}, func(f fake) int { return len(f.Messages()) }, goodToken, "ya29.other")
}

func TestNetworkErrorIsTemporary(t *testing.T) {
	fake := gmailfake.New(only(goodToken))
	url := fake.URL
	fake.Close()
	_, err := newTransport(t, settingsFor(url), oauthdrivertest.NewTokens(goodToken), nil).Send(context.Background(), drivertest.FullMessage())
	var de *core.DeliveryError
	if err == nil || !errors.As(err, &de) || !core.IsTemporary(err) {
		t.Fatalf("err = %v, want a classified temporary error", err)
	}
}

func TestNoTokenServiceIsPermanent(t *testing.T) {
	fake := startGmail(t)
	_, err := newTransport(t, settingsFor(fake.URL), nil, nil).Send(context.Background(), drivertest.FullMessage())
	if err == nil || core.IsTemporary(err) || fake.Requests() != 0 {
		t.Fatalf("err = %v (requests %d), want a permanent error and no request", err, fake.Requests())
	}
}

// countingTransport counts the requests that go through the host's client.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestVerify(t *testing.T) {
	tests := []struct {
		name          string
		src           *oauthdrivertest.Tokens
		sendOnly      bool
		status        int
		wantErr       bool
		wantTemporary bool
		wantRequests  int
	}{
		{name: "profile read", src: oauthdrivertest.NewTokens(goodToken), wantRequests: 1},
		{name: "send-only scope still proves the token", src: oauthdrivertest.NewTokens(goodToken), sendOnly: true, wantRequests: 1},
		{name: "refused token, refresh refused too", src: oauthdrivertest.NewTokens("ya29.bad", "ya29.worse"), wantErr: true, wantRequests: 2},
		{name: "refused token, refreshed", src: oauthdrivertest.NewTokens("ya29.bad", goodToken), wantRequests: 2},
		{name: "forbidden", src: oauthdrivertest.NewTokens(goodToken), status: 403, wantErr: true, wantRequests: 1},
		{name: "server error", src: oauthdrivertest.NewTokens(goodToken), status: 500, wantErr: true, wantTemporary: true, wantRequests: 1},
		{name: "rate limited", src: oauthdrivertest.NewTokens(goodToken), status: 429, wantErr: true, wantTemporary: true, wantRequests: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := startGmail(t)
			fake.SetSendOnly(tc.sendOnly)
			if tc.status != 0 {
				fake.FailNext(1, tc.status)
			}
			ct := &countingTransport{}
			v := newTransport(t, settingsFor(fake.URL), tc.src, &http.Client{Transport: ct}).(core.Verifier)
			err := v.Verify(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("Verify err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil && core.IsTemporary(err) != tc.wantTemporary {
				t.Errorf("IsTemporary = %v, want %v (%v)", core.IsTemporary(err), tc.wantTemporary, err)
			}
			if err != nil && (strings.Contains(err.Error(), tc.src.Current()) || strings.Contains(err.Error(), "ya29.")) {
				t.Errorf("error shows a token: %v", err)
			}
			if fake.Requests() != tc.wantRequests || int(ct.n.Load()) != tc.wantRequests || len(fake.Messages()) != 0 {
				t.Errorf("verify made %d requests (%d through the host client), sent %d messages; want %d requests",
					fake.Requests(), ct.n.Load(), len(fake.Messages()), tc.wantRequests)
			}
		})
	}
}

func TestSchema(t *testing.T) {
	d, ok := core.LookupDriver(gmail.Slug)
	if !ok {
		t.Fatal("gmail is not registered")
	}
	with := func(kv ...any) core.Settings {
		return drivertest.SettingsWith(core.Settings{"client_id": "cid", "client_secret": "cs"}, kv...)
	}
	drivertest.ValidateCases(t, d, []drivertest.SchemaCase{
		{Name: "valid api mode", Settings: with()},
		{Name: "valid smtp mode", Settings: with("delivery_mode", "smtp", "from_email", "me@example.com")},
		{Name: "valid with tokens", Settings: with("access_token", "ya29.x", "refresh_token", "1//r", "expires_at", "2030-01-01T00:00:00Z")},
		{Name: "missing client_id", Settings: with("client_id", nil), WantFields: []string{"client_id"}},
		{Name: "missing client_secret", Settings: with("client_secret", ""), WantFields: []string{"client_secret"}},
		{Name: "smtp mode needs from_email", Settings: with("delivery_mode", "smtp"), WantFields: []string{"from_email"}},
		{Name: "unknown mode", Settings: with("delivery_mode", "pop3"), WantFields: []string{"delivery_mode"}},
		{Name: "bad from_email", Settings: with("from_email", "not an email"), WantFields: []string{"from_email"}},
		{Name: "bad base_url", Settings: with("base_url", "ftp://x"), WantFields: []string{"base_url"}},
		{Name: "bad oauth_base_url", Settings: with("oauth_base_url", "accounts.google.com"), WantFields: []string{"oauth_base_url"}},
		{Name: "bad smtp_port", Settings: with("smtp_port", 70000), WantFields: []string{"smtp_port"}},
		{Name: "unknown key", Settings: with("data_center", "eu"), WantFields: []string{"data_center"}},
	}, func(t *testing.T, s core.Settings) {
		if s.String("delivery_mode") == "" || s.String("smtp_host") != gmail.DefaultSMTPHost {
			t.Errorf("defaults not filled: %v", s)
		}
	})
	if d.OAuthProvider != core.ProviderGoogle {
		t.Errorf("OAuthProvider = %q", d.OAuthProvider)
	}
	for _, key := range []string{"client_secret", "access_token", "refresh_token"} {
		if f := d.Field(key); f == nil || !f.Sensitive {
			t.Errorf("%s must be sensitive: %+v", key, f)
		}
	}
	if f := d.Field("client_id"); f == nil || f.Constant != "MAILSVC_GMAIL_CLIENT_ID" {
		t.Errorf("client_id field = %+v", f)
	}
	tr := newTransport(t, with(), oauthdrivertest.NewTokens(), nil).(interface{ BaseURL() string })
	if tr.BaseURL() != gmail.DefaultBaseURL {
		t.Errorf("BaseURL = %q, want %q", tr.BaseURL(), gmail.DefaultBaseURL)
	}
}

// TestRecipientCapParts: a message over Gmail's 500 recipients is refused
// by the fake; its parts at the driver's caps are accepted, every
// recipient once.
func TestRecipientCapParts(t *testing.T) {
	fake := startGmail(t)
	tr := newTransport(t, settingsFor(fake.URL), oauthdrivertest.NewTokens(goodToken), nil)
	parts := drivertest.SendInParts(t, gmail.Slug, tr, 1200)
	drivertest.CheckParts(t, parts, drivertest.Recorded(fake.Messages()), 3, 1200)
}

// TestEmbeds sends an HTML message with two inline images (WordPress's
// $embeds) and an attachment: the raw MIME Gmail gets carries each image
// as an inline part with its Content-ID, bytes intact.
func TestEmbeds(t *testing.T) {
	fake := startGmail(t)
	msg := drivertest.EmbedsMessage()
	_, m := drivertest.SendRecorded(t, newTransport(t, settingsFor(fake.URL), oauthdrivertest.NewTokens(goodToken), nil), msg, fake.Messages, 1)
	drivertest.Harness{AttachmentsByName: true}.CheckMessage(t, drivertest.Recorded([]gmailfake.Message{m})[0], msg)
}
