package zoho_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver/oauthdrivertest"
	"github.com/mailsvc/mailsvc/drivers/zoho"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
	"github.com/mailsvc/mailsvc/test/fakes/zohomailfake"
)

const goodToken = "1000.good.access"

var accounts = []zohomailfake.Account{
	{ID: "1000000000000000001", Email: "owner@example.com", DisplayName: "Owner"},
	{ID: "2000000000000000002", Email: "shop@example.com", Aliases: []string{"sales@example.com"}, DisplayName: "Shop"},
}

// newFake returns a Zoho Mail fake that accepts goodToken and knows the
// accounts; startFake starts one that is closed when t ends.
func newFake() *zohomailfake.Server {
	return zohomailfake.New(func(t string) bool { return t == goodToken }, accounts...)
}

func startFake(t *testing.T) *zohomailfake.Server {
	f := newFake()
	t.Cleanup(f.Close)
	return f
}

func settingsFor(url string) core.Settings {
	return core.Settings{"client_id": "cid", "client_secret": "cs", "from_email": "shop@example.com", "base_url": url}
}

func newTransport(t *testing.T, settings core.Settings, src core.TokenSource) *zoho.Transport {
	t.Helper()
	return drivertest.NewTransportEnv(t, zoho.Slug, settings, core.DriverEnv{Tokens: src}).(*zoho.Transport)
}

func TestSendFullMessage(t *testing.T) {
	fake := startFake(t)
	named := settingsFor(fake.URL + "/")
	named["from_email"], named["from_name"] = "sales@example.com", "Sales, Inc."
	tests := []struct {
		name     string
		settings core.Settings
		wantFrom zohomailfake.Address
	}{
		{"mailbox address, message's name", settingsFor(fake.URL), zohomailfake.Address{Name: "Shop", Email: "shop@example.com"}},
		{"alias with from_name", named, zohomailfake.Address{Name: "Sales, Inc.", Email: "sales@example.com"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := drivertest.FullMessage()
			msg.To = append(msg.To, core.Address{Name: "Dörte \"D\" Ünal", Email: "doerte@example.org"})
			tr := newTransport(t, tc.settings, oauthdrivertest.NewTokens(goodToken))
			rc, m := drivertest.SendRecorded(t, tr, msg, fake.Messages, i+1)
			if rc.MessageID == "" || rc.MessageID != m.ID {
				t.Errorf("receipt %q, fake id %q", rc.MessageID, m.ID)
			}
			if m.AccountID != "2000000000000000002" || tr.AccountID() != m.AccountID {
				t.Errorf("sent from account %q (transport %q), want the account of from_email", m.AccountID, tr.AccountID())
			}
			if m.From != tc.wantFrom {
				t.Errorf("from = %+v, want %+v", m.From, tc.wantFrom)
			}
			rec := drivertest.Recorded([]zohomailfake.Message{m})[0]
			drivertest.CheckAddresses(t, "to", rec.To, msg.To)
			drivertest.CheckAddresses(t, "cc", rec.Cc, msg.Cc)
			drivertest.CheckAddresses(t, "bcc", rec.Bcc, msg.Bcc)
			if m.Subject != msg.Subject || m.MailFormat != "html" || m.AskReceipt != "no" || m.Text != "" {
				t.Errorf("subject %q format %q askReceipt %q text %q", m.Subject, m.MailFormat, m.AskReceipt, m.Text)
			}
			if len(m.Attachments) != 2 {
				t.Fatalf("got %d attachments, want 2", len(m.Attachments))
			}
			pdf, png := m.Attachments[0], m.Attachments[1]
			if pdf.Filename != "invoice.pdf" || pdf.ContentType != "application/pdf" || pdf.Inline || !bytes.Equal(pdf.Data, drivertest.PDFBytes()) {
				t.Errorf("pdf = %s %s inline=%v (%d bytes)", pdf.Filename, pdf.ContentType, pdf.Inline, len(pdf.Data))
			}
			if png.Filename != "logo.png" || png.ContentType != "image/png" || !png.Inline || !bytes.Equal(png.Data, drivertest.PNGBytes()) {
				t.Errorf("png = %s %s inline=%v (%d bytes)", png.Filename, png.ContentType, png.Inline, len(png.Data))
			}
			wantHTML := strings.Replace(msg.HTML, "cid:logo1", png.URL, 1)
			if png.URL == "" || m.HTML != wantHTML {
				t.Errorf("html = %q, want %q", m.HTML, wantHTML)
			}
		})
	}
	if n := fake.AccountRequests(); n != 2 {
		t.Errorf("account lookups = %d, want one per transport", n)
	}
}

