package outlook_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver/oauthdrivertest"
	"github.com/mailsvc/mailsvc/drivers/outlook"
	"github.com/mailsvc/mailsvc/test/fakes/graphfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

const (
	freshToken = "fresh-access-token"
	staleToken = "stale-access-token"
	mailbox    = "box@contoso.test"
)

// validFresh is the fake's validator: only freshToken is live.
func validFresh(tok string) bool { return tok == freshToken }

func startGraph(t *testing.T) *graphfake.Server {
	t.Helper()
	fake := graphfake.New(validFresh)
	t.Cleanup(fake.Close)
	return fake
}

func apiSettings(fake *graphfake.Server, extra core.Settings) core.Settings {
	s := core.Settings{oauthdriver.KeyClientID: "app", oauthdriver.KeyClientSecret: "shh"}
	if fake != nil {
		s[outlook.KeyBaseURL] = fake.BaseURL()
	}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

func newTransport(t *testing.T, set core.Settings, tokens core.TokenSource) core.Transport {
	t.Helper()
	d, ok := core.LookupDriver(outlook.Slug)
	if !ok {
		t.Fatal("outlook is not registered")
	}
	if err := d.ValidateSettings(set); err != nil {
		t.Fatalf("settings: %v", err)
	}
	return drivertest.NewTransportEnv(t, outlook.Slug, set, core.DriverEnv{Tokens: tokens})
}

// checkMessage compares what the fake recorded with what was sent.
func checkMessage(t *testing.T, got graphfake.Message, sent *core.Message) {
	t.Helper()
	conv := func(list []graphfake.Address) []core.Address {
		var out []core.Address
		for _, a := range list {
			out = append(out, core.Address{Name: a.Name, Email: a.Email})
		}
		return out
	}
	drivertest.CheckAddresses(t, "to", conv(got.To), sent.To)
	drivertest.CheckAddresses(t, "cc", conv(got.Cc), sent.Cc)
	drivertest.CheckAddresses(t, "bcc", conv(got.Bcc), sent.Bcc)
	drivertest.CheckAddresses(t, "reply-to", conv(got.ReplyTo), sent.ReplyTo)
	if got.Subject != sent.Subject || got.HTML != sent.HTML || got.Text != "" {
		t.Errorf("subject/html/text = %q/%q/%q", got.Subject, got.HTML, got.Text)
	}
	if got.Headers["X-Order"] != "42" || len(got.Headers) != 1 {
		t.Errorf("headers = %v, want only X-Order (Graph takes X- headers only)", got.Headers)
	}
	if !got.SaveToSentItems {
		t.Error("saveToSentItems is off")
	}
	if len(got.Attachments) != len(sent.Attachments) {
		t.Fatalf("got %d attachments, want %d", len(got.Attachments), len(sent.Attachments))
	}
	for _, want := range sent.Attachments {
		found := false
		for _, a := range got.Attachments {
			if a.Filename != want.Filename {
				continue
			}
			found = true
			if a.ContentType != want.ContentType || a.Inline != want.Inline || a.ContentID != want.ContentID {
				t.Errorf("attachment %s = %s inline=%v cid=%q", a.Filename, a.ContentType, a.Inline, a.ContentID)
			}
			if !bytes.Equal(a.Data, want.Data) {
				t.Errorf("attachment %s: bytes differ (%d vs %d)", a.Filename, len(a.Data), len(want.Data))
			}
		}
		if !found {
			t.Errorf("attachment %s missing", want.Filename)
		}
	}
}

func TestSendThroughGraph(t *testing.T) {
	tests := []struct {
		name        string
		extra       core.Settings
		wantFrom    *graphfake.Address
		wantMailbox string
	}{
		{name: "signed-in mailbox sends", wantMailbox: "me"},
		{name: "from_email and from_name", extra: core.Settings{outlook.KeyFromEmail: mailbox, outlook.KeyFromName: "Box"},
			wantFrom: &graphfake.Address{Name: "Box", Email: mailbox}, wantMailbox: "me"},
		{name: "from_email keeps the message's name", extra: core.Settings{outlook.KeyFromEmail: mailbox},
			wantFrom: &graphfake.Address{Name: "Shop", Email: mailbox}, wantMailbox: "me"},
		{name: "user_id", extra: core.Settings{outlook.KeyUserID: "shared@contoso.test"}, wantMailbox: "shared@contoso.test"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := startGraph(t)
			msg := drivertest.FullMessage()
			rc, m := drivertest.SendRecorded(t, newTransport(t, apiSettings(fake, tc.extra), oauthdrivertest.NewTokens(freshToken)), msg, fake.Messages, 1)
			if m.Draft || rc.MessageID == "" || rc.MessageID != m.ID {
				t.Errorf("draft %v, receipt %q, request-id %q: want sendMail with the request-id as id", m.Draft, rc.MessageID, m.ID)
			}
			if m.Mailbox != tc.wantMailbox {
				t.Errorf("mailbox = %q, want %q", m.Mailbox, tc.wantMailbox)
			}
			if (m.From == nil) != (tc.wantFrom == nil) || (m.From != nil && *m.From != *tc.wantFrom) {
				t.Errorf("from = %+v, want %+v", m.From, tc.wantFrom)
			}
			checkMessage(t, m, msg)
		})
	}
}

