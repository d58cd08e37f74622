// Package drivertest is the conformance suite of the mail drivers that talk
// to a provider's HTTP API (sendgrid, mailgun, postmark, ...). A driver's
// test describes its local fake in a Harness and calls Run; the suite then
// checks what every such driver must do alike:
//
//   - Send: a full message (several recipients of every kind, unicode
//     subject, text and HTML, custom headers, a binary attachment and an
//     inline image) arrives at the provider intact, and so does an HTML
//     message with two inline images (WordPress's $embeds) and an
//     attachment, each image through the provider's inline field with its
//     Content-ID, with the receipt naming
//     the provider's message id, and the connection's from_email and
//     from_name replace the sender; several Reply-To addresses are kept;
//     provider failures are classified temporary (429, 5xx, stalls,
//     network errors) or permanent (401, 400, 403) with the key never in
//     the error text; a transport recovers once the provider does; a 429
//     is a rate limit that carries the provider's wait (for a fake that
//     is a RateLimiter); the key goes to base_url's host only; a message
//     over the driver's size cap fails for good without a call.
//   - Verify: credentials are checked with one request that sends nothing.
//   - Schema: the common settings (api key, sender override, base URL)
//     validate as the product promises, and a transport built with no
//     base_url talks to the real API.
//
// What a provider does differently (regions, streams, signatures) stays in
// that driver's own tests.
package drivertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
)

// Attachment is one attachment as a fake recorded it: the shape the
// provider fakes under test/fakes share.
type Attachment = fakeapi.Attachment

// Message is one message as a fake recorded it, in a form that does not
// depend on the provider.
type Message struct {
	ID          string
	From        core.Address
	To          []core.Address
	Cc          []core.Address
	Bcc         []core.Address
	ReplyTo     []core.Address
	Subject     string
	Text        string
	HTML        string
	Headers     map[string]string
	Attachments []Attachment
}

// Fake is a running local fake of a provider API, as the suite drives it.
type Fake interface {
	// URL is the base URL that reaches the fake.
	URL() string
	// Messages returns every message the fake accepted, oldest first.
	Messages() []Message
	// Requests returns how many requests reached the fake, faults included.
	Requests() int
	// FailNext makes the next n requests fail with the HTTP status, in the
	// provider's error shape.
	FailNext(n, status int)
	// StallNext makes the next n requests hang until the client gives up.
	StallNext(n int)
	// Close shuts the fake down.
	Close()
}

// Harness describes a driver and its fake to the suite.
type Harness struct {
	// Slug is the driver's registered name.
	Slug string
	// Key is the only API key the fake accepts; WrongKey is one it refuses
	// with 401.
	Key, WrongKey string
	// Start starts a fresh fake that accepts Key; RunJSONAPI sets it from
	// the constructor it is given.
	Start func() Fake
	// Settings returns connection settings that reach url with key. Nil:
	// {"api_key": key, "base_url": url}, with ExtraSettings added.
	Settings func(url, key string) core.Settings
	// ExtraSettings are added to every connection the default Settings
	// builds and to the schema cases (e.g. a required domain).
	ExtraSettings core.Settings
	// Message returns the message the send tests send. Nil: FullMessage.
	Message func() *core.Message
	// CheckReceipt checks that a receipt names the recorded message. Nil:
	// the receipt's MessageID is the recorded ID and is not empty.
	CheckReceipt func(t *testing.T, rc core.Receipt, m Message)
	// KeepsHeaders: the provider takes the recipients apart from the
	// message's headers (raw MIME with destinations), so a part of a
	// split message keeps the message's To and Cc headers; the driver's
	// own tests check its destinations instead of SendsToEnvelope.
	KeepsHeaders bool
	// AttachmentName returns the file name the fake records for a. Nil:
	// a.Filename.
	AttachmentName func(a core.Attachment) string
	// AttachmentType returns the content type the fake records for a.
	// Nil: a.ContentType.
	AttachmentType func(a core.Attachment) string
	// AttachmentsByName matches the recorded attachments to the sent ones
	// by file name instead of by position, for providers that take raw
	// MIME, where inline parts come in their own multipart/related part
	// ahead of the attachments.
	AttachmentsByName bool
	// NoContentID: the provider's API has no field for an inline part's
	// Content-ID (Elastic Email v4), so an inline image goes as an
	// ordinary attachment; the driver's docs say so.
	NoContentID bool
	// NoRecipientNames: the provider takes To, Cc and Bcc as bare
	// addresses (Cloudflare), so their names are not checked.
	NoRecipientNames bool
	// MaxMessageBytes is the driver's size cap of a message (0: none):
	// a message over it fails for good without a call.
	MaxMessageBytes int
	// ReplyToCap is the most Reply-To addresses the provider takes (0: no
	// cap); the first ReplyToCap of a message's arrive.
	ReplyToCap int

	// DefaultBaseURL is the address a transport built with no base_url
	// talks to, as its BaseURL method reports it.
	DefaultBaseURL string
	// APIKeyConstant is the constant that pins the api_key setting.
	APIKeyConstant string
	// UnknownKey is a settings key the driver does not know (another
	// driver's key makes a good one).
	UnknownKey string
	// Defaulted are settings keys that validation fills in when empty.
	Defaulted []string
	// SchemaCases are the driver's own validation cases, run with the
	// common ones.
	SchemaCases []SchemaCase
}