func TestPlainTextAndCachedAccount(t *testing.T) {
	fake := startFake(t)
	tr := newTransport(t, settingsFor(fake.URL), oauthdrivertest.NewTokens(goodToken))
	msg := &core.Message{From: core.Address{Email: "x@example.com"}, To: []core.Address{{Email: "a@example.org"}},
		Subject: "plain ✓", Text: "just text\nline 2", Headers: []core.Header{{Name: "X-Dropped", Value: "1"}},
		ReplyTo: []core.Address{{Email: "r@example.org"}}}
	for range 3 {
		if _, err := tr.Send(context.Background(), msg); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	m := fake.Messages()[2]
	if m.MailFormat != "plaintext" || m.Text != msg.Text || m.HTML != "" || m.From.Email != "shop@example.com" || m.Subject != msg.Subject {
		t.Errorf("recorded %+v", m)
	}
	if fake.AccountRequests() != 1 || fake.Uploads() != 0 {
		t.Errorf("account lookups %d (want 1: cached), uploads %d", fake.AccountRequests(), fake.Uploads())
	}
}

func TestStoredAccountIDSkipsLookup(t *testing.T) {
	fake := startFake(t)
	s := settingsFor(fake.URL)
	s["account_id"] = "1000000000000000001"
	s["from_email"] = "owner@example.com"
	if _, err := newTransport(t, s, oauthdrivertest.NewTokens(goodToken)).Send(context.Background(), drivertest.FullMessage()); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if fake.AccountRequests() != 0 || fake.Messages()[0].AccountID != "1000000000000000001" {
		t.Errorf("lookups %d, account %q", fake.AccountRequests(), fake.Messages()[0].AccountID)
	}
}

func TestAuthorizedLooksUpAccount(t *testing.T) {
	d, _ := core.LookupDriver(zoho.Slug)
	if d.Authorized == nil || d.OAuthProvider != core.ProviderZoho {
		t.Fatalf("driver has no Authorized hook or provider %q", d.OAuthProvider)
	}
	tests := []struct {
		name     string
		accounts []zohomailfake.Account
		from     string
		token    string
		want     string
		wantErr  bool
	}{
		{"primary address", accounts, "shop@example.com", goodToken, "2000000000000000002", false},
		{"alias, any case", accounts, "Sales@Example.com", goodToken, "2000000000000000002", false},
		{"no match: the first account", accounts, "nobody@example.net", goodToken, "1000000000000000001", false},
		{"no accounts", nil, "shop@example.com", goodToken, "", true},
		{"refused token", accounts, "shop@example.com", "1000.bad", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := zohomailfake.New(func(t string) bool { return t == goodToken }, tc.accounts...)
			defer fake.Close()
			conn := &core.Connection{ID: 3, Driver: zoho.Slug, Settings: core.Settings{"from_email": tc.from, "base_url": fake.URL}}
			got, err := d.Authorized(context.Background(), conn, tc.token, core.DriverEnv{})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), tc.token) {
					t.Errorf("error shows the token: %v", err)
				}
				return
			}
			if len(got) != 1 || got.String("account_id") != tc.want {
				t.Errorf("settings = %v, want account_id %s", got, tc.want)
			}
		})
	}
}