func TestTextOnlyBody(t *testing.T) {
	fake := startGraph(t)
	msg := &core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "ann@example.org"}},
		Subject: "Plain", Text: "only text"}
	if _, err := newTransport(t, apiSettings(fake, nil), oauthdrivertest.NewTokens(freshToken)).Send(context.Background(), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if m := fake.Messages()[0]; m.Text != "only text" || m.HTML != "" {
		t.Fatalf("text/html = %q/%q", m.Text, m.HTML)
	}
}

// blob returns n bytes with every byte value.
func blob(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

func TestLargeMessagesGoAsDrafts(t *testing.T) {
	tests := []struct {
		name       string
		attach     []core.Attachment
		wantChunks int
	}{
		{name: "one attachment over 3 MB through an upload session",
			attach:     []core.Attachment{{Filename: "video.bin", ContentType: "application/octet-stream", Data: blob(3<<20+500_000, 1)}},
			wantChunks: 2},
		{name: "small attachments over 4 MB together",
			attach: []core.Attachment{
				{Filename: "a.bin", ContentType: "application/octet-stream", Data: blob(1_500_000, 2)},
				{Filename: "b.bin", ContentType: "application/octet-stream", Data: blob(1_500_000, 3)},
				{Filename: "c.bin", ContentType: "application/octet-stream", Data: blob(1_500_000, 4)},
			}},
		{name: "a large inline image",
			attach:     []core.Attachment{{Filename: "big.png", ContentType: "image/png", Data: blob(4<<20, 5), Inline: true, ContentID: "big1"}},
			wantChunks: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := startGraph(t)
			msg := drivertest.FullMessage()
			msg.Attachments = append(msg.Attachments, tc.attach...)
			rc, err := newTransport(t, apiSettings(fake, nil), oauthdrivertest.NewTokens(freshToken)).Send(context.Background(), msg)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := fake.Messages()
			if len(got) != 1 || !got[0].Draft {
				t.Fatalf("fake recorded %d messages (draft %v), want one sent draft", len(got), len(got) == 1 && got[0].Draft)
			}
			if rc.MessageID != got[0].ID {
				t.Errorf("receipt id %q, draft id %q", rc.MessageID, got[0].ID)
			}
			if fake.Chunks() != tc.wantChunks || fake.Drafts() != 0 {
				t.Errorf("chunks %d, drafts left %d; want %d and 0", fake.Chunks(), fake.Drafts(), tc.wantChunks)
			}
			checkMessage(t, got[0], msg)
			for _, a := range got[0].Attachments {
				if a.Uploaded != (len(a.Data) >= outlook.LargeAttachment) {
					t.Errorf("attachment %s (%d bytes) uploaded = %v", a.Filename, len(a.Data), a.Uploaded)
				}
			}
		})
	}
}

func TestRefusedTokenIsRefreshedOnce(t *testing.T) {
	big := []core.Attachment{{Filename: "video.bin", ContentType: "application/octet-stream", Data: blob(3<<20+10, 9)}}
	tests := []struct {
		name          string
		tokens        []string
		attach        []core.Attachment
		wantErr       bool
		wantRefreshes int
	}{
		{name: "valid token", tokens: []string{freshToken}},
		{name: "401 once, refreshed", tokens: []string{staleToken, freshToken}, wantRefreshes: 1},
		{name: "401 once on the draft route", tokens: []string{staleToken, freshToken}, attach: big, wantRefreshes: 1},
		{name: "401 twice", tokens: []string{staleToken, "revoked-access-token"}, wantErr: true, wantRefreshes: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := startGraph(t)
			ts := oauthdrivertest.NewTokens(tc.tokens...)
			msg := drivertest.FullMessage()
			msg.Attachments = append(msg.Attachments, tc.attach...)
			_, err := newTransport(t, apiSettings(fake, nil), ts).Send(context.Background(), msg)
			if ts.Refreshes() != tc.wantRefreshes {
				t.Errorf("refreshes = %d, want %d", ts.Refreshes(), tc.wantRefreshes)
			}
			if tc.wantErr {
				oauthdrivertest.CheckRefused(t, err, tc.tokens...)
				if !errors.Is(err, oauthdriver.ErrUnauthorized) {
					t.Fatalf("Send = %v, want a refusal of the token", err)
				}
				if len(fake.Messages()) != 0 {
					t.Fatal("a message was sent")
				}
				return
			}
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if n := len(fake.Messages()); n != 1 {
				t.Fatalf("fake recorded %d messages, want 1", n)
			}
			if toks := fake.Tokens(); toks[len(toks)-1] != freshToken {
				t.Errorf("last request used %q", toks[len(toks)-1])
			}
		})
	}
}