// SchemaCase is one settings validation case: the fields that must fail,
// none when the settings are valid.
type SchemaCase struct {
	Name       string
	Settings   core.Settings
	WantFields []string
}

// Run runs the whole suite: Send, Verify and Schema.
func Run(t *testing.T, h Harness) {
	t.Run("Send", func(t *testing.T) { Send(t, h) })
	t.Run("Verify", func(t *testing.T) { Verify(t, h) })
	t.Run("Schema", func(t *testing.T) { Schema(t, h) })
}

// Send runs the send tests of the suite.
func Send(t *testing.T, h Harness) {
	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, h) })
	t.Run("Embeds", func(t *testing.T) { embeds(t, h) })
	t.Run("MultipleReplyTo", func(t *testing.T) { multipleReplyTo(t, h) })
	t.Run("ErrorsClassified", func(t *testing.T) { errorsClassified(t, h) })
	t.Run("RecoversAfterFailures", func(t *testing.T) { recoversAfterFailures(t, h) })
	t.Run("NetworkErrorIsTemporary", func(t *testing.T) { networkErrorIsTemporary(t, h) })
	t.Run("UsesHostHTTPClient", func(t *testing.T) { usesHostHTTPClient(t, h) })
	t.Run("SendsToEnvelope", func(t *testing.T) { sendsToEnvelope(t, h) })
	t.Run("RateLimitHonoured", func(t *testing.T) { rateLimitHonoured(t, h) })
	t.Run("SecretGoesOnlyToBaseURL", func(t *testing.T) { secretGoesOnlyToBaseURL(t, h) })
	t.Run("OverSizeCapIsPermanent", func(t *testing.T) { overSizeCap(t, h) })
}

// overSizeCap: a message one byte over the driver's size cap fails for
// good, and the provider sees no request.
func overSizeCap(t *testing.T, h Harness) {
	if h.MaxMessageBytes == 0 {
		t.Skip("the driver declares no size cap")
	}
	fake := h.Start()
	defer fake.Close()
	msg := h.message()
	size := apidriver.MessageSize(msg)
	msg.Attachments = append(msg.Attachments, core.Attachment{Filename: "big.bin", ContentType: "application/octet-stream",
		Data: make([]byte, h.MaxMessageBytes-size+1)})
	_, err := h.newTransport(t, h.settings(fake.URL(), h.Key)).Send(context.Background(), msg)
	if err == nil || core.IsTemporary(err) {
		t.Fatalf("a message over the %d-byte cap: err %v, want a permanent failure", h.MaxMessageBytes, err)
	}
	if n := fake.Requests(); n != 0 {
		t.Errorf("the provider saw %d requests", n)
	}
}

// PDFBytes is a binary payload with every byte value, NULs and invalid
// UTF-8, named like a PDF.
func PDFBytes() []byte {
	b := []byte("%PDF-1.4\x00\xff\xfe")
	for i := range 256 {
		b = append(b, byte(i))
	}
	return b
}

// PNGBytes is a binary payload with every byte value, shaped like a PNG.
func PNGBytes() []byte {
	b := []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d}
	for i := 255; i >= 0; i-- {
		b = append(b, byte(i), 0)
	}
	return b
}

