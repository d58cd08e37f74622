package health_test

import (
	"context"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	_ "github.com/mailsvc/mailsvc/drivers/smtp"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// relay forwards one fixed loopback address to an SMTP sink and can be
// stopped (the address refuses connections) and started again on the
// same address, as a server that goes away and comes back.
type relay struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func startRelay(t *testing.T, target string) *relay {
	r := &relay{t: t, target: target}
	r.start("127.0.0.1:0")
	t.Cleanup(r.stop)
	return r
}

func (r *relay) start(addr string) {
	r.t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		r.t.Fatalf("relay listen %s: %v", addr, err)
	}
	r.mu.Lock()
	r.ln, r.addr = ln, ln.Addr().String()
	r.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", r.target)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, c, up)
			r.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

// stop closes the listener and every relayed connection.
func (r *relay) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

func (r *relay) port() int64 {
	_, p, _ := net.SplitHostPort(r.addr)
	n, _ := strconv.ParseInt(p, 10, 64)
	return n
}

// A real SMTP server behind the real smtp driver: stopped, the connection
// goes down with one alert; restarted on the same address, it recovers
// with one alert.
func TestSMTPServerStoppedAndRestarted(t *testing.T) {
	f := newFixture()
	sink := smtpsink.Start(t, smtpsink.WithAuth("mailer", "s3cret-pw"))
	r := startRelay(t, sink.Addr())
	enc, _ := f.cipher.Encrypt("s3cret-pw")
	c := &core.Connection{Name: "Sink", Driver: "smtp", IsActive: true, HealthStatus: core.HealthUnknown, Settings: core.Settings{
		"host": "127.0.0.1", "port": r.port(), "encryption": "none", "auth": true,
		"username": "mailer", "password": enc, "timeout": int64(5),
	}}
	if err := f.store.CreateConnection(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name       string
		act        func()
		wantStatus string
		wantEvents []string
		wantError  string
	}{
		{name: "server up", wantStatus: core.HealthHealthy},
		{name: "server stopped", act: r.stop, wantStatus: core.HealthDown, wantEvents: []string{core.EventConnectionDown}, wantError: "refused"},
		{name: "still stopped", wantStatus: core.HealthDown, wantError: "refused"},
		{name: "server back on the same address", act: func() { r.start(r.addr) }, wantStatus: core.HealthHealthy,
			wantEvents: []string{core.EventConnectionRecovered}},
		{name: "still up", wantStatus: core.HealthHealthy},
	}
	authsBefore := 0
	for _, st := range steps {
		if st.act != nil {
			st.act()
		}
		if err := f.checker.CheckAll(context.Background()); err != nil {
			t.Fatalf("%s: CheckAll: %v", st.name, err)
		}
		got := f.store.Raw(c.ID)
		if got.HealthStatus != st.wantStatus || !strings.Contains(got.LastError, st.wantError) || (st.wantError == "") != (got.LastError == "") {
			t.Fatalf("%s: status %q, error %q; want %q, error saying %q", st.name, got.HealthStatus, got.LastError, st.wantStatus, st.wantError)
		}
		var events []string
		for _, a := range f.alerts.Take() {
			events = append(events, a.Event)
			if strings.Contains(a.Message, "s3cret-pw") {
				t.Fatalf("%s: alert leaks the password: %q", st.name, a.Message)
			}
		}
		if !slices.Equal(events, st.wantEvents) {
			t.Fatalf("%s: alerts %v, want %v", st.name, events, st.wantEvents)
		}
		if st.wantStatus == core.HealthHealthy {
			// The check authenticated for real, and sent nothing.
			if sink.Auths() <= authsBefore || len(sink.Messages()) != 0 {
				t.Fatalf("%s: %d AUTHs (was %d), %d messages; want a new AUTH and no message", st.name, sink.Auths(), authsBefore, len(sink.Messages()))
			}
			authsBefore = sink.Auths()
		}
	}

	// Wrong credentials: down, and the stored error names no secret.
	wrong, _ := f.cipher.Encrypt("wrong-pw-123")
	if err := f.store.UpdateConnectionSettings(context.Background(), c.ID, core.Settings{"password": wrong}, ""); err != nil {
		t.Fatal(err)
	}
	if err := f.checker.CheckAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := f.store.Raw(c.ID)
	if got.HealthStatus != core.HealthDown || got.LastError == "" || strings.Contains(got.LastError, "wrong-pw-123") {
		t.Fatalf("with a wrong password: status %q, error %q", got.HealthStatus, got.LastError)
	}
	if n := len(f.alerts.Take()); n != 1 {
		t.Fatalf("%d alerts for healthy → down, want 1", n)
	}
}
