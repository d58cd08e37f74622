package mailgun_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/mailgun"
	"github.com/mailsvc/mailsvc/test/fakes/mailgunfake"
)

const (
	testKey    = "key-0123456789abcdef0123456789abcdef"
	testDomain = "mg.example.com"
)

// binary payloads with every byte value, NULs and invalid UTF-8.
func pdfBytes() []byte {
	b := []byte("%PDF-1.4\x00\xff\xfe")
	for i := range 256 {
		b = append(b, byte(i))
	}
	return b
}

func pngBytes() []byte {
	b := []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d}
	for i := 255; i >= 0; i-- {
		b = append(b, byte(i), 0)
	}
	return b
}

func fullMessage() *core.Message {
	return &core.Message{
		From:    core.Address{Name: "Shop", Email: "shop@example.com"},
		To:      []core.Address{{Name: "Ann", Email: "ann@example.org"}, {Email: "bob@example.org"}},
		Cc:      []core.Address{{Name: "Cid", Email: "cid@example.org"}},
		Bcc:     []core.Address{{Email: "dan@example.org"}},
		ReplyTo: []core.Address{{Name: "Help", Email: "help@example.com"}},
		Subject: "Order #42 — ünïcode",
		Text:    "Plain body\nline 2",
		HTML:    "<p>HTML body <img src=\"cid:logo1\"></p>",
		Headers: []core.Header{{Name: "X-Order", Value: "42"}, {Name: "List-Unsubscribe", Value: "<mailto:u@example.com>"}},
		Attachments: []core.Attachment{
			{Filename: "invoice.pdf", ContentType: "application/pdf", Data: pdfBytes()},
			{Filename: "logo.png", ContentType: "image/png", Data: pngBytes(), Inline: true, ContentID: "logo1.png"},
		},
	}
}