func TestErrorsClassified(t *testing.T) {
	type fake = *graphfake.Server
	status := func(code int) func(fake) { return func(f fake) { f.FailNext(1, code) } }
	oauthdrivertest.SendErrors(t, startGraph, []oauthdrivertest.ErrorCase[fake]{
		{Name: "429 throttled", Fail: status(429), WantTemporary: true},
		{Name: "503 unavailable", Fail: status(503), WantTemporary: true},
		{Name: "500", Fail: status(500), WantTemporary: true},
		{Name: "400 invalid recipients", Fail: status(400)},
		{Name: "403 send as denied", Fail: status(403)},
		{Name: "404", Fail: status(404)},
		{Name: "stalled server", Fail: func(f fake) { f.StallNext(1) }, Stall: true, WantTemporary: true},
	}, func(ctx context.Context, t *testing.T, f fake, src *oauthdrivertest.Tokens) error {
		_, err := newTransport(t, apiSettings(f, nil), src).Send(ctx, drivertest.FullMessage())
		return err
	}, func(f fake) int { return len(f.Messages()) }, freshToken)
	t.Run("network error", func(t *testing.T) {
		fake := graphfake.New(validFresh)
		set := apiSettings(fake, nil)
		fake.Close()
		_, err := newTransport(t, set, oauthdrivertest.NewTokens(freshToken)).Send(context.Background(), drivertest.FullMessage())
		if err == nil || !core.IsTemporary(err) {
			t.Fatalf("Send = %v, want temporary", err)
		}
	})
	t.Run("token service errors pass through", func(t *testing.T) {
		fake := startGraph(t)
		for _, want := range []error{core.Permanent(errors.New("needs authorization")), core.Temporary(errors.New("token endpoint down"))} {
			ts := oauthdrivertest.Failing(want)
			_, err := newTransport(t, apiSettings(fake, nil), ts).Send(context.Background(), drivertest.FullMessage())
			if !errors.Is(err, want) || core.IsTemporary(err) != core.IsTemporary(want) {
				t.Errorf("Send = %v, want %v", err, want)
			}
		}
		if fake.Requests() != 0 {
			t.Errorf("%d requests without a token", fake.Requests())
		}
	})
	t.Run("no token service", func(t *testing.T) {
		fake := startGraph(t)
		_, err := newTransport(t, apiSettings(fake, nil), nil).Send(context.Background(), drivertest.FullMessage())
		if err == nil || core.IsTemporary(err) {
			t.Fatalf("Send = %v, want permanent", err)
		}
	})
}

func TestVerifyThroughGraph(t *testing.T) {
	tests := []struct {
		name          string
		tokens        []string
		status        int
		wantErr       bool
		wantTemporary bool
		wantRequests  int
	}{
		{name: "valid token", tokens: []string{freshToken}, wantRequests: 1},
		{name: "token without User.Read (403) is still a good token", tokens: []string{freshToken}, status: 403, wantRequests: 1},
		{name: "401 then refreshed", tokens: []string{staleToken, freshToken}, wantRequests: 2},
		{name: "refused after refresh", tokens: []string{staleToken, "revoked"}, wantErr: true, wantRequests: 2},
		{name: "unavailable", tokens: []string{freshToken}, status: 503, wantErr: true, wantTemporary: true, wantRequests: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := startGraph(t)
			if tc.status != 0 {
				fake.FailNext(1, tc.status)
			}
			err := newTransport(t, apiSettings(fake, nil), oauthdrivertest.NewTokens(tc.tokens...)).(core.Verifier).Verify(context.Background())
			if (err != nil) != tc.wantErr || (err != nil && core.IsTemporary(err) != tc.wantTemporary) {
				t.Fatalf("Verify = %v, wantErr %v temporary %v", err, tc.wantErr, tc.wantTemporary)
			}
			if err != nil && strings.Contains(err.Error(), staleToken) {
				t.Errorf("error shows a token: %v", err)
			}
			if fake.Requests() != tc.wantRequests || len(fake.Messages()) != 0 || fake.Drafts() != 0 {
				t.Errorf("requests %d, messages %d, drafts %d", fake.Requests(), len(fake.Messages()), fake.Drafts())
			}
		})
	}
}

