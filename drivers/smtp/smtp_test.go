package smtp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	stdmime "mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	smtpdrv "github.com/mailsvc/mailsvc/drivers/smtp"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// transcripts collects saved transcripts.
type transcripts struct {
	mu   sync.Mutex
	byID map[int64][]string
}

func (tr *transcripts) SaveTranscript(id int64, text string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.byID == nil {
		tr.byID = map[int64][]string{}
	}
	tr.byID[id] = append(tr.byID[id], text)
}

func (tr *transcripts) all(id int64) string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return strings.Join(tr.byID[id], "")
}

// settings returns connection settings for the sink, plain and without
// auth, with overrides applied.
func settings(s *smtpsink.Sink, over core.Settings) core.Settings {
	out := core.Settings{
		smtpdrv.KeyHost:       s.Host(),
		smtpdrv.KeyPort:       int64(s.Port()),
		smtpdrv.KeyEncryption: smtpdrv.EncryptionNone,
		smtpdrv.KeyAuth:       false,
		smtpdrv.KeyTimeout:    int64(5),
	}
	maps.Copy(out, over)
	return out
}

func newTransport(t testing.TB, set core.Settings, env core.DriverEnv, opts smtpdrv.Options) *smtpdrv.Transport {
	t.Helper()
	tr, err := smtpdrv.NewTransport(&core.Connection{ID: 7, Driver: smtpdrv.Slug, Settings: set}, env, opts)
	if err != nil {
		t.Fatalf("NewTransport: %v", err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

func message() *core.Message {
	return &core.Message{
		From:    core.Address{Name: "Shop", Email: "shop@example.com"},
		To:      []core.Address{{Name: "Ann", Email: "ann@example.org"}},
		Subject: "Order 42",
		Text:    "Thanks for your order.",
	}
}

func TestSendModes(t *testing.T) {
	tests := []struct {
		name     string
		sinkOpts []smtpsink.Option
		set      core.Settings
		pool     bool // pass the sink's CA pool
		wantTLS  bool
		wantUser string
	}{
		{name: "plain"},
		{name: "starttls", sinkOpts: []smtpsink.Option{smtpsink.WithSTARTTLS()},
			set: core.Settings{smtpdrv.KeyEncryption: smtpdrv.EncryptionTLS}, pool: true, wantTLS: true},
		{name: "implicit tls", sinkOpts: []smtpsink.Option{smtpsink.WithImplicitTLS()},
			set: core.Settings{smtpdrv.KeyEncryption: smtpdrv.EncryptionSSL}, pool: true, wantTLS: true},
		{name: "auth on loopback without tls", sinkOpts: []smtpsink.Option{smtpsink.WithAuth("user", "pa:ss")},
			set: core.Settings{smtpdrv.KeyAuth: true, smtpdrv.KeyUsername: "user", smtpdrv.KeyPassword: "pa:ss"}, wantUser: "user"},
		{name: "auth over starttls", sinkOpts: []smtpsink.Option{smtpsink.WithAuth("user", "secret"), smtpsink.WithSTARTTLS(), smtpsink.WithRequireTLS()},
			set:  core.Settings{smtpdrv.KeyEncryption: smtpdrv.EncryptionTLS, smtpdrv.KeyAuth: true, smtpdrv.KeyUsername: "user", smtpdrv.KeyPassword: "secret"},
			pool: true, wantTLS: true, wantUser: "user"},
		{name: "auth over implicit tls, self-signed accepted by setting", sinkOpts: []smtpsink.Option{smtpsink.WithAuth("u", "p"), smtpsink.WithImplicitTLS()},
			set: core.Settings{smtpdrv.KeyEncryption: smtpdrv.EncryptionSSL, smtpdrv.KeyAuth: true, smtpdrv.KeyUsername: "u",
				smtpdrv.KeyPassword: "p", smtpdrv.KeyInsecureSkipVerify: true},
			wantTLS: true, wantUser: "u"},
		{name: "custom helo", set: core.Settings{smtpdrv.KeyHelo: "mail.example.com"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := smtpsink.Start(t, tc.sinkOpts...)
			var opts smtpdrv.Options
			if tc.pool {
				opts.RootCAs = sink.CertPool()
			}
			tr := newTransport(t, settings(sink, tc.set), core.DriverEnv{}, opts)
			rc, err := tr.Send(context.Background(), message())
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			m := sink.AwaitOne(t)
			if m.TLS != tc.wantTLS || m.Username != tc.wantUser {
				t.Errorf("TLS=%v user=%q, want TLS=%v user=%q", m.TLS, m.Username, tc.wantTLS, tc.wantUser)
			}
			if m.From != "shop@example.com" || strings.Join(m.To, ",") != "ann@example.org" {
				t.Errorf("envelope = %q %v", m.From, m.To)
			}
			if h := tc.set[smtpdrv.KeyHelo]; h != nil && m.Helo != h {
				t.Errorf("helo = %q, want %q", m.Helo, h)
			}
			if rc.MessageID != m.QueueID {
				t.Errorf("receipt id = %q, want the queue id %q", rc.MessageID, m.QueueID)
			}
			if !strings.HasPrefix(rc.Response, "250 ") || !strings.Contains(rc.Response, m.QueueID) {
				t.Errorf("receipt response = %q", rc.Response)
			}
			parsed, err := mail.ReadMessage(bytes.NewReader(m.Data))
			if err != nil {
				t.Fatalf("parse received message: %v", err)
			}
			if parsed.Header.Get("Subject") != "Order 42" {
				t.Errorf("subject = %q", parsed.Header.Get("Subject"))
			}
		})
	}
}

// failure describes an expected classified error.
func checkClass(t *testing.T, err error, wantTemporary bool) {
	t.Helper()
	if err == nil {
		t.Fatal("expected an error, got nil")
	}
	var de *core.DeliveryError
	if !errors.As(err, &de) {
		t.Fatalf("error %v is not classified", err)
	}
	if de.Temporary != wantTemporary {
		t.Errorf("error %v: temporary=%v, want %v", err, de.Temporary, wantTemporary)
	}
}

func TestSendErrorsAreClassified(t *testing.T) {
	const password = "S3cr3t-pa55"
	authSet := core.Settings{smtpdrv.KeyAuth: true, smtpdrv.KeyUsername: "user", smtpdrv.KeyPassword: password}
	tests := []struct {
		name      string
		sinkOpts  []smtpsink.Option
		set       core.Settings
		inject    func(*smtpsink.Sink)
		temporary bool
		// uncertain: the message left whole and no reply came.
		uncertain bool
		contains  string
	}{
		{name: "auth failure is permanent", sinkOpts: []smtpsink.Option{smtpsink.WithAuth("user", "other")}, set: authSet, contains: "535"},
		{name: "4xx is temporary", inject: func(s *smtpsink.Sink) { s.FailNext(1, 451, "greylisted") }, temporary: true, contains: "451"},
		{name: "452 is temporary", inject: func(s *smtpsink.Sink) { s.FailNext(1, 452, "mailbox full") }, temporary: true, contains: "452"},
		{name: "5xx is permanent", inject: func(s *smtpsink.Sink) { s.FailNext(1, 554, "spam") }, contains: "554"},
		{name: "550 is permanent", inject: func(s *smtpsink.Sink) { s.FailNext(1, 550, "no such user") }, contains: "550"},
		{name: "dropped connection is temporary", inject: func(s *smtpsink.Sink) { s.DropNext(1) }, temporary: true},
		{name: "stall beyond timeout after the final dot is uncertain", set: core.Settings{smtpdrv.KeyTimeout: int64(1)},
			inject: func(s *smtpsink.Sink) { s.StallNext(1, 3*time.Second) }, temporary: true, uncertain: true},
		{name: "connection closed after the message was taken is uncertain",
			inject: func(s *smtpsink.Sink) { s.TakeAndDropNext(1) }, temporary: true, uncertain: true},
		{name: "stepwise: connection closed after the message was taken is uncertain", sinkOpts: []smtpsink.Option{smtpsink.WithoutPipelining()},
			inject: func(s *smtpsink.Sink) { s.TakeAndDropNext(1) }, temporary: true, uncertain: true},
		{name: "starttls required but not offered is permanent", set: core.Settings{smtpdrv.KeyEncryption: smtpdrv.EncryptionTLS}},
		{name: "untrusted certificate is permanent", sinkOpts: []smtpsink.Option{smtpsink.WithSTARTTLS()},
			set: core.Settings{smtpdrv.KeyEncryption: smtpdrv.EncryptionTLS}},
		{name: "auth required but not sent is permanent", sinkOpts: []smtpsink.Option{smtpsink.WithAuth("user", password)}, contains: "530"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := smtpsink.Start(t, tc.sinkOpts...)
			if tc.inject != nil {
				tc.inject(sink)
			}
			tr := newTransport(t, settings(sink, tc.set), core.DriverEnv{}, smtpdrv.Options{})
			_, err := tr.Send(context.Background(), message())
			checkClass(t, err, tc.temporary)
			if tc.uncertain != core.IsUncertain(err) && !strings.Contains(tc.name, "dropped") {
				t.Errorf("uncertain = %v, want %v: %v", core.IsUncertain(err), tc.uncertain, err)
			}
			if !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %q does not contain %q", err, tc.contains)
			}
			if strings.Contains(err.Error(), password) {
				t.Errorf("error leaks the password: %v", err)
			}
		})
	}
}

// TestSlowDownRepliesAreRateLimits: a server's "slow down" answers
// (every 421; a 451 of class 4.7; a 4xx naming a rate, throttling or too
// many connections) pause the connection without counting an attempt
// (core.RateLimited); other 4xx, greylisting among them, stay ordinary
// temporary failures and 5xx permanent ones.
func TestSlowDownRepliesAreRateLimits(t *testing.T) {
	tests := []struct {
		code        int
		text        string
		rateLimited bool
		temporary   bool
	}{
		{421, "4.7.0 Try again later, closing connection", true, true},
		{421, "Service not available", true, true},
		{451, "4.7.500 Server busy. Please try again later", true, true},
		{451, "4.7.0 Temporary rate limit", true, true},
		{454, "Throttling failure: Maximum sending rate exceeded.", true, true},
		{450, "4.2.1 Too many messages from this sender, slow down", true, true},
		{451, "4.3.0 Local error in processing", false, true},
		{451, "4.7.1 Greylisted, please try again in 300 seconds", false, true},
		{452, "4.5.3 Too many recipients", false, true},
		{452, "4.2.2 Mailbox full", false, true},
		{554, "5.7.1 Rate of spam too high", false, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d %s", tc.code, tc.text), func(t *testing.T) {
			sink := smtpsink.Start(t)
			sink.FailNext(1, tc.code, tc.text)
			tr := newTransport(t, settings(sink, nil), core.DriverEnv{}, smtpdrv.Options{})
			_, err := tr.Send(context.Background(), message())
			checkClass(t, err, tc.temporary)
			if _, limited := core.AsRateLimited(err); limited != tc.rateLimited {
				t.Errorf("rate limited = %v, want %v: %v", limited, tc.rateLimited, err)
			}
			if !strings.Contains(err.Error(), fmt.Sprint(tc.code)) {
				t.Errorf("error %q does not name the reply code", err)
			}
		})
	}
}

