package delivery

import (
	"context"
	"fmt"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/emailit"
	"github.com/mailsvc/mailsvc/drivers/resend"
	"github.com/mailsvc/mailsvc/test/fakes/emailitfake"
	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/resendfake"
)

// keyedProviders are the drivers whose provider sends a request once by
// its Idempotency-Key, with their local fakes.
var keyedProviders = []struct {
	slug, key string
	start     func(key string) *fakeapi.Server
	// id is the message id the driver's receipt gives for a message the
	// fake holds.
	id func(m fakeapi.Message) string
}{
	{resend.Slug, "re_123456789_abcdefghijklmnopqrstuv", resendfake.New, func(m fakeapi.Message) string { return m.ID }},
	{emailit.Slug, "secret_test-key-0123456789", emailitfake.New, func(m fakeapi.Message) string { return "em_" + m.ID }},
}

// keyedEnv is a test env whose default connection is one of slug's
// drivers, sending to its fake at baseURL with key.
func keyedEnv(t *testing.T, slug, key, baseURL string) *env {
	t.Helper()
	e := newEnv(t, fakeSettings{"uncertain_grace_minutes": int64(7)}, nil)
	id := *e.svc.mustSettings(t).defaultConn
	e.conns.mu.Lock()
	e.conns.m[id].Driver = slug
	e.conns.m[id].Settings = core.Settings{"api_key": key, "base_url": baseURL}
	e.conns.mu.Unlock()
	return e
}

// TestIdempotencyKeyThroughTheEngine sends through the real Resend and
// Emailit drivers to their fakes. A send whose answer was lost (the
// provider took it) is uncertain; after the grace the engine sends it
// again with the same Message-ID, so with the same Idempotency-Key, and
// the provider answers with the first message's id without sending it
// twice. A message over the recipient caps is split and each part sent.
// A message with its own Message-ID that is resent by hand is sent again.
func TestIdempotencyKeyThroughTheEngine(t *testing.T) {
	ctx := context.Background()
	for _, p := range keyedProviders {
		t.Run(p.slug+"/an uncertain attempt is sent once", func(t *testing.T) {
			f := p.start(p.key)
			defer f.Close()
			e := keyedEnv(t, p.slug, p.key, f.URL)
			f.TakeAndDropNext(1)
			id := e.enqueue(t, &core.Log{Message: msg("taken, answer lost")})
			if n := e.runDue(t); n != 1 {
				t.Fatalf("processed %d logs, want 1", n)
			}
			l, err := e.logs.FindLogByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if l.Status != core.StatusQueued || !equalStrings(outcomes(l), []string{core.OutcomeUncertain}) || len(f.Messages()) != 1 {
				t.Fatalf("after the lost answer: status %s, attempts %v, the fake holds %d; want queued, one uncertain attempt, 1",
					l.Status, outcomes(l), len(f.Messages()))
			}
			e.logs.MakeDue(id) // the grace has passed
			if n := e.runDue(t); n != 1 {
				t.Fatalf("processed %d logs after the grace, want 1", n)
			}
			if l, err = e.logs.FindLogByID(ctx, id); err != nil {
				t.Fatal(err)
			}
			held := f.Messages()
			if l.Status != core.StatusDelivered || !equalStrings(outcomes(l), []string{core.OutcomeUncertain, core.OutcomeDelivered}) {
				t.Fatalf("after the grace: status %s, attempts %v; want delivered on the second", l.Status, outcomes(l))
			}
			if len(held) != 1 || l.ProviderMessageID != p.id(held[0]) {
				t.Errorf("the fake holds %d messages, the log's id is %q; want 1, its id", len(held), l.ProviderMessageID)
			}
		})

		t.Run(p.slug+"/each part of a split message is sent", func(t *testing.T) {
			f := p.start(p.key)
			defer f.Close()
			e := keyedEnv(t, p.slug, p.key, f.URL)
			m := msg("to many")
			m.To = nil
			const recipients = 120
			for i := range recipients {
				m.To = append(m.To, core.Address{Email: fmt.Sprintf("r%03d@example.com", i)})
			}
			m.Headers = []core.Header{{Name: "Message-ID", Value: "<split.1@example.com>"}}
			id := e.enqueue(t, &core.Log{Message: m})
			e.drain(t)
			l, err := e.logs.FindLogByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for _, h := range f.Messages() {
				got += len(h.To)
			}
			if l.Status != core.StatusDelivered || len(f.Messages()) != 3 || got != recipients {
				t.Fatalf("status %s; the fake holds %d messages to %d recipients; want delivered, 3 parts to %d", l.Status, len(f.Messages()), got, recipients)
			}
		})

		t.Run(p.slug+"/a resend by hand is sent", func(t *testing.T) {
			f := p.start(p.key)
			defer f.Close()
			e := keyedEnv(t, p.slug, p.key, f.URL)
			m := msg("sent twice on purpose")
			m.Headers = []core.Header{{Name: "Message-ID", Value: "<own.1@example.com>"}}
			id := e.enqueue(t, &core.Log{Message: m})
			e.drain(t)
			if n, err := e.svc.Resend(ctx, []int64{id}); err != nil || n != 1 {
				t.Fatalf("Resend = %d, %v", n, err)
			}
			e.drain(t)
			l, err := e.logs.FindLogByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			held := f.Messages()
			if l.Status != core.StatusDelivered || len(held) != 2 || l.ProviderMessageID != p.id(held[1]) {
				t.Fatalf("status %s, id %q; the fake holds %d messages; want delivered twice, the second's id", l.Status, l.ProviderMessageID, len(held))
			}
		})
	}
}