func TestDataCenterHosts(t *testing.T) {
	tests := []struct {
		dc, baseURL  string
		wantMail     string
		wantAccounts string
	}{
		{"", "", "https://mail.zoho.com", "https://accounts.zoho.com"},
		{"com", "", "https://mail.zoho.com", "https://accounts.zoho.com"},
		{"eu", "", "https://mail.zoho.eu", "https://accounts.zoho.eu"},
		{"in", "", "https://mail.zoho.in", "https://accounts.zoho.in"},
		{"com.au", "", "https://mail.zoho.com.au", "https://accounts.zoho.com.au"},
		{"jp", "", "https://mail.zoho.jp", "https://accounts.zoho.jp"},
		{"ca", "", "https://mail.zohocloud.ca", "https://accounts.zohocloud.ca"},
		{"sa", "", "https://mail.zoho.sa", "https://accounts.zoho.sa"},
		{"eu", "http://127.0.0.1:9/", "http://127.0.0.1:9", "https://accounts.zoho.eu"},
	}
	for _, tc := range tests {
		t.Run(tc.dc+tc.baseURL, func(t *testing.T) {
			s := core.Settings{"from_email": "a@example.com", "data_center": tc.dc, "base_url": tc.baseURL}
			if got := newTransport(t, s, nil).BaseURL(); got != tc.wantMail {
				t.Errorf("BaseURL = %q, want %q", got, tc.wantMail)
			}
			if got := zoho.AccountsURL(tc.dc); got != tc.wantAccounts {
				t.Errorf("AccountsURL = %q, want %q", got, tc.wantAccounts)
			}
		})
	}
	if len(zoho.DataCenters()) != 7 {
		t.Errorf("DataCenters = %v", zoho.DataCenters())
	}
}

func TestTokenRefusedRefreshesOnce(t *testing.T) {
	tests := []struct {
		name          string
		src           *oauthdrivertest.Tokens
		wantErr       bool
		wantRefreshes int
	}{
		{"401 then refreshed token accepted", oauthdrivertest.NewTokens("1000.expired", goodToken), false, 1},
		{"401 twice is permanent", oauthdrivertest.NewTokens("1000.expired", "1000.also-bad", goodToken), true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := startFake(t)
			_, err := newTransport(t, settingsFor(fake.URL), tc.src).Send(context.Background(), drivertest.FullMessage())
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil && (core.IsTemporary(err) || !strings.Contains(err.Error(), "INVALID_OAUTHTOKEN") ||
				strings.Contains(err.Error(), "1000.")) {
				t.Errorf("err = %v, want a permanent INVALID_OAUTHTOKEN error without the token", err)
			}
			toks := fake.Tokens()
			if tc.src.Refreshes() != tc.wantRefreshes || len(toks) < 2 || toks[0] != "1000.expired" {
				t.Errorf("tokens %v, refreshes %d", toks, tc.src.Refreshes())
			}
			if n := len(fake.Messages()); (n == 1) == tc.wantErr {
				t.Errorf("recorded %d messages", n)
			}
		})
	}
}

func TestErrorsClassified(t *testing.T) {
	type fake = *zohomailfake.Server
	oauthdrivertest.SendErrors(t, startFake, []oauthdrivertest.ErrorCase[fake]{
		{Name: "400 invalid data", Fail: func(f fake) { f.FailNext(1, 400) }},
		{Name: "403", Fail: func(f fake) { f.FailNext(1, 403) }},
		{Name: "404", Fail: func(f fake) { f.FailNext(1, 404) }},
		{Name: "429", Fail: func(f fake) { f.FailNext(1, 429) }, WantTemporary: true},
		{Name: "500", Fail: func(f fake) { f.FailNext(1, 500) }, WantTemporary: true},
		{Name: "503", Fail: func(f fake) { f.FailNext(1, 503) }, WantTemporary: true},
		{Name: "error status inside HTTP 200", Fail: func(f fake) {
			f.FailNextWith(1, func(w http.ResponseWriter, _ *http.Request) {
				faults.WriteJSON(w, 200, zohomailfake.ErrorBody(500, "INTERNAL_SERVER_ERROR", ""))
			})
		}, WantTemporary: true},
		{Name: "stalled server", Fail: func(f fake) { f.StallNext(1) }, Stall: true, WantTemporary: true},
	}, func(ctx context.Context, t *testing.T, f fake, src *oauthdrivertest.Tokens) error {
		_, err := newTransport(t, settingsFor(f.URL), src).Send(ctx, drivertest.FullMessage())
		return err
	}, func(f fake) int { return len(f.Messages()) }, goodToken, "1000.other")
	t.Run("network error", func(t *testing.T) {
		fake := newFake()
		url := fake.URL
		fake.Close()
		_, err := newTransport(t, settingsFor(url), oauthdrivertest.NewTokens(goodToken)).Send(context.Background(), drivertest.FullMessage())
		if err == nil || !core.IsTemporary(err) {
			t.Fatalf("err = %v, want temporary", err)
		}
	})
}

