package delivery

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// perRecipient is a fake transport that answers per recipient, as an SMTP
// relay does: it defers the addresses of deferred (450) and refuses those
// of refused (550), delivering to the others, and records each send's
// envelope.
type perRecipient struct {
	mu        sync.Mutex
	deferred  map[string]bool
	refused   map[string]bool
	envelopes [][]string
}

func (p *perRecipient) Send(_ context.Context, msg *core.Message) (core.Receipt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var env []string
	var rs core.RecipientOutcomes
	delivered, split := 0, false
	for _, a := range msg.EnvelopeRecipients() {
		env = append(env, a.Email)
		o := core.RecipientOutcome{Email: a.Email, Status: core.RecipientDelivered}
		switch {
		case p.deferred[a.Email]:
			o.Status, o.Reply, split = core.RecipientDeferred, "450 4.2.1 busy", true
		case p.refused[a.Email]:
			o.Status, o.Reply, split = core.RecipientRefused, "550 5.1.1 unknown", true
		default:
			delivered++
		}
		rs = append(rs, o)
	}
	p.envelopes = append(p.envelopes, env)
	if !split {
		rs = nil
	}
	if delivered == 0 {
		return core.Receipt{Recipients: rs}, core.Temporary(fmt.Errorf("no recipient accepted"))
	}
	return core.Receipt{MessageID: fmt.Sprintf("q%d", len(p.envelopes)), Response: "250 ok", Recipients: rs}, nil
}

// TestDeferredRecipientsRetriedAloneThenGivenUp: one recipient refused,
// one deferred on every attempt. Each retry sends to the deferred one
// alone; when the retries run out the log is delivered, partial, the
// deferred recipient refused with the reason, and it is never failed.
func TestDeferredRecipientsRetriedAloneThenGivenUp(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.svc.o.MaxRetries = 2
	tr := &perRecipient{deferred: map[string]bool{"b@example.com": true}, refused: map[string]bool{"c@example.com": true}}
	e.useTransport(tr)
	m := msg("partial")
	m.To = []core.Address{{Email: "a@example.com"}, {Email: "b@example.com"}}
	m.Bcc = []core.Address{{Email: "c@example.com"}}
	id := e.enqueue(t, &core.Log{Message: m})
	e.drain(t)

	if len(tr.envelopes) != 3 {
		t.Fatalf("%d sends (%v), want 3: the first and two retries", len(tr.envelopes), tr.envelopes)
	}
	for i, env := range tr.envelopes[1:] {
		if len(env) != 1 || env[0] != "b@example.com" {
			t.Errorf("retry %d went to %v, want b alone", i+1, env)
		}
	}
	l, err := e.logs.FindLogByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if l.Status != core.StatusDelivered || !l.Partial || l.RecipientsRefused != 2 {
		t.Fatalf("log: status %s, partial %v, refused %d", l.Status, l.Partial, l.RecipientsRefused)
	}
	want := map[string]string{"a@example.com": core.RecipientDelivered, "b@example.com": core.RecipientRefused, "c@example.com": core.RecipientRefused}
	for _, o := range l.Recipients {
		if want[o.Email] != o.Status {
			t.Errorf("%s: %s, want %s", o.Email, o.Status, want[o.Email])
		}
		if o.Email == "b@example.com" && !strings.HasPrefix(o.Reply, "retries ran out: 450") {
			t.Errorf("b's reply %q", o.Reply)
		}
	}
}

// TestEveryRecipientRefusedFails: nobody got the message: the log fails.
func TestEveryRecipientRefusedFails(t *testing.T) {
	e := newEnv(t, nil, nil)
	tr := &perRecipient{refused: map[string]bool{"to@example.com": true}}
	e.useTransport(tr)
	id := e.enqueue(t, &core.Log{Message: msg("nobody")})
	e.drain(t)
	l, _ := e.logs.FindLogByID(context.Background(), id)
	if l.Status == core.StatusDelivered || l.Partial {
		t.Fatalf("log: status %s, partial %v; want not delivered", l.Status, l.Partial)
	}
}

// useTransport makes tr the transport of the env's default connection.
func (e *env) useTransport(tr core.Transport) {
	fakeMu.Lock()
	defer fakeMu.Unlock()
	for id := range e.conns.m {
		if id%10 == 1 {
			fakeByConn[id] = tr
		}
	}
}

// TestBccOnlyMessageWhereProviderNeedsTo: a provider that refuses a call
// without a To gets a Bcc-only message as one call per recipient, each
// its own To; a message with a To goes in one call.
func TestBccOnlyMessageWhereProviderNeedsTo(t *testing.T) {
	caps := core.RecipientCaps{To: 50, NeedsTo: true}
	tr := &perRecipient{}
	m := msg("bcc only")
	m.To = nil
	m.Bcc = []core.Address{{Email: "a@example.com"}, {Email: "b@example.com"}}
	res := sendRecipients(context.Background(), tr, &m, &core.Log{Message: m}, caps)
	if res.err != nil || len(tr.envelopes) != 2 || res.receipt.Recipients.Count(core.RecipientDelivered) != 2 {
		t.Fatalf("err %v, envelopes %v, recipients %+v", res.err, tr.envelopes, res.receipt.Recipients)
	}
	m.To = []core.Address{{Email: "c@example.com"}}
	res = sendRecipients(context.Background(), tr, &m, &core.Log{Message: m}, caps)
	if res.err != nil || len(tr.envelopes) != 3 || len(tr.envelopes[2]) != 3 || res.receipt.Recipients != nil {
		t.Fatalf("with a To: err %v, envelopes %v, recipients %+v", res.err, tr.envelopes, res.receipt.Recipients)
	}
}

// headerRecorder records each send's Message-ID header.
type headerRecorder struct{ ids []string }

func (h *headerRecorder) Send(_ context.Context, msg *core.Message) (core.Receipt, error) {
	id := ""
	for _, hd := range msg.Headers {
		if hd.Name == "Message-ID" {
			id = hd.Value
		}
	}
	h.ids = append(h.ids, id)
	return core.Receipt{MessageID: fmt.Sprintf("p%d", len(h.ids))}, nil
}

// TestPartsShareMessageID: the calls of a message sent in parts carry one
// Message-ID; a message within its caps goes untouched.
func TestPartsShareMessageID(t *testing.T) {
	tr := &headerRecorder{}
	m := msg("parts")
	m.From = core.Address{Email: "shop@example.com"}
	m.To = []core.Address{{Email: "a@example.com"}, {Email: "b@example.com"}, {Email: "c@example.com"}}
	res := sendRecipients(context.Background(), tr, &m, &core.Log{ID: 7, Message: m}, core.RecipientCaps{PerMessage: 2})
	if res.err != nil || len(tr.ids) != 2 || tr.ids[0] == "" || tr.ids[0] != tr.ids[1] || !strings.HasSuffix(tr.ids[0], "@example.com>") {
		t.Fatalf("err %v, Message-IDs %q", res.err, tr.ids)
	}
	if len(res.ids) != 2 || len(m.Headers) != 0 {
		t.Fatalf("provider ids %v, message headers %v", res.ids, m.Headers)
	}
	sendRecipients(context.Background(), tr, &m, &core.Log{ID: 8, Message: m}, core.RecipientCaps{PerMessage: 5})
	if tr.ids[2] != "" {
		t.Errorf("a message within its caps got Message-ID %q", tr.ids[2])
	}
}
