package smtpserver

import (
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"

	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/core"
)

// fakeAuth accepts the passwords it holds; login "db-down" fails as a
// database error would.
type fakeAuth struct {
	users map[string]fakeUser
	mu    sync.Mutex
	ips   []string
}

type fakeUser struct {
	password string
	caps     []string
}

func (a *fakeAuth) CheckApplicationPassword(ctx context.Context, login, password string) (*core.User, error) {
	a.mu.Lock()
	ip, _ := ctx.Value(ipKey{}).(string)
	a.ips = append(a.ips, ip)
	a.mu.Unlock()
	if login == "db-down" {
		return nil, errors.New("dial tcp: connection refused")
	}
	u, ok := a.users[login]
	if !ok || u.password != password {
		return nil, core.Errorf(core.EUNAUTHORIZED, "The provided password is an invalid application password.")
	}
	caps := map[string]bool{}
	for _, c := range u.caps {
		caps[c] = true
	}
	return &core.User{Login: login, Caps: caps}, nil
}

type ipKey struct{}

// fakeQueue records what it queues; err, when set, is returned instead.
type fakeQueue struct {
	mu   sync.Mutex
	logs []*core.Log
	err  error
}

func (q *fakeQueue) Enqueue(_ context.Context, l *core.Log) (int64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return 0, q.err
	}
	if err := l.Message.Validate(); err != nil {
		return 0, err
	}
	q.logs = append(q.logs, l)
	return int64(len(q.logs) + 41), nil
}

func newAuth() *fakeAuth {
	return &fakeAuth{users: map[string]fakeUser{
		"admin":      {password: "abcd EFGH ijkl MNOP qrst UVWX", caps: []string{"manage_options", "read"}},
		"subscriber": {password: "sub-password", caps: []string{"read"}},
	}}
}

func start(t testing.TB, cfg Config, auth Authenticator, q Queue) *Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.WithRemoteIP = func(ctx context.Context, ip string) context.Context { return context.WithValue(ctx, ipKey{}, ip) }
	s, err := Start(cfg, auth, q)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