func TestSendUnreachableIsTemporary(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	set := core.Settings{smtpdrv.KeyHost: "127.0.0.1", smtpdrv.KeyPort: int64(port), smtpdrv.KeyEncryption: smtpdrv.EncryptionNone,
		smtpdrv.KeyAuth: false, smtpdrv.KeyTimeout: int64(2)}
	tr := newTransport(t, set, core.DriverEnv{}, smtpdrv.Options{})
	_, err = tr.Send(context.Background(), message())
	checkClass(t, err, true)
	if core.IsUncertain(err) {
		t.Errorf("an unreachable server cannot have taken the message, yet the error is uncertain: %v", err)
	}
}

func TestSendHonoursContext(t *testing.T) {
	sink := smtpsink.Start(t)
	sink.StallNext(1, 10*time.Second)
	tr := newTransport(t, settings(sink, core.Settings{smtpdrv.KeyTimeout: int64(60)}), core.DriverEnv{}, smtpdrv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := tr.Send(ctx, message())
	checkClass(t, err, true)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap the context's deadline", err)
	}
}

func TestConnectionReuse(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.WithAuth("user", "secret"))
	set := settings(sink, core.Settings{smtpdrv.KeyAuth: true, smtpdrv.KeyUsername: "user", smtpdrv.KeyPassword: "secret"})
	tr := newTransport(t, set, core.DriverEnv{}, smtpdrv.Options{})
	const n = 5
	for i := 0; i < n; i++ {
		if _, err := tr.Send(context.Background(), message()); err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
	}
	// A rejected message does not cost the session.
	sink.FailNext(1, 550, "no")
	if _, err := tr.Send(context.Background(), message()); err == nil {
		t.Fatal("rejected send succeeded")
	}
	if _, err := tr.Send(context.Background(), message()); err != nil {
		t.Fatalf("Send after rejection: %v", err)
	}
	if got := len(sink.Messages()); got != n+1 {
		t.Errorf("sink has %d messages, want %d", got, n+1)
	}
	if sink.Connections() != 1 || sink.Auths() != 1 {
		t.Errorf("connections=%d auths=%d, want 1 and 1", sink.Connections(), sink.Auths())
	}
	if tr.IdleConnections() != 1 {
		t.Errorf("idle connections = %d, want 1", tr.IdleConnections())
	}

	// The server hangs up on the idle session: the next Send redials once.
	sink.DropConnections()
	if _, err := tr.Send(context.Background(), message()); err != nil {
		t.Fatalf("Send after the server dropped the idle session: %v", err)
	}
	if sink.Connections() != 2 {
		t.Errorf("connections = %d after redial, want 2", sink.Connections())
	}

	// Close quits the pooled session.
	if err := tr.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if tr.IdleConnections() != 0 {
		t.Errorf("idle connections after Close = %d", tr.IdleConnections())
	}
	deadline := time.Now().Add(5 * time.Second)
	for sink.ActiveConnections() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if sink.ActiveConnections() != 0 {
		t.Errorf("sink still has %d open connections after Close", sink.ActiveConnections())
	}
}