func TestVerify(t *testing.T) {
	tests := []struct {
		name          string
		src           *oauthdrivertest.Tokens
		status        int
		wantErr       bool
		wantTemporary bool
		wantRequests  int
	}{
		{name: "accounts read", src: oauthdrivertest.NewTokens(goodToken), wantRequests: 1},
		{name: "refused, refreshed", src: oauthdrivertest.NewTokens("1000.bad", goodToken), wantRequests: 2},
		{name: "refused twice", src: oauthdrivertest.NewTokens("1000.bad", "1000.worse"), wantErr: true, wantRequests: 2},
		{name: "server error", src: oauthdrivertest.NewTokens(goodToken), status: 500, wantErr: true, wantTemporary: true, wantRequests: 1},
		{name: "forbidden", src: oauthdrivertest.NewTokens(goodToken), status: 403, wantErr: true, wantRequests: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := startFake(t)
			if tc.status != 0 {
				fake.FailNext(1, tc.status)
			}
			err := newTransport(t, settingsFor(fake.URL), tc.src).Verify(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil && core.IsTemporary(err) != tc.wantTemporary {
				t.Errorf("IsTemporary = %v (%v)", core.IsTemporary(err), err)
			}
			if fake.Requests() != tc.wantRequests || len(fake.Messages()) != 0 || fake.Uploads() != 0 {
				t.Errorf("requests %d (want %d), messages %d", fake.Requests(), tc.wantRequests, len(fake.Messages()))
			}
		})
	}
}

func TestSchema(t *testing.T) {
	d, _ := core.LookupDriver(zoho.Slug)
	with := func(kv ...any) core.Settings {
		return drivertest.SettingsWith(core.Settings{"client_id": "cid", "client_secret": "cs", "from_email": "me@example.com"}, kv...)
	}
	drivertest.ValidateCases(t, d, []drivertest.SchemaCase{
		{Name: "valid", Settings: with()},
		{Name: "valid eu with account", Settings: with("data_center", "eu", "account_id", "123", "from_name", "Me")},
		{Name: "missing from_email", Settings: with("from_email", nil), WantFields: []string{"from_email"}},
		{Name: "bad from_email", Settings: with("from_email", "Me <me@example.com>"), WantFields: []string{"from_email"}},
		{Name: "unknown data centre", Settings: with("data_center", "us"), WantFields: []string{"data_center"}},
		{Name: "missing client secret", Settings: with("client_secret", ""), WantFields: []string{"client_secret"}},
		{Name: "bad base_url", Settings: with("base_url", "mail.zoho.com"), WantFields: []string{"base_url"}},
		{Name: "smtp mode is not a zoho setting", Settings: with("delivery_mode", "smtp"), WantFields: []string{"delivery_mode"}},
	}, func(t *testing.T, s core.Settings) {
		if s.String("data_center") == "" {
			t.Errorf("data_center not defaulted: %v", s)
		}
	})
	for _, key := range []string{"client_secret", "access_token", "refresh_token"} {
		if f := d.Field(key); f == nil || !f.Sensitive {
			t.Errorf("%s must be sensitive: %+v", key, f)
		}
	}
	if f := d.Field("account_id"); f == nil || f.Sensitive {
		t.Errorf("account_id = %+v, want a plain field", f)
	}
	if _, err := d.New(&core.Connection{Settings: core.Settings{}}, core.DriverEnv{}); core.ErrorFields(err)["from_email"] == "" {
		t.Errorf("New without from_email: %v", err)
	}
}

