package smtpsink_test

import (
	"crypto/tls"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// dial connects a go-smtp client to the sink in the sink's TLS mode.
func dial(t *testing.T, s *smtpsink.Sink, mode smtpsink.TLSMode) *smtp.Client {
	t.Helper()
	cfg := &tls.Config{RootCAs: s.CertPool(), ServerName: "127.0.0.1"}
	var (
		c   *smtp.Client
		err error
	)
	switch mode {
	case smtpsink.TLSStartTLS:
		c, err = smtp.DialStartTLS(s.Addr(), cfg)
	case smtpsink.TLSImplicit:
		c, err = smtp.DialTLS(s.Addr(), cfg)
	default:
		c, err = smtp.Dial(s.Addr())
	}
	if err != nil {
		t.Fatalf("dial sink: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Hello("client.test"); err != nil {
		t.Fatalf("hello: %v", err)
	}
	return c
}

const body = "Subject: hi\r\n\r\nhello\r\n"

func TestSinkRecordsMessages(t *testing.T) {
	tests := []struct {
		name    string
		opts    []smtpsink.Option
		mode    smtpsink.TLSMode
		auth    sasl.Client
		wantTLS bool
		user    string
	}{
		{name: "plain"},
		{name: "starttls", opts: []smtpsink.Option{smtpsink.WithSTARTTLS()}, mode: smtpsink.TLSStartTLS, wantTLS: true},
		{name: "implicit tls", opts: []smtpsink.Option{smtpsink.WithImplicitTLS()}, mode: smtpsink.TLSImplicit, wantTLS: true},
		{name: "auth plain", opts: []smtpsink.Option{smtpsink.WithAuth("u1", "p1")}, auth: sasl.NewPlainClient("", "u1", "p1"), user: "u1"},
		{name: "auth login over tls", opts: []smtpsink.Option{smtpsink.WithAuth("u2", "p2"), smtpsink.WithImplicitTLS()},
			mode: smtpsink.TLSImplicit, auth: sasl.NewLoginClient("u2", "p2"), user: "u2", wantTLS: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := smtpsink.Start(t, tc.opts...)
			c := dial(t, s, tc.mode)
			if tc.auth != nil {
				if err := c.Auth(tc.auth); err != nil {
					t.Fatalf("auth: %v", err)
				}
			}
			reply, err := smtpsink.Send(c, "a@example.com", []string{"b@example.org", "c@example.org"}, body)
			if err != nil {
				t.Fatalf("send: %v", err)
			}
			msgs, err := s.WaitFor(1, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			m := msgs[0]
			if m.From != "a@example.com" || strings.Join(m.To, ",") != "b@example.org,c@example.org" {
				t.Errorf("envelope = %q %v", m.From, m.To)
			}
			if string(m.Data) != body {
				t.Errorf("data = %q, want %q", m.Data, body)
			}
			if m.TLS != tc.wantTLS || m.Username != tc.user || m.Helo != "client.test" || m.Conn != 1 {
				t.Errorf("got TLS=%v user=%q helo=%q conn=%d, want TLS=%v user=%q helo=client.test conn=1",
					m.TLS, m.Username, m.Helo, m.Conn, tc.wantTLS, tc.user)
			}
			if !strings.Contains(reply, "queued as "+m.QueueID) || m.QueueID == "" {
				t.Errorf("reply %q does not name queue id %q", reply, m.QueueID)
			}
		})
	}
}

func smtpCode(err error) int {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

func TestSinkAuthRefusals(t *testing.T) {
	tests := []struct {
		name     string
		auth     sasl.Client
		wantCode int // code of the failing step
		wantAuth bool
	}{
		{name: "wrong password plain", auth: sasl.NewPlainClient("", "user", "nope"), wantCode: 535},
		{name: "wrong user login", auth: sasl.NewLoginClient("other", "secret"), wantCode: 535},
		{name: "no auth then mail", auth: nil, wantCode: 530},
		{name: "right credentials", auth: sasl.NewPlainClient("", "user", "secret"), wantAuth: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := smtpsink.Start(t, smtpsink.WithAuth("user", "secret"))
			c := dial(t, s, smtpsink.TLSNone)
			var err error
			if tc.auth != nil {
				err = c.Auth(tc.auth)
			}
			if err == nil {
				_, err = smtpsink.Send(c, "a@example.com", []string{"b@example.org"}, body)
			}
			if tc.wantAuth {
				if err != nil {
					t.Fatalf("send: %v", err)
				}
				if s.Auths() != 1 || s.AuthFailures() != 0 {
					t.Errorf("auths=%d failures=%d, want 1 and 0", s.Auths(), s.AuthFailures())
				}
				return
			}
			if got := smtpCode(err); got != tc.wantCode {
				t.Fatalf("error %v has code %d, want %d", err, got, tc.wantCode)
			}
			if n := len(s.Messages()); n != 0 {
				t.Errorf("sink accepted %d messages", n)
			}
		})
	}
}

func TestSinkFaults(t *testing.T) {
	tests := []struct {
		name     string
		inject   func(s *smtpsink.Sink)
		wantCode int
		wantDrop bool
	}{
		{name: "temporary", inject: func(s *smtpsink.Sink) { s.FailNext(1, 451, "try later") }, wantCode: 451},
		{name: "permanent", inject: func(s *smtpsink.Sink) { s.FailNext(1, 554, "rejected") }, wantCode: 554},
		{name: "dropped", inject: func(s *smtpsink.Sink) { s.DropNext(1) }, wantDrop: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := smtpsink.Start(t)
			tc.inject(s)
			c := dial(t, s, smtpsink.TLSNone)
			_, err := smtpsink.Send(c, "a@example.com", []string{"b@example.org"}, body)
			if err == nil {
				t.Fatal("faulty send succeeded")
			}
			if tc.wantDrop {
				if smtpCode(err) != 0 {
					t.Errorf("dropped connection gave an SMTP reply: %v", err)
				}
			} else if got := smtpCode(err); got != tc.wantCode {
				t.Errorf("code = %d, want %d (%v)", got, tc.wantCode, err)
			}
			if n := len(s.Messages()); n != 0 {
				t.Errorf("sink recorded %d messages from a failed send", n)
			}
			// The fault is used up: a fresh connection delivers.
			c2 := dial(t, s, smtpsink.TLSNone)
			if _, err := smtpsink.Send(c2, "a@example.com", []string{"b@example.org"}, body); err != nil {
				t.Fatalf("send after fault: %v", err)
			}
			if n := len(s.Messages()); n != 1 {
				t.Errorf("sink has %d messages, want 1", n)
			}
		})
	}
}

func TestSinkStallAndReuse(t *testing.T) {
	s := smtpsink.Start(t)
	s.StallNext(1, 300*time.Millisecond)
	c := dial(t, s, smtpsink.TLSNone)
	start := time.Now()
	for i := 0; i < 3; i++ {
		if _, err := smtpsink.Send(c, "a@example.com", []string{"b@example.org"}, body); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Errorf("stalled send returned before the stall")
	}
	if s.Connections() != 1 {
		t.Errorf("connections = %d, want 1", s.Connections())
	}
	for _, m := range s.Messages() {
		if m.Conn != 1 {
			t.Errorf("message on connection %d, want 1", m.Conn)
		}
	}
	s.DropConnections()
	if err := c.Noop(); err == nil {
		t.Errorf("NOOP on a dropped connection succeeded")
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.ActiveConnections() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s.ActiveConnections() != 0 {
		t.Errorf("active connections = %d after DropConnections", s.ActiveConnections())
	}
}

func TestSinkConcurrentClients(t *testing.T) {
	s := smtpsink.Start(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := smtp.Dial(s.Addr())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			_, err = smtpsink.Send(c, "a@example.com", []string{"b@example.org"}, body)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("send: %v", err)
		}
	}
	if got := len(s.Messages()); got != n {
		t.Errorf("messages = %d, want %d", got, n)
	}
	if s.Connections() != n {
		t.Errorf("connections = %d, want %d", s.Connections(), n)
	}
}

func TestSinkWaitForTimesOut(t *testing.T) {
	s := smtpsink.Start(t)
	msgs, err := s.WaitFor(1, 50*time.Millisecond)
	if err == nil || len(msgs) != 0 {
		t.Errorf("WaitFor on an idle sink = %d messages, %v; want none and an error", len(msgs), err)
	}
}

// WithoutPipelining takes PIPELINING, and only it, out of the EHLO
// reply, on plain and implicit TLS sessions, and the sink still takes
// messages; it is refused with STARTTLS.
func TestWithoutPipelining(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []smtpsink.Option
		mode smtpsink.TLSMode
	}{
		{"plain", nil, smtpsink.TLSNone},
		{"implicit tls", []smtpsink.Option{smtpsink.WithImplicitTLS()}, smtpsink.TLSImplicit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, off := range []bool{false, true} {
				opts := tc.opts
				if off {
					opts = append(opts, smtpsink.WithoutPipelining())
				}
				s := smtpsink.Start(t, opts...)
				c := dial(t, s, tc.mode)
				if ok, _ := c.Extension("PIPELINING"); ok == off {
					t.Errorf("WithoutPipelining %v: PIPELINING offered = %v", off, ok)
				}
				for _, ext := range []string{"8BITMIME", "ENHANCEDSTATUSCODES", "SIZE"} {
					if ok, _ := c.Extension(ext); !ok {
						t.Errorf("WithoutPipelining %v: %s not offered", off, ext)
					}
				}
				if _, err := smtpsink.Send(c, "a@example.com", []string{"b@example.org"}, body); err != nil {
					t.Fatalf("WithoutPipelining %v: send: %v", off, err)
				}
				if got, err := s.WaitFor(1, 5*time.Second); err != nil || string(got[0].Data) != body {
					t.Errorf("WithoutPipelining %v: received %v (%v)", off, got, err)
				}
			}
		})
	}
	if _, err := smtpsink.New(smtpsink.WithSTARTTLS(), smtpsink.WithoutPipelining()); err == nil {
		t.Error("WithoutPipelining with WithSTARTTLS was accepted")
	}
}