func TestSMTPMode(t *testing.T) {
	tests := []struct {
		name          string
		tokens        []string
		wantErr       bool
		wantRefreshes int
	}{
		{name: "valid token", tokens: []string{freshToken}},
		{name: "535 once, refreshed", tokens: []string{staleToken, freshToken}, wantRefreshes: 1},
		{name: "535 twice", tokens: []string{staleToken, "revoked-access-token"}, wantErr: true, wantRefreshes: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := smtpsink.Start(t, smtpsink.WithXOAUTH2(func(user, token string) bool { return user == mailbox && validFresh(token) }))
			ts := oauthdrivertest.NewTokens(tc.tokens...)
			set := apiSettings(nil, core.Settings{
				oauthdriver.KeyDeliveryMode: oauthdriver.ModeSMTP,
				outlook.KeyFromEmail:        mailbox,
				outlook.KeyFromName:         "Box",
				oauthdriver.KeySMTPHost:     sink.Host(),
				oauthdriver.KeySMTPPort:     int64(sink.Port()),
			})
			tr := newTransport(t, set, ts)
			_, err := tr.Send(context.Background(), drivertest.FullMessage())
			if ts.Refreshes() != tc.wantRefreshes {
				t.Errorf("refreshes = %d, want %d", ts.Refreshes(), tc.wantRefreshes)
			}
			if tc.wantErr {
				oauthdrivertest.CheckRefused(t, err, tc.tokens...)
				return
			}
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := sink.AwaitOne(t)
			if got.Username != mailbox || got.From != mailbox {
				t.Errorf("authenticated as %q, MAIL FROM %q, want %q", got.Username, got.From, mailbox)
			}
			if !strings.Contains(string(got.Data), `From: "Box" <box@contoso.test>`) {
				t.Errorf("From header is not the mailbox:\n%.400s", got.Data)
			}
			if !bytes.Contains(got.Data, []byte("invoice.pdf")) {
				t.Error("attachment missing")
			}
			if err := tr.(core.Verifier).Verify(context.Background()); err != nil {
				t.Errorf("Verify: %v", err)
			}
		})
	}
}