func TestIdleSessionsExpire(t *testing.T) {
	sink := smtpsink.Start(t)
	tr := newTransport(t, settings(sink, nil), core.DriverEnv{}, smtpdrv.Options{IdleTimeout: 100 * time.Millisecond})
	if _, err := tr.Send(context.Background(), message()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for (tr.IdleConnections() != 0 || sink.ActiveConnections() != 0) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if tr.IdleConnections() != 0 || sink.ActiveConnections() != 0 {
		t.Errorf("idle=%d active=%d after the idle timeout, want 0 and 0", tr.IdleConnections(), sink.ActiveConnections())
	}
}

func TestConcurrentSend(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.WithAuth("user", "secret"))
	set := settings(sink, core.Settings{smtpdrv.KeyAuth: true, smtpdrv.KeyUsername: "user", smtpdrv.KeyPassword: "secret"})
	const maxConns = 3
	tr := newTransport(t, set, core.DriverEnv{}, smtpdrv.Options{MaxConns: maxConns})
	const workers, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				msg := message()
				msg.Subject = fmt.Sprintf("w%d-%d", w, i)
				if _, err := tr.Send(context.Background(), msg); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Send: %v", err)
	}
	got := sink.Messages()
	if len(got) != workers*each {
		t.Fatalf("sink has %d messages, want %d", len(got), workers*each)
	}
	subjects := map[string]bool{}
	for _, m := range got {
		p, err := mail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			t.Fatal(err)
		}
		subjects[p.Header.Get("Subject")] = true
	}
	if len(subjects) != workers*each {
		t.Errorf("%d distinct subjects, want %d", len(subjects), workers*each)
	}
	if c := sink.Connections(); c > maxConns || c < 1 {
		t.Errorf("connections = %d, want between 1 and %d", c, maxConns)
	}
}