func dial(t *testing.T, s *Server) *smtp.Client {
	t.Helper()
	c, err := smtp.Dial(s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func code(err error) int {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

const plainMessage = "From: Site <site@example.org>\r\nTo: Al <al@example.org>\r\nSubject: Hello\r\n\r\nBody text.\r\n"

func TestAuth(t *testing.T) {
	tests := []struct {
		name     string
		client   sasl.Client
		wantCode int // 0: accepted
	}{
		{"PLAIN administrator", sasl.NewPlainClient("", "admin", "abcd EFGH ijkl MNOP qrst UVWX"), 0},
		{"LOGIN administrator", sasl.NewLoginClient("admin", "abcd EFGH ijkl MNOP qrst UVWX"), 0},
		{"PLAIN subscriber lacks the capability", sasl.NewPlainClient("", "subscriber", "sub-password"), 535},
		{"LOGIN subscriber lacks the capability", sasl.NewLoginClient("subscriber", "sub-password"), 535},
		{"PLAIN wrong password", sasl.NewPlainClient("", "admin", "wrong"), 535},
		{"LOGIN unknown user", sasl.NewLoginClient("nobody", "x"), 535},
		{"PLAIN identity differs from the user", sasl.NewPlainClient("other", "admin", "abcd EFGH ijkl MNOP qrst UVWX"), 535},
		{"database down", sasl.NewPlainClient("", "db-down", "x"), 454},
	}
	auth := newAuth()
	s := start(t, Config{}, auth, &fakeQueue{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, s)
			err := c.Auth(tt.client)
			if got := code(err); got != tt.wantCode || (tt.wantCode == 0 && err != nil) {
				t.Fatalf("AUTH: %v (code %d), want code %d", err, got, tt.wantCode)
			}
			// After a failure the session is still unauthenticated.
			err = c.Mail("site@example.org", nil)
			if tt.wantCode == 0 && err != nil {
				t.Errorf("MAIL after AUTH: %v", err)
			}
			if tt.wantCode != 0 && code(err) != 530 {
				t.Errorf("MAIL after failed AUTH: %v, want 530", err)
			}
		})
	}
	for _, ip := range auth.ips {
		if ip != "127.0.0.1" {
			t.Errorf("remote IP given to the authenticator: %q", ip)
		}
	}
}

// TestAuthCapabilityFilter: the mail_svc_rest_capability filter decides,
// at each AUTH, what the user must hold, as it does for the REST routes.
func TestAuthCapabilityFilter(t *testing.T) {
	auth := newAuth()
	auth.users["clerk"] = fakeUser{password: "clerk-password", caps: []string{"read", "manage_mail"}}
	var required atomic.Value // the test sets it, the session reads it
	hooks := &core.Hooks{}
	hooks.AddFilter(core.HookRESTCapability, func(v any, args ...any) any {
		if v != core.DefaultCapability || len(args) != 1 || args[0] != "smtp" {
			t.Errorf("filter given %v %v, want the default capability and \"smtp\"", v, args)
		}
		return required.Load()
	})
	s := start(t, Config{Hooks: hooks}, auth, &fakeQueue{})
	for _, tt := range []struct {
		required, login, password string
		wantCode                  int
	}{
		{"manage_mail", "clerk", "clerk-password", 0},
		{"manage_mail", "admin", "abcd EFGH ijkl MNOP qrst UVWX", 535},
		{"manage_options", "clerk", "clerk-password", 535},
		{"manage_options", "admin", "abcd EFGH ijkl MNOP qrst UVWX", 0},
	} {
		required.Store(tt.required)
		err := dial(t, s).Auth(sasl.NewPlainClient("", tt.login, tt.password))
		if got := code(err); got != tt.wantCode || (tt.wantCode == 0 && err != nil) {
			t.Errorf("%s with the filter requiring %s: %v, want code %d", tt.login, tt.required, err, tt.wantCode)
		}
	}
}

// admin authenticates c as the administrator.
func admin(t *testing.T, c *smtp.Client) {
	t.Helper()
	if err := c.Auth(sasl.NewPlainClient("", "admin", "abcd EFGH ijkl MNOP qrst UVWX")); err != nil {
		t.Fatalf("AUTH: %v", err)
	}
}

func TestSubmission(t *testing.T) {
	tests := []struct {
		name      string
		auth      bool
		from      string
		to        []string
		data      string
		queueErr  error
		wantCode  int
		wantReply string
		check     func(t *testing.T, l *core.Log)
	}{
		{name: "MAIL before AUTH", from: "site@example.org", to: []string{"al@example.org"}, data: plainMessage, wantCode: 530},
		{name: "queued with the envelope", auth: true, from: "bounce@example.org", to: []string{"al@example.org", "hidden@example.org"}, data: plainMessage,
			wantReply: "2.0.0 OK: queued as 42", check: func(t *testing.T, l *core.Log) {
				m := l.Message
				if l.Source != "smtp" || m.Subject != "Hello" || m.Text != "Body text.\n" || m.From.Email != "site@example.org" {
					t.Errorf("queued %+v", l)
				}
				if len(m.To) != 1 || m.To[0] != (core.Address{Name: "Al", Email: "al@example.org"}) || len(m.Bcc) != 1 || m.Bcc[0].Email != "hidden@example.org" {
					t.Errorf("recipients To %v Bcc %v", m.To, m.Bcc)
				}
			}},
		{name: "no From header: the envelope sender", auth: true, from: "bounce@example.org", to: []string{"al@example.org"}, data: "To: al@example.org\r\nSubject: x\r\n\r\nx\r\n",
			wantReply: "2.0.0 OK: queued as 42", check: func(t *testing.T, l *core.Log) {
				if l.Message.From.Email != "bounce@example.org" {
					t.Errorf("From %v", l.Message.From)
				}
			}},
		{name: "bad recipient", auth: true, from: "a@example.org", to: []string{"a..b@example.org"}, data: plainMessage, wantCode: 553},
		{name: "oversize", auth: true, from: "a@example.org", to: []string{"al@example.org"}, data: plainMessage + strings.Repeat(strings.Repeat("x", 70)+"\r\n", 40), wantCode: 552},
		{name: "line too long", auth: true, from: "a@example.org", to: []string{"al@example.org"}, data: plainMessage + strings.Repeat("x", 2500) + "\r\n", wantCode: 554},
		{name: "unparsable MIME", auth: true, from: "a@example.org", to: []string{"al@example.org"}, data: "Content-Type: multipart/mixed\r\n\r\nx\r\n", wantCode: 554},
		{name: "database error", auth: true, from: "a@example.org", to: []string{"al@example.org"}, data: plainMessage, queueErr: errors.New("Error 2006: MySQL server has gone away"), wantCode: 451},
		{name: "invalid message", auth: true, from: "", to: []string{"al@example.org"}, data: "To: al@example.org\r\n\r\nx\r\n", wantCode: 554},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &fakeQueue{err: tt.queueErr}
			s := start(t, Config{MaxBytes: 2048}, newAuth(), q)
			c := dial(t, s)
			if tt.auth {
				admin(t, c)
			}
			reply, err := smtpsink.Send(c, tt.from, tt.to, tt.data)
			if tt.wantCode != 0 {
				if code(err) != tt.wantCode {
					t.Fatalf("got %q, %v; want code %d", reply, err, tt.wantCode)
				}
				if len(q.logs) != 0 {
					t.Errorf("queued %d messages", len(q.logs))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if reply != tt.wantReply {
				t.Errorf("reply %q, want %q", reply, tt.wantReply)
			}
			if len(q.logs) != 1 {
				t.Fatalf("queued %d messages", len(q.logs))
			}
			tt.check(t, q.logs[0])
		})
	}
}

func TestSizeAnnounced(t *testing.T) {
	s := start(t, Config{MaxBytes: 4096}, newAuth(), &fakeQueue{})
	c := dial(t, s)
	if err := c.Hello("client.test"); err != nil {
		t.Fatal(err)
	}
	if n, ok := c.MaxMessageSize(); !ok || n != 4096 {
		t.Errorf("SIZE %d %v, want 4096", n, ok)
	}
	admin(t, c)
	if err := c.Mail("a@example.org", &smtp.MailOptions{Size: 5000}); code(err) != 552 {
		t.Errorf("MAIL SIZE=5000: %v, want 552", err)
	}
}

func TestTLSRules(t *testing.T) {
	cert, pool := selfSigned(t)
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{cert}}

	t.Run("AUTH refused on plain text when TLS is required, accepted after STARTTLS", func(t *testing.T) {
		q := &fakeQueue{}
		s := start(t, Config{TLS: tlsCfg, RequireTLS: true}, newAuth(), q)
		c := dial(t, s)
		if err := c.Hello("client.test"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := c.Extension("AUTH"); ok {
			t.Error("AUTH advertised before STARTTLS")
		}
		if ok, _ := c.Extension("STARTTLS"); !ok {
			t.Fatal("STARTTLS not advertised")
		}
		if err := c.Auth(sasl.NewPlainClient("", "admin", "abcd EFGH ijkl MNOP qrst UVWX")); err == nil {
			t.Fatal("AUTH accepted over plain text")
		}
		tc := dialStartTLS(t, s, pool)
		admin(t, tc)
		if reply, err := smtpsink.Send(tc, "a@example.org", []string{"al@example.org"}, plainMessage); err != nil || reply != "2.0.0 OK: queued as 42" {
			t.Fatalf("send over TLS: %q %v", reply, err)
		}
	})
	t.Run("a non-loopback listener without TLS is refused", func(t *testing.T) {
		if _, err := Start(Config{Addr: "0.0.0.0:0"}, newAuth(), &fakeQueue{}); err == nil || !strings.Contains(err.Error(), "needs TLS") {
			t.Fatalf("Start: %v", err)
		}
	})
	t.Run("no STARTTLS without a certificate", func(t *testing.T) {
		s := start(t, Config{}, newAuth(), &fakeQueue{})
		c := dial(t, s)
		if err := c.Hello("client.test"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := c.Extension("STARTTLS"); ok {
			t.Error("STARTTLS advertised without a certificate")
		}
		if ok, mechs := c.Extension("AUTH"); !ok || mechs != "PLAIN LOGIN" {
			t.Errorf("AUTH on loopback: %v %q", ok, mechs)
		}
	})
}

func dialStartTLS(t *testing.T, s *Server, pool *x509.CertPool) *smtp.Client {
	t.Helper()
	c, err := smtp.DialStartTLS(s.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:2525": true, "[::1]:25": true, "localhost:587": true, "127.8.0.1:25": true,
		"0.0.0.0:587": false, ":587": false, "[::]:587": false, "192.0.2.1:25": false, "mail.example.org:587": false, "nonsense": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestShutdownCutsIdleSessions(t *testing.T) {
	s, err := Start(Config{Addr: "127.0.0.1:0"}, newAuth(), &fakeQueue{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := smtp.Dial(s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hello("idle.test"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(ctx) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return with an idle session open")
	}
	if err := c.Noop(); err == nil {
		t.Error("the idle session survived Shutdown")
	}
	if _, err := net.Dial("tcp", s.Addr().String()); err == nil {
		t.Error("still accepting connections")
	}
}

// selfSigned returns a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	cert, pool, err := smtpsink.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	return cert, pool
}

// The listener offers SMTPUTF8 and takes a non-ASCII address only after
// MAIL FROM's SMTPUTF8 parameter (RFC 6531); the queued message keeps
// its header block under the listener's Received field.
func TestSMTPUTF8AndTrace(t *testing.T) {
	q := &fakeQueue{}
	s := start(t, Config{Domain: "mx.example.org"}, newAuth(), q)
	c := dial(t, s)
	if ok, _ := c.Extension("SMTPUTF8"); !ok {
		t.Fatal("EHLO does not offer SMTPUTF8")
	}
	admin(t, c)
	if err := c.Mail("jürgen@example.de", nil); code(err) != 553 {
		t.Fatalf("MAIL without SMTPUTF8: %v, want 553", err)
	}
	if err := c.Mail("site@example.org", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Rcpt("zoë@example.com", nil); code(err) != 553 {
		t.Fatalf("RCPT without SMTPUTF8: %v, want 553", err)
	}
	if err := c.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := c.Mail("jürgen@example.de", &smtp.MailOptions{UTF8: true}); err != nil {
		t.Fatalf("MAIL with SMTPUTF8: %v", err)
	}
	if err := c.Rcpt("zoë@example.com", nil); err != nil {
		t.Fatalf("RCPT with SMTPUTF8: %v", err)
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	data := "Received: from a.example by b.example; Thu, 26 Nov 2026 10:00:00 +0000\r\nFrom: Jürgen <jürgen@example.de>\r\nTo: List <list@example.net>\r\nSubject: Grüße\r\n\r\nHallo.\r\n"
	if _, err := io.WriteString(w, data); err != nil {
		t.Fatal(err)
	}
	if _, err := w.CloseWithResponse(); err != nil {
		t.Fatalf("DATA: %v", err)
	}
	if len(q.logs) != 1 {
		t.Fatalf("queued %d messages", len(q.logs))
	}
	m := q.logs[0].Message
	head, _, _ := strings.Cut(data, "\r\n\r\n")
	re := regexp.MustCompile(`^Received: from localhost \(([^ ()]+ )?\[127\.0\.0\.1\]\)\r\n\tby mx\.example\.org \(mailsvc\) with ESMTPA id [A-Z2-7]{12}\r\n\tfor <zoë@example\.com>; [^\r]+\r\n`)
	loc := re.FindStringIndex(m.RawHeader)
	if loc == nil || m.RawHeader[loc[1]:] != head+"\r\n" {
		t.Errorf("RawHeader %q, want the listener's Received field over %q", m.RawHeader, head)
	}
	if len(m.Bcc) != 1 || m.Bcc[0].Email != "zoë@example.com" || len(m.To) != 0 {
		t.Errorf("envelope To %v Bcc %v", m.To, m.Bcc)
	}
}