func newTransport(t *testing.T, settings core.Settings) core.Transport {
	t.Helper()
	d, ok := core.LookupDriver(mailgun.Slug)
	if !ok {
		t.Fatal("driver mailgun is not registered")
	}
	tr, err := d.New(&core.Connection{ID: 1, Driver: mailgun.Slug, Settings: settings}, core.DriverEnv{HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tr
}

func TestSendRoundTrip(t *testing.T) {
	fake := mailgunfake.New(testKey, testDomain)
	defer fake.Close()
	tests := []struct {
		name     string
		settings core.Settings
		wantFrom mailgunfake.Address
	}{
		{"message sender", core.Settings{"api_key": testKey, "domain": testDomain, "base_url": fake.URL},
			mailgunfake.Address{Name: "Shop", Email: "shop@example.com"}},
		{"connection sender overrides", core.Settings{"api_key": testKey, "domain": testDomain, "base_url": fake.URL + "/",
			"from_email": "noreply@example.net", "from_name": "Example Net"},
			mailgunfake.Address{Name: "Example Net", Email: "noreply@example.net"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := fullMessage()
			rc, err := newTransport(t, tc.settings).Send(context.Background(), msg)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := fake.Messages()
			if len(got) != i+1 {
				t.Fatalf("fake recorded %d messages, want %d", len(got), i+1)
			}
			m := got[i]
			if !strings.HasPrefix(m.ID, "<") || !strings.HasSuffix(m.ID, "@"+testDomain+">") {
				t.Errorf("fake id %q is not shaped like Mailgun's", m.ID)
			}
			if rc.MessageID == "" || "<"+rc.MessageID+">" != m.ID {
				t.Errorf("receipt id %q, fake id %q", rc.MessageID, m.ID)
			}
			if m.From != tc.wantFrom {
				t.Errorf("from = %+v, want %+v", m.From, tc.wantFrom)
			}
			checkAddrs(t, "to", m.To, msg.To)
			checkAddrs(t, "cc", m.Cc, msg.Cc)
			checkAddrs(t, "bcc", m.Bcc, msg.Bcc)
			checkAddrs(t, "reply-to", m.ReplyTo, msg.ReplyTo)
			if m.Subject != msg.Subject || m.Text != msg.Text || m.HTML != msg.HTML {
				t.Errorf("subject/text/html = %q/%q/%q", m.Subject, m.Text, m.HTML)
			}
			for _, h := range msg.Headers {
				if m.Headers[h.Name] != h.Value {
					t.Errorf("header %s = %q, want %q", h.Name, m.Headers[h.Name], h.Value)
				}
			}
			if len(m.Attachments) != len(msg.Attachments) {
				t.Fatalf("got %d attachments, want %d", len(m.Attachments), len(msg.Attachments))
			}
			for j, want := range msg.Attachments {
				a := m.Attachments[j]
				wantName := want.Filename
				if want.Inline {
					wantName = want.ContentID // Mailgun names inline parts by their content id
				}
				if a.Filename != wantName || a.ContentType != want.ContentType || a.Inline != want.Inline || a.ContentID != want.ContentID {
					t.Errorf("attachment %d = %s %s inline=%v cid=%s, want %s %s inline=%v cid=%s", j, a.Filename, a.ContentType, a.Inline, a.ContentID, wantName, want.ContentType, want.Inline, want.ContentID)
				}
				if !bytes.Equal(a.Data, want.Data) {
					t.Errorf("attachment %d bytes differ (%d vs %d bytes)", j, len(a.Data), len(want.Data))
				}
			}
		})
	}
}

func TestSendMultipleReplyTo(t *testing.T) {
	fake := mailgunfake.New(testKey, testDomain)
	defer fake.Close()
	msg := fullMessage()
	msg.ReplyTo = []core.Address{{Email: "a@example.com"}, {Name: "B", Email: "b@example.com"}}
	if _, err := newTransport(t, core.Settings{"api_key": testKey, "domain": testDomain, "base_url": fake.URL}).Send(context.Background(), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	checkAddrs(t, "reply-to", fake.Messages()[0].ReplyTo, msg.ReplyTo)
}

func checkAddrs(t *testing.T, what string, got []mailgunfake.Address, want []core.Address) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d addresses %+v, want %d", what, len(got), got, len(want))
		return
	}
	for i := range want {
		if got[i].Email != want[i].Email || got[i].Name != want[i].Name {
			t.Errorf("%s[%d] = %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

func TestSendErrorsClassified(t *testing.T) {
	tests := []struct {
		name          string
		key           string
		status        int
		stall         bool
		wantTemporary bool
	}{
		{name: "wrong key gives 401", key: "key-wrong-zzz", wantTemporary: false},
		{name: "400 validation", key: testKey, status: 400, wantTemporary: false},
		{name: "403 sender identity", key: testKey, status: 403, wantTemporary: false},
		{name: "429 rate limit", key: testKey, status: 429, wantTemporary: true},
		{name: "500", key: testKey, status: 500, wantTemporary: true},
		{name: "503", key: testKey, status: 503, wantTemporary: true},
		{name: "stalled server", key: testKey, stall: true, wantTemporary: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := mailgunfake.New(testKey, testDomain)
			defer fake.Close()
			if tc.status != 0 {
				fake.FailNext(1, tc.status, "")
			}
			ctx := context.Background()
			if tc.stall {
				fake.StallNext(1)
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
			}
			_, err := newTransport(t, core.Settings{"api_key": tc.key, "domain": testDomain, "base_url": fake.URL}).Send(ctx, fullMessage())
			if err == nil {
				t.Fatal("Send succeeded, want an error")
			}
			var de *core.DeliveryError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not classified", err)
			}
			if core.IsTemporary(err) != tc.wantTemporary {
				t.Errorf("IsTemporary = %v, want %v (%v)", core.IsTemporary(err), tc.wantTemporary, err)
			}
			if strings.Contains(err.Error(), tc.key) {
				t.Errorf("error shows the API key: %v", err)
			}
			if tc.stall && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("stalled send error %v is not a deadline error", err)
			}
			if n := len(fake.Messages()); n != 0 {
				t.Errorf("fake recorded %d messages after a failure", n)
			}
		})
	}
}

func TestSendRecoversAfterFailures(t *testing.T) {
	fake := mailgunfake.New(testKey, testDomain)
	defer fake.Close()
	fake.FailNext(2, 503, "")
	tr := newTransport(t, core.Settings{"api_key": testKey, "domain": testDomain, "base_url": fake.URL})
	for i := range 2 {
		if _, err := tr.Send(context.Background(), fullMessage()); !core.IsTemporary(err) {
			t.Fatalf("attempt %d: err = %v, want temporary", i, err)
		}
	}
	rc, err := tr.Send(context.Background(), fullMessage())
	if err != nil || rc.MessageID == "" {
		t.Fatalf("third attempt: receipt %+v, err %v", rc, err)
	}
}

func TestNetworkErrorIsTemporary(t *testing.T) {
	fake := mailgunfake.New(testKey, testDomain)
	url := fake.URL
	fake.Close()
	_, err := newTransport(t, core.Settings{"api_key": testKey, "domain": testDomain, "base_url": url}).Send(context.Background(), fullMessage())
	if err == nil || !core.IsTemporary(err) {
		t.Fatalf("err = %v, want temporary", err)
	}
}

func TestVerify(t *testing.T) {
	tests := []struct {
		name          string
		key           string
		status        int
		wantErr       bool
		wantTemporary bool
	}{
		{name: "valid key", key: testKey},
		{name: "bad key", key: "key-bad-yyy", wantErr: true},
		{name: "forbidden", key: testKey, status: 403, wantErr: true},
		{name: "server error", key: testKey, status: 500, wantErr: true, wantTemporary: true},
		{name: "rate limited", key: testKey, status: 429, wantErr: true, wantTemporary: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := mailgunfake.New(testKey, testDomain)
			defer fake.Close()
			if tc.status != 0 {
				fake.FailNext(1, tc.status, "")
			}
			v, ok := newTransport(t, core.Settings{"api_key": tc.key, "domain": testDomain, "base_url": fake.URL}).(core.Verifier)
			if !ok {
				t.Fatal("transport does not implement core.Verifier")
			}
			err := v.Verify(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("Verify err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				if core.IsTemporary(err) != tc.wantTemporary {
					t.Errorf("IsTemporary = %v, want %v (%v)", core.IsTemporary(err), tc.wantTemporary, err)
				}
				if strings.Contains(err.Error(), tc.key) {
					t.Errorf("error shows the API key: %v", err)
				}
			}
			if fake.Requests() != 1 || len(fake.Messages()) != 0 {
				t.Errorf("verify made %d requests and sent %d messages", fake.Requests(), len(fake.Messages()))
			}
		})
	}
}

func TestSchema(t *testing.T) {
	d, _ := core.LookupDriver(mailgun.Slug)
	tests := []struct {
		name       string
		settings   core.Settings
		wantFields []string
	}{
		{"valid us", core.Settings{"api_key": "k", "domain": "mg.example.com", "region": "us", "from_email": "a@example.com"}, nil},
		{"valid eu", core.Settings{"api_key": "k", "domain": "mg.example.com", "region": "eu"}, nil},
		{"region defaults", core.Settings{"api_key": "k", "domain": "example.com"}, nil},
		{"missing api_key", core.Settings{"domain": "mg.example.com"}, []string{"api_key"}},
		{"missing domain", core.Settings{"api_key": "k"}, []string{"domain"}},
		{"missing both", core.Settings{}, []string{"api_key", "domain"}},
		{"bad region", core.Settings{"api_key": "k", "domain": "mg.example.com", "region": "asia"}, []string{"region"}},
		{"domain with scheme", core.Settings{"api_key": "k", "domain": "https://mg.example.com"}, []string{"domain"}},
		{"domain is an address", core.Settings{"api_key": "k", "domain": "me@example.com"}, []string{"domain"}},
		{"bad from_email", core.Settings{"api_key": "k", "domain": "mg.example.com", "from_email": "nope"}, []string{"from_email"}},
		{"bad base_url", core.Settings{"api_key": "k", "domain": "mg.example.com", "base_url": "api.mailgun.net"}, []string{"base_url"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := d.ValidateSettings(tc.settings)
			fields := core.ErrorFields(err)
			if len(fields) != len(tc.wantFields) {
				t.Fatalf("fields = %v, want %v", fields, tc.wantFields)
			}
			for _, f := range tc.wantFields {
				if fields[f] == "" {
					t.Errorf("no message for field %s in %v", f, fields)
				}
			}
			if len(tc.wantFields) > 0 && core.ErrorCode(err) != core.EINVALID {
				t.Errorf("code = %s, want %s", core.ErrorCode(err), core.EINVALID)
			}
			if err == nil && tc.settings.String("region") == "" {
				t.Errorf("region was not defaulted: %v", tc.settings)
			}
		})
	}
	if f := d.Field("api_key"); f == nil || !f.Sensitive || f.Constant != "MAILSVC_MAILGUN_API_KEY" {
		t.Errorf("api_key field = %+v, want sensitive with constant MAILSVC_MAILGUN_API_KEY", f)
	}
	presets := map[string]string{}
	for _, p := range d.Presets {
		presets[p.Slug] = p.Settings.String("region")
	}
	if presets["mailgun-us"] != "us" || presets["mailgun-eu"] != "eu" {
		t.Errorf("presets = %v, want mailgun-us → us and mailgun-eu → eu", presets)
	}
}

func TestBaseURLChoice(t *testing.T) {
	tests := []struct {
		name     string
		settings core.Settings
		want     string
	}{
		{"no region", core.Settings{}, "https://api.mailgun.net/v3"},
		{"us", core.Settings{"region": "us"}, "https://api.mailgun.net/v3"},
		{"eu", core.Settings{"region": "eu"}, "https://api.eu.mailgun.net/v3"},
		{"override wins over eu", core.Settings{"region": "eu", "base_url": "http://127.0.0.1:8080"}, "http://127.0.0.1:8080/v3"},
		{"override with v3 and slash", core.Settings{"base_url": "https://proxy.example.com/v3/"}, "https://proxy.example.com/v3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.settings["api_key"] = testKey
			tc.settings["domain"] = testDomain
			tr := newTransport(t, tc.settings).(*mailgun.Transport)
			if tr.BaseURL() != tc.want {
				t.Errorf("BaseURL = %q, want %q", tr.BaseURL(), tc.want)
			}
		})
	}
	for _, bad := range []core.Settings{{}, {"api_key": "k"}, {"api_key": "k", "domain": "x.example", "region": "mars"}} {
		if _, err := mailgun.New(&core.Connection{Settings: bad}, core.DriverEnv{}); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("New(%v): err = %v, want a validation error", bad, err)
		}
	}
}

