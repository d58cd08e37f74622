package smtpsink_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// TestSinkCountsOpenTransactions: a transaction is open from MAIL until the
// reply to DATA, RSET or the end of its connection; the peak is the most
// that were open at once.
func TestSinkCountsOpenTransactions(t *testing.T) {
	s := smtpsink.Start(t)
	const n = 4
	cs := make([]*smtp.Client, n)
	for i := range cs {
		cs[i] = dial(t, s, smtpsink.TLSNone)
	}
	want := func(open, peak int, when string) {
		t.Helper()
		if got := s.Transactions(); got != open {
			t.Errorf("%s: %d transactions open, want %d", when, got, open)
		}
		if got := s.PeakTransactions(); got != peak {
			t.Errorf("%s: peak %d, want %d", when, got, peak)
		}
	}
	want(0, 0, "connected")
	for i, c := range cs {
		if err := c.Mail("a@example.com", nil); err != nil {
			t.Fatal(err)
		}
		want(i+1, i+1, fmt.Sprintf("after MAIL on %d sessions", i+1))
	}
	// RSET ends one; the end of DATA another; QUIT a third.
	if err := cs[0].Reset(); err != nil {
		t.Fatal(err)
	}
	want(3, 4, "after RSET")
	if err := cs[1].Rcpt("b@example.org", nil); err != nil {
		t.Fatal(err)
	}
	w, err := cs[1].Data()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want(2, 4, "after DATA")
	if err := cs[2].Quit(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return s.Transactions() == 1 }, "QUIT to end its transaction")
	// A dropped connection ends its transaction too.
	_ = cs[3].Close()
	waitFor(t, func() bool { return s.Transactions() == 0 }, "a closed connection to end its transaction")
	want(0, 4, "all ended")
	s.ResetPeak()
	want(0, 0, "after ResetPeak")
	// A whole send opens and closes one.
	if _, err := smtpsink.Send(cs[1], "a@example.com", []string{"b@example.org"}, body); err != nil {
		t.Fatal(err)
	}
	want(0, 1, "after a send")
}

// TestSinkLatencyHoldsEveryMessage: WithLatency holds each message before
// the reply, so clients sending at once all have a transaction open then
// (the peak counts them), and each message records when its MAIL came
// and when it was accepted.
func TestSinkLatencyHoldsEveryMessage(t *testing.T) {
	const latency = 200 * time.Millisecond
	s := smtpsink.Start(t, smtpsink.WithLatency(latency))
	const n = 5
	cs := make([]*smtp.Client, n)
	for i := range cs {
		cs[i] = dial(t, s, smtpsink.TLSNone)
	}
	// Every client opens its transaction before any sends its DATA, so
	// all n are held at once whatever the scheduling.
	for _, c := range cs {
		if err := c.Mail("a@example.com", nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Rcpt("b@example.org", nil); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, n)
	start := time.Now()
	for _, c := range cs {
		go func() {
			w, err := c.Data()
			if err == nil {
				_, err = w.Write([]byte(body))
			}
			if err == nil {
				err = w.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el < latency {
		t.Errorf("sends answered after %v, before the %v latency", el, latency)
	}
	if p := s.PeakTransactions(); p != n {
		t.Errorf("peak %d transactions, want %d", p, n)
	}
	if o := s.Transactions(); o != 0 {
		t.Errorf("%d transactions open after every reply", o)
	}
	msgs := s.Messages()
	if len(msgs) != n {
		t.Fatalf("%d messages, want %d", len(msgs), n)
	}
	for _, m := range msgs {
		if m.Started.IsZero() || m.At.Sub(m.Started) < latency {
			t.Errorf("message %s: MAIL at %v, accepted at %v: not held %v", m.QueueID, m.Started, m.At, latency)
		}
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSinkLimitsSessions: with WithMaxSessions(2) a third connection is
// greeted 421 and counted as refused; once a session ends, a new one is
// taken again.
func TestSinkLimitsSessions(t *testing.T) {
	s := smtpsink.Start(t, smtpsink.WithMaxSessions(2))
	a := dial(t, s, smtpsink.TLSNone)
	dial(t, s, smtpsink.TLSNone)
	third, err := smtp.Dial(s.Addr())
	if err == nil {
		// The client reads the greeting with its first command.
		err = third.Hello("client.test")
		third.Close()
	}
	if err == nil {
		t.Fatal("a third session was greeted, want 421")
	} else if !strings.Contains(err.Error(), "421") {
		t.Fatalf("third session: %v, want a 421 greeting", err)
	}
	if got := s.RefusedSessions(); got != 1 {
		t.Fatalf("RefusedSessions() = %d, want 1", got)
	}
	if err := a.Quit(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.ActiveConnections() > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions open after QUIT, want 1", s.ActiveConnections())
		}
		time.Sleep(5 * time.Millisecond)
	}
	c := dial(t, s, smtpsink.TLSNone)
	if _, err := smtpsink.Send(c, "a@example.com", []string{"b@example.org"}, body); err != nil {
		t.Fatalf("send on a session taken after one ended: %v", err)
	}
}