// FullMessage is a message that uses every part of core.Message: named and
// bare recipients of every kind, a unicode subject, text and HTML bodies,
// two custom headers, a PDF attachment and an inline PNG with the content
// id "logo1" that the HTML refers to.
func FullMessage() *core.Message {
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
			{Filename: "invoice.pdf", ContentType: "application/pdf", Data: PDFBytes()},
			{Filename: "logo.png", ContentType: "image/png", Data: PNGBytes(), Inline: true, ContentID: "logo1"},
		},
	}
}

// JPEGBytes is a second binary image payload, shaped like a JPEG and
// unlike PNGBytes, so that two inline parts cannot be confused.
func JPEGBytes() []byte {
	b := []byte{0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F', 'I', 'F', 0, '\r', '\n', '.', '\r', '\n'}
	for i := range 300 {
		b = append(b, byte(i*13), 0xff)
	}
	return b
}

// EmbedsMessage is an HTML message as the WordPress bridge queues one
// whose wp_mail() call embedded two images (WordPress 6.9's $embeds): an
// attachment, then the two inline images, the first renamed by
// wp_mail_embed_args ("brand-logo", brand.png) and the second added by a
// wp_mail filter ("banner", photo.jpg), both referred to from the HTML.
func EmbedsMessage() *core.Message {
	return &core.Message{
		From:    core.Address{Name: "Shop", Email: "shop@example.com"},
		To:      []core.Address{{Name: "Ann", Email: "ann@example.org"}},
		Subject: "Your order, with pictures",
		HTML:    `<p><img src="cid:brand-logo" alt="Logo"></p><p><img src="cid:banner" alt="Banner"></p>`,
		Attachments: []core.Attachment{
			{Filename: "invoice.pdf", ContentType: "application/pdf", Data: PDFBytes()},
			{Filename: "brand.png", ContentType: "image/png", Data: PNGBytes(), Inline: true, ContentID: "brand-logo"},
			{Filename: "photo.jpg", ContentType: "image/jpeg", Data: JPEGBytes(), Inline: true, ContentID: "banner"},
		},
	}
}

// embeds sends EmbedsMessage: both images arrive as the provider's
// inline attachments with their Content-IDs and bytes, the PDF as an
// attachment.
func embeds(t *testing.T, h Harness) {
	fake := h.Start()
	defer fake.Close()
	msg := EmbedsMessage()
	if _, err := h.newTransport(t, h.settings(fake.URL(), h.Key)).Send(context.Background(), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := fake.Messages()
	if len(got) != 1 {
		t.Fatalf("the fake recorded %d messages, want 1", len(got))
	}
	h.CheckMessage(t, got[0], msg)
}

// Recorded converts the messages a fake recorded (a slice of its own
// message type) to the suite's form: every field of Message and of its
// addresses and attachments takes the value of the fake's field of the same
// name, if it has one. Fields the fake does not have stay zero.
func Recorded(messages any) []Message {
	var out []Message
	copyByName(reflect.ValueOf(&out).Elem(), reflect.ValueOf(messages))
	return out
}

// copyByName copies src into dst: assignable values as they are, structs
// field by field of the same name, slices element by element, pointers by
// what they point to.
func copyByName(dst, src reflect.Value) {
	if src.Kind() == reflect.Pointer && dst.Kind() != reflect.Pointer {
		if src.IsNil() {
			return
		}
		src = src.Elem()
	}
	switch {
	case src.Type().AssignableTo(dst.Type()):
		dst.Set(src)
	case dst.Kind() == reflect.Struct && src.Kind() == reflect.Struct:
		for i := range dst.NumField() {
			if f := src.FieldByName(dst.Type().Field(i).Name); f.IsValid() {
				copyByName(dst.Field(i), f)
			}
		}
	case dst.Kind() == reflect.Slice && src.Kind() == reflect.Slice && !src.IsNil():
		list := reflect.MakeSlice(dst.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			copyByName(list.Index(i), src.Index(i))
		}
		dst.Set(list)
	}
}

func (h Harness) settings(url, key string) core.Settings {
	if h.Settings != nil {
		return h.Settings(url, key)
	}
	s := core.Settings{"api_key": key, "base_url": url}
	maps.Copy(s, h.ExtraSettings)
	return s
}

func (h Harness) message() *core.Message {
	if h.Message != nil {
		return h.Message()
	}
	return FullMessage()
}

// NewTransport builds the transport of a connection of the registered
// driver slug with settings and a host HTTP client, and fails the test if
// that is an error.
func NewTransport(t *testing.T, slug string, settings core.Settings) core.Transport {
	t.Helper()
	return NewTransportEnv(t, slug, settings, core.DriverEnv{})
}

// NewTransportEnv is NewTransport with what the host gives the driver
// (an OAuth token source, say): env, with a plain HTTP client when it has
// none.
func NewTransportEnv(t *testing.T, slug string, settings core.Settings, env core.DriverEnv) core.Transport {
	t.Helper()
	d, ok := core.LookupDriver(slug)
	if !ok {
		t.Fatalf("driver %s is not registered", slug)
	}
	if env.HTTPClient == nil {
		env.HTTPClient = &http.Client{}
	}
	tr, err := d.New(&core.Connection{ID: 1, Driver: slug, Settings: settings}, env)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return tr
}

func (h Harness) newTransport(t *testing.T, settings core.Settings) core.Transport {
	t.Helper()
	return NewTransport(t, h.Slug, settings)
}

func roundTrip(t *testing.T, h Harness) {
	fake := h.Start()
	defer fake.Close()
	override := h.settings(fake.URL()+"/", h.Key)
	override["from_email"], override["from_name"] = "noreply@example.net", "Example Net"
	tests := []struct {
		name     string
		settings core.Settings
		wantFrom core.Address
	}{
		{"message sender", h.settings(fake.URL(), h.Key), core.Address{Name: "Shop", Email: "shop@example.com"}},
		{"connection sender overrides", override, core.Address{Name: "Example Net", Email: "noreply@example.net"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := h.message()
			rc, m := SendRecorded(t, h.newTransport(t, tc.settings), msg, fake.Messages, i+1)
			if h.CheckReceipt != nil {
				h.CheckReceipt(t, rc, m)
			} else if rc.MessageID == "" || rc.MessageID != m.ID {
				t.Errorf("receipt id %q, fake id %q", rc.MessageID, m.ID)
			}
			if m.From != tc.wantFrom {
				t.Errorf("from = %+v, want %+v", m.From, tc.wantFrom)
			}
			h.CheckMessage(t, m, msg)
		})
	}
}

// sendsToEnvelope: a message whose Envelope names some of its recipients
// (a part of a split message) reaches exactly those, a To among them
// still as To, a lone Bcc one as the To of its own call.
func sendsToEnvelope(t *testing.T, h Harness) {
	if h.KeepsHeaders {
		return
	}
	fake := h.Start()
	defer fake.Close()
	tr := h.newTransport(t, h.settings(fake.URL(), h.Key))
	msg := h.message()
	msg.To = []core.Address{{Email: "a@example.org"}, {Email: "b@example.org"}}
	msg.Cc = []core.Address{{Email: "c@example.org"}}
	msg.Bcc = []core.Address{{Email: "d@example.org"}}
	tests := []struct {
		envelope []core.Address
		wantTo   []string
		wantRest []string // Cc and Bcc
	}{
		{[]core.Address{msg.To[1], msg.Cc[0]}, []string{"b@example.org"}, []string{"c@example.org"}},
		{[]core.Address{msg.Bcc[0]}, []string{"d@example.org"}, nil},
	}
	for i, tc := range tests {
		part := *msg
		part.Envelope = tc.envelope
		if _, err := tr.Send(context.Background(), &part); err != nil {
			t.Fatalf("part %d: Send: %v", i+1, err)
		}
		got := fake.Messages()
		if len(got) != i+1 {
			t.Fatalf("fake recorded %d messages, want %d", len(got), i+1)
		}
		emails := func(list ...[]core.Address) []string {
			var out []string
			for _, l := range list {
				for _, a := range l {
					out = append(out, a.Email)
				}
			}
			return out
		}
		if to, rest := emails(got[i].To), emails(got[i].Cc, got[i].Bcc); !slices.Equal(to, tc.wantTo) || !slices.Equal(rest, tc.wantRest) {
			t.Errorf("part %d went to %v and %v, want %v and %v", i+1, to, rest, tc.wantTo, tc.wantRest)
		}
	}
}

// CheckMessage fails the test unless m, a message as the fake recorded
// it, is msg as sent: its To, Cc, Bcc and Reply-To, subject, text and HTML
// bodies, custom headers, and attachments (matched by position or by
// name, as h says) with their bytes.
func (h Harness) CheckMessage(t *testing.T, m Message, msg *core.Message) {
	t.Helper()
	recipients := func(list []core.Address) []core.Address {
		if !h.NoRecipientNames {
			return list
		}
		out := make([]core.Address, 0, len(list))
		for _, a := range list {
			out = append(out, core.Address{Email: a.Email})
		}
		return out
	}
	CheckAddresses(t, "to", m.To, recipients(msg.To))
	CheckAddresses(t, "cc", m.Cc, recipients(msg.Cc))
	CheckAddresses(t, "bcc", m.Bcc, recipients(msg.Bcc))
	CheckAddresses(t, "reply-to", m.ReplyTo, h.replyTo(msg.ReplyTo))
	if m.Subject != msg.Subject || m.Text != msg.Text || m.HTML != msg.HTML {
		t.Errorf("subject/text/html = %q/%q/%q", m.Subject, m.Text, m.HTML)
	}
	for _, hd := range msg.Headers {
		if m.Headers[hd.Name] != hd.Value {
			t.Errorf("header %s = %q, want %q", hd.Name, m.Headers[hd.Name], hd.Value)
		}
	}
	if len(m.Attachments) != len(msg.Attachments) {
		t.Fatalf("got %d attachments, want %d", len(m.Attachments), len(msg.Attachments))
	}
	for j, want := range msg.Attachments {
		wantName := want.Filename
		if h.AttachmentName != nil {
			wantName = h.AttachmentName(want)
		}
		a := m.Attachments[j]
		if h.AttachmentsByName {
			for _, rec := range m.Attachments {
				if rec.Filename == wantName {
					a = rec
				}
			}
		}
		wantType := want.ContentType
		if h.AttachmentType != nil {
			wantType = h.AttachmentType(want)
		}
		wantInline, wantCID := want.Inline, want.ContentID
		if h.NoContentID {
			wantInline, wantCID = false, ""
		}
		if a.Filename != wantName || a.ContentType != wantType || a.Inline != wantInline || a.ContentID != wantCID {
			t.Errorf("attachment %d = %s %s inline=%v cid=%s, want %s %s inline=%v cid=%s", j, a.Filename, a.ContentType, a.Inline, a.ContentID, wantName, wantType, wantInline, wantCID)
		}
		if !bytes.Equal(a.Data, want.Data) {
			t.Errorf("attachment %d bytes differ (%d vs %d bytes)", j, len(a.Data), len(want.Data))
		}
	}
}

func multipleReplyTo(t *testing.T, h Harness) {
	fake := h.Start()
	defer fake.Close()
	msg := h.message()
	msg.ReplyTo = []core.Address{{Email: "a@example.com"}, {Name: "B", Email: "b@example.com"}}
	if _, err := h.newTransport(t, h.settings(fake.URL(), h.Key)).Send(context.Background(), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	CheckAddresses(t, "reply-to", fake.Messages()[0].ReplyTo, h.replyTo(msg.ReplyTo))
}

// replyTo returns the Reply-To addresses of list the provider takes.
func (h Harness) replyTo(list []core.Address) []core.Address {
	if h.ReplyToCap > 0 && len(list) > h.ReplyToCap {
		return list[:h.ReplyToCap]
	}
	return list
}

// RateLimiter is a fake that can answer the next n requests 429 Too Many
// Requests with a Retry-After header.
type RateLimiter interface {
	RateLimitNext(n int, retryAfter time.Duration)
}

// rateLimitHonoured, for a fake that is a RateLimiter: a 429 with
// Retry-After is a temporary rate-limit error that carries the wait, and
// the next send, once the provider takes mail again, succeeds.
func rateLimitHonoured(t *testing.T, h Harness) {
	fake := h.Start()
	defer fake.Close()
	rl, ok := fake.(RateLimiter)
	if !ok {
		t.Skip("the fake cannot answer 429 with Retry-After")
	}
	rl.RateLimitNext(1, 7*time.Second)
	tr := h.newTransport(t, h.settings(fake.URL(), h.Key))
	_, err := tr.Send(context.Background(), h.message())
	wait, limited := core.AsRateLimited(err)
	if !limited || !core.IsTemporary(err) || wait != 7*time.Second {
		t.Fatalf("after a 429 with Retry-After 7: err %v, rate limited %v, wait %v; want a temporary rate limit of 7s", err, limited, wait)
	}
	if _, err := tr.Send(context.Background(), h.message()); err != nil {
		t.Fatalf("the send after the rate limit: %v", err)
	}
	if n := len(fake.Messages()); n != 1 {
		t.Errorf("the fake recorded %d messages, want 1", n)
	}
}

// recordingTransport notes the host and credentials of every request the
// host's client makes.
type recordingTransport struct {
	mu    sync.Mutex
	hosts []string
}

func (c *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.hosts = append(c.hosts, r.URL.Host)
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// sendAndVerify sends a message with a connection of the harness's
// driver to the fake at url, its host client sending through rt, then
// checks the connection's credentials; it fails the test on any error.
func (h Harness) sendAndVerify(t *testing.T, url string, rt http.RoundTripper) {
	t.Helper()
	d, _ := core.LookupDriver(h.Slug)
	tr, err := d.New(&core.Connection{Settings: h.settings(url, h.Key)}, core.DriverEnv{HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := tr.Send(context.Background(), h.message()); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if err := tr.(core.Verifier).Verify(context.Background()); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

// secretGoesOnlyToBaseURL: a send and a credentials check of a
// connection whose base_url names the fake make their requests to the
// fake's host only, and another fake of the provider sees nothing.
func secretGoesOnlyToBaseURL(t *testing.T, h Harness) {
	fake, other := h.Start(), h.Start()
	defer fake.Close()
	defer other.Close()
	rec := &recordingTransport{}
	h.sendAndVerify(t, fake.URL(), rec)
	want := strings.TrimPrefix(fake.URL(), "http://")
	for _, host := range rec.hosts {
		if host != want {
			t.Errorf("a request went to %s, not to the configured %s", host, want)
		}
	}
	if len(rec.hosts) == 0 || other.Requests() != 0 {
		t.Errorf("%d requests made, %d reached another host", len(rec.hosts), other.Requests())
	}
}

// CheckAddresses reports an error unless got holds the names and addresses
// of want, in order.
func CheckAddresses(t *testing.T, what string, got, want []core.Address) {
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

func errorsClassified(t *testing.T, h Harness) {
	tests := []struct {
		name          string
		key           string
		status        int
		stall         bool
		wantTemporary bool
	}{
		{name: "wrong key gives 401", key: h.WrongKey, wantTemporary: false},
		{name: "400 validation", key: h.Key, status: 400, wantTemporary: false},
		{name: "403 sender identity", key: h.Key, status: 403, wantTemporary: false},
		{name: "429 rate limit", key: h.Key, status: 429, wantTemporary: true},
		{name: "500", key: h.Key, status: 500, wantTemporary: true},
		{name: "503", key: h.Key, status: 503, wantTemporary: true},
		{name: "stalled server", key: h.Key, stall: true, wantTemporary: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := h.Start()
			defer fake.Close()
			if tc.status != 0 {
				fake.FailNext(1, tc.status)
			}
			ctx := context.Background()
			if tc.stall {
				fake.StallNext(1)
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
			}
			_, err := h.newTransport(t, h.settings(fake.URL(), tc.key)).Send(ctx, h.message())
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

func recoversAfterFailures(t *testing.T, h Harness) {
	fake := h.Start()
	defer fake.Close()
	fake.FailNext(2, 503)
	tr := h.newTransport(t, h.settings(fake.URL(), h.Key))
	for i := range 2 {
		if _, err := tr.Send(context.Background(), h.message()); !core.IsTemporary(err) {
			t.Fatalf("attempt %d: err = %v, want temporary", i, err)
		}
	}
	rc, err := tr.Send(context.Background(), h.message())
	if err != nil || rc.MessageID == "" {
		t.Fatalf("third attempt: receipt %+v, err %v", rc, err)
	}
}

func networkErrorIsTemporary(t *testing.T, h Harness) {
	fake := h.Start()
	url := fake.URL()
	fake.Close()
	_, err := h.newTransport(t, h.settings(url, h.Key)).Send(context.Background(), h.message())
	var de *core.DeliveryError
	if err == nil || !errors.As(err, &de) || !core.IsTemporary(err) {
		t.Fatalf("err = %v, want a classified temporary error", err)
	}
}

// countingTransport counts the requests that go through the host's client.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func usesHostHTTPClient(t *testing.T, h Harness) {
	fake := h.Start()
	defer fake.Close()
	ct := &countingTransport{}
	h.sendAndVerify(t, fake.URL(), ct)
	if got := ct.n.Load(); got != 2 {
		t.Errorf("host client saw %d requests, want 2", got)
	}
}

// Verify runs the credential check tests of the suite.
func Verify(t *testing.T, h Harness) {
	tests := []struct {
		name          string
		key           string
		status        int
		wantErr       bool
		wantTemporary bool
	}{
		{name: "valid key", key: h.Key},
		{name: "bad key", key: h.WrongKey, wantErr: true},
		{name: "forbidden", key: h.Key, status: 403, wantErr: true},
		{name: "server error", key: h.Key, status: 500, wantErr: true, wantTemporary: true},
		{name: "rate limited", key: h.Key, status: 429, wantErr: true, wantTemporary: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := h.Start()
			defer fake.Close()
			if tc.status != 0 {
				fake.FailNext(1, tc.status)
			}
			v, ok := h.newTransport(t, h.settings(fake.URL(), tc.key)).(core.Verifier)
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

// Schema runs the settings validation tests of the suite, the harness's
// own cases included, and checks the transport's defaults.
func Schema(t *testing.T, h Harness) {
	d, ok := core.LookupDriver(h.Slug)
	if !ok {
		t.Fatalf("driver %s is not registered", h.Slug)
	}
	with := func(kv ...any) core.Settings {
		s := core.Settings{"api_key": "k"}
		maps.Copy(s, h.ExtraSettings)
		return SettingsWith(s, kv...)
	}
	missing := with()
	delete(missing, "api_key")
	missing["from_email"] = "a@example.com"
	tests := []SchemaCase{
		{"valid", with("from_email", "a@example.com", "from_name", "A"), nil},
		{"missing api_key", missing, []string{"api_key"}},
		{"empty api_key", with("api_key", ""), []string{"api_key"}},
		{"bad from_email", with("from_email", "not-an-email"), []string{"from_email"}},
		{"bad base_url", with("base_url", "ftp://x"), []string{"base_url"}},
		{"unknown key", with(h.UnknownKey, "eu"), []string{h.UnknownKey}},
	}
	tests = append(tests, h.SchemaCases...)
	ValidateCases(t, d, tests, func(t *testing.T, s core.Settings) {
		for _, k := range h.Defaulted {
			if s.String(k) == "" {
				t.Errorf("%s was not defaulted: %v", k, s)
			}
		}
	})
	if f := d.Field("api_key"); f == nil || !f.Sensitive || f.Constant != h.APIKeyConstant {
		t.Errorf("api_key field = %+v, want sensitive with constant %s", f, h.APIKeyConstant)
	}
	t.Run("Defaults", func(t *testing.T) {
		tr, ok := h.newTransport(t, h.settings("", h.Key)).(interface{ BaseURL() string })
		if !ok {
			t.Fatal("transport has no BaseURL method")
		}
		if tr.BaseURL() != h.DefaultBaseURL {
			t.Errorf("BaseURL = %q, want %q", tr.BaseURL(), h.DefaultBaseURL)
		}
		if _, err := d.New(&core.Connection{Settings: core.Settings{}}, core.DriverEnv{}); core.ErrorFields(err)["api_key"] == "" {
			t.Errorf("New without api_key: err = %v, want a field error", err)
		}
	})
}

// ValidateCases validates each case's settings with d in a subtest: a
// case that wants no field must validate, else the fields that fail must
// be the wanted ones (CheckFields); valid, when not nil, then checks the
// settings of a case that validates (the defaults filled in).
func ValidateCases(t *testing.T, d *core.Driver, cases []SchemaCase, valid func(t *testing.T, s core.Settings)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			err := d.ValidateSettings(tc.Settings)
			if len(tc.WantFields) == 0 && err != nil {
				t.Fatalf("ValidateSettings: %v", err)
			}
			CheckFields(t, err, tc.WantFields)
			if err == nil && valid != nil {
				valid(t, tc.Settings)
			}
		})
	}
}

// SendInParts sends a message from FullMessage to n To recipients
// through tr as the delivery engine does at the slug driver's recipient
// caps: first whole, which the provider's fake must refuse for good (it
// passes a cap), then in the parts core.SplitRecipients makes, each of
// which must be accepted. It returns the number of parts; the caller
// checks with CheckParts that its fake recorded that many messages, n
// recipients in all.
func SendInParts(t *testing.T, slug string, tr core.Transport, n int) int {
	t.Helper()
	d, ok := core.LookupDriver(slug)
	if !ok || d.RecipientCaps.Zero() {
		t.Fatalf("driver %s declares no recipient caps", slug)
	}
	msg := FullMessage()
	msg.To, msg.Cc, msg.Bcc = nil, nil, nil
	for i := range n {
		msg.To = append(msg.To, core.Address{Email: fmt.Sprintf("r%d@example.org", i)})
	}
	if _, err := tr.Send(context.Background(), msg); err == nil || core.IsTemporary(err) {
		t.Fatalf("the whole message to %d recipients: err %v, want the fake's permanent refusal", n, err)
	}
	parts := core.SplitRecipients(msg, nil, d.RecipientCaps)
	for i, p := range parts {
		part := *msg
		part.Envelope = p
		if _, err := tr.Send(context.Background(), &part); err != nil {
			t.Fatalf("part %d of %d (%d recipients): %v", i+1, len(parts), len(p), err)
		}
	}
	return len(parts)
}

// CheckParts checks what a fake recorded (its Messages, read through
// Recorded) after SendInParts sent n recipients in parts: wantParts parts,
// as many messages recorded, n recipients in all.
func CheckParts(t *testing.T, parts int, recorded []Message, wantParts, n int) {
	t.Helper()
	total := 0
	for _, m := range recorded {
		total += len(m.To) + len(m.Cc) + len(m.Bcc)
	}
	if parts != wantParts || len(recorded) != parts || total != n {
		t.Fatalf("%d parts, %d recorded, %d recipients; want %d, %d, %d", parts, len(recorded), total, wantParts, wantParts, n)
	}
}

// SettingsWith returns base with the key/value pairs of kv set in it, a
// nil value deleting its key, for a table of settings cases that each
// change a valid set a little. base itself is changed and returned.
func SettingsWith(base core.Settings, kv ...any) core.Settings {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(base, kv[i].(string))
			continue
		}
		base[kv[i].(string)] = kv[i+1]
	}
	return base
}

// APIFake is a provider fake as test/fakes makes them: its FailNext takes
// the answer's body ("" for an error in the provider's own shape).
type APIFake interface {
	Requests() int
	FailNext(n, status int, body string)
	StallNext(n int)
	Close()
}

// NewFake returns f as the suite drives it: reached at url, its recorded
// messages (messages, usually f.Messages) read through Recorded, and its
// failures in the provider's own error shape.
func NewFake[M any](f APIFake, url string, messages func() []M) Fake {
	fake := apiFake[M]{APIFake: f, url: url, messages: messages}
	if rl, ok := f.(RateLimiter); ok {
		return rateLimitingFake[M]{fake, rl}
	}
	return fake
}

// rateLimitingFake is an apiFake whose fake can answer 429 with
// Retry-After.
type rateLimitingFake[M any] struct {
	apiFake[M]
	RateLimiter
}

type apiFake[M any] struct {
	APIFake
	url      string
	messages func() []M
}

func (f apiFake[M]) URL() string            { return f.url }
func (f apiFake[M]) FailNext(n, status int) { f.APIFake.FailNext(n, status, "") }
func (f apiFake[M]) Messages() []Message    { return Recorded(f.messages()) }

// SendThenFind sends msg through tr (a core.Finder) within half a second,
// fails t unless the send is uncertain exactly when wantUncertain, then
// asks tr whether the provider kept msg and returns its answer.
func SendThenFind(t *testing.T, tr core.Transport, msg *core.Message, wantUncertain bool) (core.Receipt, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err := tr.Send(ctx, msg)
	cancel()
	if got := core.IsUncertain(err); got != wantUncertain {
		t.Fatalf("Send err = %v: uncertain %v, want %v", err, got, wantUncertain)
	}
	rc, found, err := tr.(core.Finder).Find(context.Background(), msg)
	if err != nil {
		t.Fatalf("Find: %v", err)
	}
	return rc, found
}

// SendRecorded sends msg through tr and fails t unless the send succeeds
// and the fake's recorded messages (recorded, usually its Messages) are
// then want in all; it returns the receipt and the last of them.
func SendRecorded[M any](t *testing.T, tr core.Transport, msg *core.Message, recorded func() []M, want int) (core.Receipt, M) {
	t.Helper()
	rc, err := tr.Send(context.Background(), msg)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := recorded()
	if len(got) != want {
		t.Fatalf("fake recorded %d messages, want %d", len(got), want)
	}
	return rc, got[want-1]
}