// part is one decoded leaf of a received message.
type part struct {
	mediaType, disposition, filename, contentID string
	data                                        []byte
}

func leaves(t *testing.T, h interface{ Get(string) string }, body []byte) []part {
	t.Helper()
	mt, params, err := stdmime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		t.Fatalf("content type %q: %v", h.Get("Content-Type"), err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		var out []part
		r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for {
			p, err := r.NextRawPart()
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(p)
			out = append(out, leaves(t, p.Header, b)...)
		}
	}
	data := body
	if strings.EqualFold(h.Get("Content-Transfer-Encoding"), "base64") {
		data, err = base64.StdEncoding.DecodeString(strings.NewReplacer("\r", "", "\n", "").Replace(string(body)))
		if err != nil {
			t.Fatalf("base64: %v", err)
		}
	}
	p := part{mediaType: mt, data: data, contentID: h.Get("Content-ID")}
	if d := h.Get("Content-Disposition"); d != "" {
		p.disposition, params, _ = stdmime.ParseMediaType(d)
		p.filename = params["filename"]
	}
	return []part{p}
}

func TestMessageContent(t *testing.T) {
	sink := smtpsink.Start(t)
	tr := newTransport(t, settings(sink, nil), core.DriverEnv{}, smtpdrv.Options{})
	pdf := make([]byte, 70000)
	for i := range pdf {
		pdf[i] = byte((i * 31) ^ (i >> 8))
	}
	png := []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d, 0xff, 0xfe}
	msg := &core.Message{
		From:    core.Address{Name: "Jürgen Müller", Email: "jm@example.com"},
		To:      []core.Address{{Email: "to@example.org"}},
		Cc:      []core.Address{{Name: "Carl", Email: "cc@example.org"}},
		Bcc:     []core.Address{{Name: "Hidden", Email: "bcc@example.net"}},
		ReplyTo: []core.Address{{Email: "reply@example.com"}},
		Subject: "Ваш заказ №42 — подтверждён ✓",
		Text:    "Plain version",
		HTML:    `<p>HTML version <img src="cid:logo"></p>`,
		Headers: []core.Header{{Name: "X-Order", Value: "42"}},
		Attachments: []core.Attachment{
			{Filename: "invoice.pdf", ContentType: "application/pdf", Data: pdf},
			{Filename: "logo.png", ContentType: "image/png", Data: png, Inline: true, ContentID: "logo"},
		},
	}
	if _, err := tr.Send(context.Background(), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	m := sink.AwaitOne(t)
	wantRcpts := "to@example.org,cc@example.org,bcc@example.net"
	if strings.Join(m.To, ",") != wantRcpts {
		t.Errorf("envelope recipients = %v, want %s", m.To, wantRcpts)
	}
	if bytes.Contains(m.Data, []byte("bcc@example.net")) {
		t.Errorf("Bcc address appears in the message data")
	}
	p, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	var dec stdmime.WordDecoder
	if s, err := dec.DecodeHeader(p.Header.Get("Subject")); err != nil || s != msg.Subject {
		t.Errorf("subject = %q (%v), want %q", s, err, msg.Subject)
	}
	from, err := p.Header.AddressList("From")
	if err != nil || len(from) != 1 || from[0].Name != "Jürgen Müller" || from[0].Address != "jm@example.com" {
		t.Errorf("From = %v (%v)", from, err)
	}
	if p.Header.Get("X-Order") != "42" || p.Header.Get("Bcc") != "" {
		t.Errorf("X-Order=%q Bcc=%q", p.Header.Get("X-Order"), p.Header.Get("Bcc"))
	}
	body, _ := io.ReadAll(p.Body)
	parts := leaves(t, p.Header, body)
	byType := map[string]part{}
	for _, pt := range parts {
		byType[pt.mediaType] = pt
	}
	if len(parts) != 4 {
		t.Fatalf("got %d parts, want text, html, png and pdf", len(parts))
	}
	if !bytes.Equal(byType["application/pdf"].data, pdf) || byType["application/pdf"].disposition != "attachment" ||
		byType["application/pdf"].filename != "invoice.pdf" {
		t.Errorf("pdf attachment differs: %d bytes, disposition %q, name %q",
			len(byType["application/pdf"].data), byType["application/pdf"].disposition, byType["application/pdf"].filename)
	}
	if img := byType["image/png"]; !bytes.Equal(img.data, png) || img.disposition != "inline" || img.contentID != "<logo>" {
		t.Errorf("inline image: %d bytes, disposition %q, Content-ID %q", len(img.data), img.disposition, img.contentID)
	}
	if _, ok := byType["text/plain"]; !ok {
		t.Error("no text/plain part")
	}
	if _, ok := byType["text/html"]; !ok {
		t.Error("no text/html part")
	}
}

