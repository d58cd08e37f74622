package mailgun_test

import (
	"bytes"
	"context"
	"mime"
	"path"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/mailgun"
	"github.com/mailsvc/mailsvc/test/fakes/mailgunfake"
)

const (
	testKey    = "key-0123456789abcdef0123456789abcdef"
	testDomain = "mg.example.com"
)

// startFake starts the Mailgun fake as the conformance suite drives it.
func startFake() drivertest.Fake {
	f := mailgunfake.New(testKey, testDomain)
	return drivertest.NewFake(f, f.URL, f.Messages)
}

// fullMessage is the suite's message with the inline image's content id
// given as a file name: Mailgun names an inline part by its content id and
// types it by that name's extension.
func fullMessage() *core.Message {
	m := drivertest.FullMessage()
	m.Attachments[1].ContentID = "logo1.png"
	return m
}

// startMailgun starts a Mailgun fake of the test's key and domain, closed
// when t ends.
func startMailgun(t *testing.T) *mailgunfake.Server {
	f := mailgunfake.New(testKey, testDomain)
	t.Cleanup(f.Close)
	return f
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, drivertest.Harness{
		Slug:          mailgun.Slug,
		Key:           testKey,
		WrongKey:      "key-wrong-zzz",
		Start:         startFake,
		ExtraSettings: core.Settings{"domain": testDomain},
		Message:       fullMessage,
		CheckReceipt: func(t *testing.T, rc core.Receipt, m drivertest.Message) {
			if !strings.HasPrefix(m.ID, "<") || !strings.HasSuffix(m.ID, "@"+testDomain+">") {
				t.Errorf("fake id %q is not shaped like Mailgun's", m.ID)
			}
			if rc.MessageID == "" || "<"+rc.MessageID+">" != m.ID {
				t.Errorf("receipt id %q, fake id %q", rc.MessageID, m.ID)
			}
		},
		AttachmentName: func(a core.Attachment) string {
			if a.Inline {
				return a.ContentID // Mailgun names inline parts by their content id
			}
			return a.Filename
		},
		// Mailgun types a file by its name's extension: an inline part
		// whose content id has none (WordPress's "0", "logo") is
		// application/octet-stream.
		AttachmentType: func(a core.Attachment) string {
			if !a.Inline {
				return a.ContentType
			}
			if t, _, _ := strings.Cut(mime.TypeByExtension(path.Ext(a.ContentID)), ";"); t != "" {
				return t
			}
			return "application/octet-stream"
		},
		DefaultBaseURL: mailgun.BaseURLUS,
		APIKeyConstant: "MAILSVC_MAILGUN_API_KEY",
		UnknownKey:     "message_stream",
		Defaulted:      []string{"region"},
		SchemaCases: []drivertest.SchemaCase{
			{Name: "valid us", Settings: core.Settings{"api_key": "k", "domain": "mg.example.com", "region": "us", "from_email": "a@example.com"}},
			{Name: "valid eu", Settings: core.Settings{"api_key": "k", "domain": "mg.example.com", "region": "eu"}},
			{Name: "region defaults", Settings: core.Settings{"api_key": "k", "domain": "example.com"}},
			{Name: "missing domain", Settings: core.Settings{"api_key": "k"}, WantFields: []string{"domain"}},
			{Name: "missing both", Settings: core.Settings{}, WantFields: []string{"api_key", "domain"}},
			{Name: "bad region", Settings: core.Settings{"api_key": "k", "domain": "mg.example.com", "region": "asia"}, WantFields: []string{"region"}},
			{Name: "domain with scheme", Settings: core.Settings{"api_key": "k", "domain": "https://mg.example.com"}, WantFields: []string{"domain"}},
			{Name: "domain is an address", Settings: core.Settings{"api_key": "k", "domain": "me@example.com"}, WantFields: []string{"domain"}},
			{Name: "base_url without scheme", Settings: core.Settings{"api_key": "k", "domain": "mg.example.com", "base_url": "api.mailgun.net"}, WantFields: []string{"base_url"}},
		},
	})
}

func newTransport(t *testing.T, settings core.Settings) core.Transport {
	t.Helper()
	return drivertest.NewTransport(t, mailgun.Slug, settings)
}

func TestPresets(t *testing.T) {
	d, _ := core.LookupDriver(mailgun.Slug)
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
	fake := startMailgun(t)
	tr := newTransport(t, core.Settings{"api_key": testKey, "domain": "other.example.com", "base_url": fake.URL})
	err := tr.(core.Verifier).Verify(context.Background())
	if err == nil || core.IsTemporary(err) || !strings.Contains(err.Error(), "other.example.com") {
		t.Fatalf("Verify = %v, want a permanent error naming the domain", err)
	}
}

func TestAttachmentWithoutExtensionGetsTypedName(t *testing.T) {
	fake := startMailgun(t)
	msg := fullMessage()
	msg.Attachments = []core.Attachment{{Filename: "report", ContentType: "application/pdf", Data: drivertest.PDFBytes()}}
	if _, err := newTransport(t, core.Settings{"api_key": testKey, "domain": testDomain, "base_url": fake.URL}).Send(context.Background(), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	a := fake.Messages()[0].Attachments[0]
	if a.Filename != "report.pdf" || a.ContentType != "application/pdf" || !bytes.Equal(a.Data, drivertest.PDFBytes()) {
		t.Errorf("attachment = %s %s (%d bytes), want report.pdf application/pdf", a.Filename, a.ContentType, len(a.Data))
	}
}

// TestUncertainSendAndFind: a send whose answer is lost is uncertain,
// and Find (the Events API by Message-ID) tells whether Mailgun kept it.
func TestUncertainSendAndFind(t *testing.T) {
	tests := []struct {
		name          string
		inject        func(f *mailgunfake.Server)
		wantUncertain bool
		wantFound     bool
	}{
		{name: "taken, answer lost", inject: func(f *mailgunfake.Server) { f.TakeAndDropNext(1) }, wantUncertain: true, wantFound: true},
		{name: "no answer, not taken", inject: func(f *mailgunfake.Server) { f.StallNext(1) }, wantUncertain: true},
		{name: "accepted", inject: func(*mailgunfake.Server) {}, wantFound: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := startMailgun(t)
			tr := newTransport(t, core.Settings{"api_key": testKey, "domain": testDomain, "base_url": fake.URL})
			msg := drivertest.FullMessage().WithMessageID("<uncertain.1@example.com>")
			tc.inject(fake)
			rc, found := drivertest.SendThenFind(t, tr, msg, tc.wantUncertain)
			if found != tc.wantFound || (found && rc.MessageID != "uncertain.1@example.com") {
				t.Errorf("Find = %+v, %v; want found %v with the Message-ID", rc, found, tc.wantFound)
			}
			if fake.EventQueries() != 1 {
				t.Errorf("%d events queries, want 1", fake.EventQueries())
			}
		})
	}
	t.Run("lookup refused", func(t *testing.T) {
		fake := startMailgun(t)
		tr := newTransport(t, core.Settings{"api_key": testKey, "domain": testDomain, "base_url": fake.URL})
		fake.FailNext(1, 500, "")
		if _, found, err := tr.(core.Finder).Find(context.Background(), drivertest.FullMessage().WithMessageID("<x@example.com>")); err == nil || found {
			t.Errorf("Find = %v, %v; want an error", found, err)
		}
	})
}