func TestVerifyUnknownDomain(t *testing.T) {
	fake := mailgunfake.New(testKey, testDomain)
	defer fake.Close()
	tr := newTransport(t, core.Settings{"api_key": testKey, "domain": "other.example.com", "base_url": fake.URL})
	err := tr.(core.Verifier).Verify(context.Background())
	if err == nil || core.IsTemporary(err) || !strings.Contains(err.Error(), "other.example.com") {
		t.Fatalf("Verify = %v, want a permanent error naming the domain", err)
	}
}

func TestAttachmentWithoutExtensionGetsTypedName(t *testing.T) {
	fake := mailgunfake.New(testKey, testDomain)
	defer fake.Close()
	msg := fullMessage()
	msg.Attachments = []core.Attachment{{Filename: "report", ContentType: "application/pdf", Data: pdfBytes()}}
	if _, err := newTransport(t, core.Settings{"api_key": testKey, "domain": testDomain, "base_url": fake.URL}).Send(context.Background(), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	a := fake.Messages()[0].Attachments[0]
	if a.Filename != "report.pdf" || a.ContentType != "application/pdf" || !bytes.Equal(a.Data, pdfBytes()) {
		t.Errorf("attachment = %s %s (%d bytes), want report.pdf application/pdf", a.Filename, a.ContentType, len(a.Data))
	}
}

// countingTransport counts the requests that go through the host's client.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestUsesHostHTTPClient(t *testing.T) {
	fake := mailgunfake.New(testKey, testDomain)
	defer fake.Close()
	ct := &countingTransport{}
	d, _ := core.LookupDriver(mailgun.Slug)
	tr, err := d.New(&core.Connection{Settings: core.Settings{"api_key": testKey, "domain": testDomain, "base_url": fake.URL}}, core.DriverEnv{HTTPClient: &http.Client{Transport: ct}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := tr.Send(context.Background(), fullMessage()); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if err := tr.(core.Verifier).Verify(context.Background()); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got := ct.n.Load(); got != 2 {
		t.Errorf("host client saw %d requests, want 2", got)
	}
}