func TestSenderOverride(t *testing.T) {
	tests := []struct {
		name     string
		set      core.Settings
		from     core.Address
		wantFrom string // envelope sender
		wantName string
		wantErr  bool
	}{
		{name: "message sender kept", set: core.Settings{smtpdrv.KeyFromEmail: "site@example.com", smtpdrv.KeyFromName: "Site"},
			from: core.Address{Name: "Shop", Email: "shop@example.com"}, wantFrom: "shop@example.com", wantName: "Shop"},
		{name: "missing sender filled", set: core.Settings{smtpdrv.KeyFromEmail: "site@example.com", smtpdrv.KeyFromName: "Site"},
			wantFrom: "site@example.com", wantName: "Site"},
		{name: "forced sender", set: core.Settings{smtpdrv.KeyFromEmail: "site@example.com", smtpdrv.KeyFromName: "Site", smtpdrv.KeyForceFrom: true},
			from: core.Address{Name: "Shop", Email: "shop@example.com"}, wantFrom: "site@example.com", wantName: "Site"},
		{name: "forced address keeps the name when no from_name", set: core.Settings{smtpdrv.KeyFromEmail: "site@example.com", smtpdrv.KeyForceFrom: true},
			from: core.Address{Name: "Shop", Email: "shop@example.com"}, wantFrom: "site@example.com", wantName: "Shop"},
		{name: "no sender anywhere is a permanent error", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := smtpsink.Start(t)
			tr := newTransport(t, settings(sink, tc.set), core.DriverEnv{}, smtpdrv.Options{})
			msg := message()
			msg.From = tc.from
			_, err := tr.Send(context.Background(), msg)
			if tc.wantErr {
				checkClass(t, err, false)
				if core.ErrorCode(err) != core.EINVALID {
					t.Errorf("error code = %q, want %q", core.ErrorCode(err), core.EINVALID)
				}
				return
			}
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			m := sink.Messages()[0]
			p, err := mail.ReadMessage(bytes.NewReader(m.Data))
			if err != nil {
				t.Fatal(err)
			}
			from, err := p.Header.AddressList("From")
			if err != nil || len(from) != 1 {
				t.Fatalf("From: %v %v", from, err)
			}
			if m.From != tc.wantFrom || from[0].Address != tc.wantFrom || from[0].Name != tc.wantName {
				t.Errorf("envelope %q, header %q <%s>; want %q <%s>", m.From, from[0].Name, from[0].Address, tc.wantName, tc.wantFrom)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	tests := []struct {
		name      string
		password  string
		wantErr   bool
		temporary bool
	}{
		{name: "accepted", password: "secret"},
		{name: "rejected", password: "wrong", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := smtpsink.Start(t, smtpsink.WithAuth("user", "secret"), smtpsink.WithSTARTTLS())
			rec := &transcripts{}
			set := settings(sink, core.Settings{smtpdrv.KeyEncryption: smtpdrv.EncryptionTLS, smtpdrv.KeyAuth: true,
				smtpdrv.KeyUsername: "user", smtpdrv.KeyPassword: tc.password})
			tr := newTransport(t, set, core.DriverEnv{Transcript: rec}, smtpdrv.Options{RootCAs: sink.CertPool()})
			err := tr.Verify(context.Background())
			if tc.wantErr {
				checkClass(t, err, tc.temporary)
			} else if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if n := len(sink.Messages()); n != 0 {
				t.Errorf("Verify sent %d messages", n)
			}
			wantAuths := 1
			if tc.wantErr {
				wantAuths = 0
			}
			if sink.Auths() != wantAuths {
				t.Errorf("auths = %d, want %d", sink.Auths(), wantAuths)
			}
			text := rec.all(7)
			for _, want := range []string{"EHLO", "STARTTLS", "AUTH"} {
				if !strings.Contains(text, want) {
					t.Errorf("transcript lacks %q:\n%s", want, text)
				}
			}
			for _, secret := range []string{tc.password, base64.StdEncoding.EncodeToString([]byte("\x00user\x00" + tc.password))} {
				if strings.Contains(text, secret) {
					t.Errorf("transcript leaks a credential %q:\n%s", secret, text)
				}
			}
		})
	}
}

func TestTranscriptOfSend(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.WithAuth("user@example.com", "hunter2"))
	rec := &transcripts{}
	set := settings(sink, core.Settings{smtpdrv.KeyAuth: true, smtpdrv.KeyUsername: "user@example.com", smtpdrv.KeyPassword: "hunter2"})
	tr := newTransport(t, set, core.DriverEnv{Transcript: rec}, smtpdrv.Options{})
	if _, err := tr.Send(context.Background(), message()); err != nil {
		t.Fatal(err)
	}
	text := rec.all(7)
	for _, want := range []string{"EHLO", "AUTH", "MAIL FROM:<shop@example.com>", "RCPT TO:<ann@example.org>", "250 ", "queued as SINK1"} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %q:\n%s", want, text)
		}
	}
	for _, secret := range []string{"hunter2", base64.StdEncoding.EncodeToString([]byte("hunter2")),
		base64.StdEncoding.EncodeToString([]byte("\x00user@example.com\x00hunter2"))} {
		if strings.Contains(text, secret) {
			t.Errorf("transcript leaks %q:\n%s", secret, text)
		}
	}
}