// TestRecipientCapParts: a message over Zoho's 100 recipients is refused
// by the fake; its parts at the driver's caps are accepted, every
// recipient once.
func TestRecipientCapParts(t *testing.T) {
	fake := startFake(t)
	tr := newTransport(t, settingsFor(fake.URL), oauthdrivertest.NewTokens(goodToken))
	parts := drivertest.SendInParts(t, zoho.Slug, tr, 250)
	drivertest.CheckParts(t, parts, drivertest.Recorded(fake.Messages()), 3, 250)
}

// TestEmbeds sends an HTML message with two inline images (WordPress's
// $embeds) and an attachment. Zoho Mail has no Content-ID: each image is
// uploaded inline, bytes intact, and the HTML's cid: reference to it
// becomes the upload's URL.
func TestEmbeds(t *testing.T) {
	fake := startFake(t)
	msg := drivertest.EmbedsMessage()
	_, m := drivertest.SendRecorded(t, newTransport(t, settingsFor(fake.URL), oauthdrivertest.NewTokens(goodToken)), msg, fake.Messages, 1)
	if len(m.Attachments) != 3 {
		t.Fatalf("got %d attachments, want 3", len(m.Attachments))
	}
	html := msg.HTML
	for i, want := range msg.Attachments {
		a := m.Attachments[i]
		if a.Filename != want.Filename || a.ContentType != want.ContentType || a.Inline != want.Inline || !bytes.Equal(a.Data, want.Data) {
			t.Errorf("attachment %d = %s %s inline=%v (%d bytes), want %s %s inline=%v (%d bytes)", i, a.Filename, a.ContentType, a.Inline, len(a.Data), want.Filename, want.ContentType, want.Inline, len(want.Data))
		}
		if want.Inline {
			if a.URL == "" {
				t.Errorf("inline %s has no URL", a.Filename)
			}
			html = strings.Replace(html, "cid:"+want.ContentID, a.URL, 1)
		}
	}
	if m.HTML != html {
		t.Errorf("html = %q, want %q", m.HTML, html)
	}
}

// TestEmbedsNumberedContentIDs sends eleven inline images numbered as
// WordPress numbers a list's embeds, "0" to "10": each reference becomes
// its own image's URL, "cid:1" leaving "cid:10" and "cid:1x" alone.
func TestEmbedsNumberedContentIDs(t *testing.T) {
	fake := startFake(t)
	msg := drivertest.EmbedsMessage()
	msg.Attachments = nil
	var html strings.Builder
	for i := range 11 {
		id := strconv.Itoa(i)
		msg.Attachments = append(msg.Attachments, core.Attachment{Filename: "img" + id + ".png", ContentType: "image/png", Data: []byte("png " + id), Inline: true, ContentID: id})
		html.WriteString(`<img src="cid:` + id + `">`)
	}
	html.WriteString(`<a href="cid:1x">not an image</a><div style="background:url(cid:2)"></div>`)
	msg.HTML = html.String()
	_, m := drivertest.SendRecorded(t, newTransport(t, settingsFor(fake.URL), oauthdrivertest.NewTokens(goodToken)), msg, fake.Messages, 1)
	if len(m.Attachments) != 11 {
		t.Fatalf("got %d attachments, want 11", len(m.Attachments))
	}
	var want strings.Builder
	for _, a := range m.Attachments {
		want.WriteString(`<img src="` + a.URL + `">`)
	}
	want.WriteString(`<a href="cid:1x">not an image</a><div style="background:url(` + m.Attachments[2].URL + `)"></div>`)
	if m.HTML != want.String() {
		t.Errorf("html = %q\nwant %q", m.HTML, want.String())
	}
}