func TestSchema(t *testing.T) {
	d, ok := core.LookupDriver(outlook.Slug)
	if !ok {
		t.Fatal("outlook is not registered")
	}
	drivertest.ValidateCases(t, d, []drivertest.SchemaCase{
		{Name: "api defaults", Settings: apiSettings(nil, nil)},
		{Name: "smtp with mailbox", Settings: apiSettings(nil, core.Settings{oauthdriver.KeyDeliveryMode: "smtp", outlook.KeyFromEmail: mailbox})},
		{Name: "smtp without mailbox", Settings: apiSettings(nil, core.Settings{oauthdriver.KeyDeliveryMode: "smtp"}), WantFields: []string{outlook.KeyFromEmail}},
		{Name: "unknown mode", Settings: apiSettings(nil, core.Settings{oauthdriver.KeyDeliveryMode: "pop"}), WantFields: []string{oauthdriver.KeyDeliveryMode}},
		{Name: "bad tenant", Settings: apiSettings(nil, core.Settings{outlook.KeyTenantID: "../evil"}), WantFields: []string{outlook.KeyTenantID}},
		{Name: "tenant of 255 characters", Settings: apiSettings(nil, core.Settings{outlook.KeyTenantID: strings.Repeat("t", 255)}), WantFields: []string{outlook.KeyTenantID}},
		{Name: "smtp_host of 254 characters", Settings: apiSettings(nil, core.Settings{oauthdriver.KeySMTPHost: strings.Repeat("h", 254)}), WantFields: []string{oauthdriver.KeySMTPHost}},
		{Name: "smtp_host starting with a dot", Settings: apiSettings(nil, core.Settings{oauthdriver.KeySMTPHost: ".example.com"}), WantFields: []string{oauthdriver.KeySMTPHost}},
		{Name: "bad user_id", Settings: apiSettings(nil, core.Settings{outlook.KeyUserID: "a/../b"}), WantFields: []string{outlook.KeyUserID}},
		{Name: "bad smtp_host", Settings: apiSettings(nil, core.Settings{oauthdriver.KeySMTPHost: "smtp://x:25"}), WantFields: []string{oauthdriver.KeySMTPHost}},
		{Name: "bad from_email", Settings: apiSettings(nil, core.Settings{outlook.KeyFromEmail: "nope"}), WantFields: []string{outlook.KeyFromEmail}},
		{Name: "bad base_url", Settings: apiSettings(nil, core.Settings{outlook.KeyBaseURL: "ftp://graph"}), WantFields: []string{outlook.KeyBaseURL}},
		{Name: "missing client", Settings: apiSettings(nil, core.Settings{oauthdriver.KeyClientID: ""}), WantFields: []string{oauthdriver.KeyClientID}},
		{Name: "unknown key", Settings: apiSettings(nil, core.Settings{"api_key": "x"}), WantFields: []string{"api_key"}},
	}, func(t *testing.T, s core.Settings) {
		if s.String(outlook.KeyTenantID) != "common" || s.String(oauthdriver.KeyDeliveryMode) == "" ||
			s.String(oauthdriver.KeySMTPHost) != outlook.DefaultSMTPHost || s.Int(oauthdriver.KeySMTPPort, 0) != 587 {
			t.Errorf("defaults not filled: %v", s)
		}
	})
	if d.OAuthProvider != core.ProviderMicrosoft {
		t.Errorf("OAuthProvider = %q", d.OAuthProvider)
	}
	for _, k := range []string{oauthdriver.KeyClientSecret, oauthdriver.KeyAccessToken, oauthdriver.KeyRefreshToken} {
		if f := d.Field(k); f == nil || !f.Sensitive {
			t.Errorf("field %s = %+v, want sensitive", k, f)
		}
	}
	// MAILSVC_OUTLOOK_TOKEN (and its legacy alias) pin the refresh token.
	if pins := core.PinConstants(outlook.Slug, oauthdriver.KeyRefreshToken); !slices.Contains(pins, "MAILSVC_OUTLOOK_TOKEN") || !slices.Contains(pins, "MAILSVC_MICROSOFT_TOKEN") {
		t.Errorf("refresh_token is pinned by %v, want MAILSVC_OUTLOOK_TOKEN and MAILSVC_MICROSOFT_TOKEN among them", pins)
	}
	tr, err := d.New(&core.Connection{Settings: apiSettings(nil, nil)}, core.DriverEnv{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if g, ok := tr.(*outlook.Graph); !ok || g.BaseURL() != outlook.DefaultBaseURL {
		t.Errorf("default transport = %T, want *outlook.Graph on %s", tr, outlook.DefaultBaseURL)
	}
	if _, err := d.New(&core.Connection{Settings: apiSettings(nil, core.Settings{oauthdriver.KeyDeliveryMode: "smtp"})}, core.DriverEnv{}); core.ErrorFields(err)[outlook.KeyFromEmail] == "" {
		t.Errorf("New in SMTP mode without from_email: %v, want a from_email error", err)
	}
}

// TestRecipientCapParts: a message over Graph's 500 recipients is refused
// by the fake; its parts at the driver's caps are accepted, every
// recipient once.
func TestRecipientCapParts(t *testing.T) {
	fake := startGraph(t)
	tr := newTransport(t, apiSettings(fake, nil), oauthdrivertest.NewTokens(freshToken))
	parts := drivertest.SendInParts(t, outlook.Slug, tr, 1200)
	drivertest.CheckParts(t, parts, drivertest.Recorded(fake.Messages()), 3, 1200)
}

// TestEmbedsThroughGraph sends an HTML message with two inline images
// (WordPress's $embeds) and an attachment: each image is a Graph file
// attachment with isInline and its contentId, bytes intact; the PDF is
// not inline.
func TestEmbedsThroughGraph(t *testing.T) {
	fake := startGraph(t)
	msg := drivertest.EmbedsMessage()
	_, m := drivertest.SendRecorded(t, newTransport(t, apiSettings(fake, nil), oauthdrivertest.NewTokens(freshToken)), msg, fake.Messages, 1)
	if m.HTML != msg.HTML {
		t.Errorf("html = %q, want %q", m.HTML, msg.HTML)
	}
	rec := make([]drivertest.Attachment, 0, len(m.Attachments))
	for _, a := range m.Attachments {
		rec = append(rec, a.Attachment)
	}
	drivertest.Harness{}.CheckMessage(t, drivertest.Message{To: msg.To, Subject: msg.Subject, HTML: msg.HTML, Attachments: rec}, msg)
}