func TestSettingsValidation(t *testing.T) {
	d, ok := core.LookupDriver(smtpdrv.Slug)
	if !ok {
		t.Fatal("smtp driver is not registered")
	}
	drivertest.ValidateCases(t, d, []drivertest.SchemaCase{
		{Name: "minimal with auth", Settings: core.Settings{"host": "smtp.example.com", "username": "u", "password": "p"}},
		{Name: "no auth needs no credentials", Settings: core.Settings{"host": "mx.example.com", "auth": false, "port": float64(25), "encryption": "none"}},
		{Name: "host missing", Settings: core.Settings{"username": "u", "password": "p"}, WantFields: []string{"host"}},
		{Name: "auth default needs credentials", Settings: core.Settings{"host": "smtp.example.com"}, WantFields: []string{"password", "username"}},
		{Name: "port out of range", Settings: core.Settings{"host": "h.example", "auth": false, "port": float64(70000)}, WantFields: []string{"port"}},
		{Name: "port zero", Settings: core.Settings{"host": "h.example", "auth": false, "port": float64(0)}, WantFields: []string{"port"}},
		{Name: "port not a number", Settings: core.Settings{"host": "h.example", "auth": false, "port": "abc"}, WantFields: []string{"port"}},
		{Name: "bad encryption", Settings: core.Settings{"host": "h.example", "auth": false, "encryption": "starttls"}, WantFields: []string{"encryption"}},
		{Name: "timeout too long", Settings: core.Settings{"host": "h.example", "auth": false, "timeout": float64(301)}, WantFields: []string{"timeout"}},
		{Name: "bad from email", Settings: core.Settings{"host": "h.example", "auth": false, "from_email": "nope"}, WantFields: []string{"from_email"}},
		{Name: "force from needs from email", Settings: core.Settings{"host": "h.example", "auth": false, "force_from": true}, WantFields: []string{"from_email"}},
		{Name: "host with scheme", Settings: core.Settings{"host": "smtp://h.example", "auth": false}, WantFields: []string{"host"}},
		{Name: "host with port", Settings: core.Settings{"host": "h.example:587", "auth": false}, WantFields: []string{"host"}},
		{Name: "ipv6 host", Settings: core.Settings{"host": "::1", "auth": false}},
		{Name: "helo with space", Settings: core.Settings{"host": "h.example", "auth": false, "helo": "my host"}, WantFields: []string{"helo"}},
		{Name: "unknown key", Settings: core.Settings{"host": "h.example", "auth": false, "api_key": "x"}, WantFields: []string{"api_key"}},
		{Name: "auth must be boolean", Settings: core.Settings{"host": "h.example", "auth": "yes"}, WantFields: []string{"auth"}},
	}, func(t *testing.T, s core.Settings) {
		if s.Int("port", 0) < 1 || s.String("encryption") == "" || s.Int("timeout", 0) != 30 {
			t.Errorf("defaults not applied: %v", s)
		}
	})
}

func TestDriverDescription(t *testing.T) {
	d, ok := core.LookupDriver(smtpdrv.Slug)
	if !ok {
		t.Fatal("smtp driver is not registered")
	}
	if f := d.Field(smtpdrv.KeyPassword); f == nil || !f.Sensitive || f.Constant != "MAILSVC_SMTP_PASSWORD" {
		t.Errorf("password field = %+v", f)
	}
	if f := d.Field(smtpdrv.KeyUsername); f == nil || !f.Sensitive || f.Constant != "MAILSVC_SMTP_USERNAME" {
		t.Errorf("username field = %+v", f)
	}
	presets := map[string]core.Settings{}
	for _, p := range d.Presets {
		presets[p.Slug] = p.Settings
		if err := d.ValidateSettings(p.Settings.Clone()); core.ErrorFields(err)["host"] != "" || core.ErrorFields(err)["port"] != "" {
			t.Errorf("preset %s has a bad host or port: %v", p.Slug, err)
		}
	}
	want := map[string]string{
		"gmail": "smtp.gmail.com:587:tls", "outlook": "smtp.office365.com:587:tls", "zoho": "smtp.zoho.com:465:ssl",
		"ses-us-east-1": "email-smtp.us-east-1.amazonaws.com:587:tls", "mailgun": "smtp.mailgun.org:587:tls",
		"sendgrid": "smtp.sendgrid.net:587:tls", "postmark": "smtp.postmarkapp.com:587:tls",
		"brevo": "smtp-relay.brevo.com:587:tls", "mailjet": "in-v3.mailjet.com:587:tls",
		"sparkpost": "smtp.sparkpostmail.com:587:tls", "sparkpost-eu": "smtp.eu.sparkpostmail.com:587:tls",
		"resend": "smtp.resend.com:465:ssl", "smtp2go": "mail.smtp2go.com:587:tls", "mailersend": "smtp.mailersend.net:587:tls",
		"elasticemail": "smtp.elasticemail.com:587:tls", "mandrill": "smtp.mandrillapp.com:587:tls",
		"mailtrap": "live.smtp.mailtrap.io:587:tls", "sendlayer": "smtp.sendlayer.net:587:tls",
		"smtpcom": "send.smtp.com:587:tls", "emailit": "smtp.emailit.com:587:tls",
		"cloudflare": "smtp.mx.cloudflare.net:465:ssl",
	}
	for slug, hp := range want {
		s, ok := presets[slug]
		if !ok {
			t.Errorf("preset %s missing", slug)
			continue
		}
		if got := fmt.Sprintf("%s:%d:%s", s.String("host"), s.Int("port", 0), s.String("encryption")); got != hp {
			t.Errorf("preset %s = %s, want %s", slug, got, hp)
		}
	}
	for slug, user := range map[string]string{"sparkpost": "SMTP_Injection", "sparkpost-eu": "SMTP_Injection", "resend": "resend", "mailtrap": "api", "cloudflare": "api_token"} {
		if got := presets[slug].String("username"); got != user {
			t.Errorf("%s preset username = %q, want %s", slug, got, user)
		}
	}
	if presets["sendgrid"].String("username") != "apikey" {
		t.Errorf("sendgrid preset username = %q, want apikey", presets["sendgrid"].String("username"))
	}
	if len(d.Rules) == 0 {
		t.Error("driver has no rules")
	}
}

func TestNewRejectsBadSettings(t *testing.T) {
	tests := []struct {
		name string
		set  core.Settings
	}{
		{"no host", core.Settings{"auth": false}},
		{"auth without password", core.Settings{"host": "h.example", "username": "u"}},
		{"bad encryption", core.Settings{"host": "h.example", "auth": false, "encryption": "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := smtpdrv.New(&core.Connection{Settings: tc.set}, core.DriverEnv{})
			if core.ErrorCode(err) != core.EINVALID {
				t.Errorf("New error = %v, want a validation error", err)
			}
		})
	}
}

func BenchmarkSendReusedConnection(b *testing.B) {
	sink, err := smtpsink.New()
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	tr := newTransport(b, settings(sink, nil), core.DriverEnv{}, smtpdrv.Options{})
	msg := message()
	msg.Text = strings.Repeat("0123456789abcdef\n", 64) // about 1 KB
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := tr.Send(context.Background(), msg); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
	if sink.Connections() != 1 {
		b.Errorf("connections = %d, want 1", sink.Connections())
	}
	sink.Reset()
}
