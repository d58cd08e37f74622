package smtp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	smtpdrv "github.com/mailsvc/mailsvc/drivers/smtp"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// TestRecipientLimitAndRefusal: a relay that takes 100 recipients per
// transaction (452 after) and refuses one address gets a message to 250
// in three transactions, 249 recipients in all, each once; the refusal
// and the delivered ones come back per recipient, with a nil error.
func TestRecipientLimitAndRefusal(t *testing.T) {
	const refused = "r7@example.org"
	for _, mode := range []struct {
		name string
		opts []smtpsink.Option
		env  core.DriverEnv
	}{
		{"pipelined", nil, core.DriverEnv{}},
		{"stepwise", []smtpsink.Option{smtpsink.WithoutPipelining()}, core.DriverEnv{}},
		{"transcript", nil, core.DriverEnv{Transcript: &transcripts{}}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			sink := smtpsink.Start(t, append(mode.opts, smtpsink.WithMaxRecipients(100), smtpsink.WithRefusedRecipients(refused))...)
			tr := newTransport(t, settings(sink, nil), mode.env, smtpdrv.Options{})
			msg := message()
			msg.To = nil
			for i := range 250 {
				msg.To = append(msg.To, core.Address{Email: fmt.Sprintf("r%d@example.org", i)})
			}
			rc, err := tr.Send(context.Background(), msg)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			got, err := sink.WaitFor(3, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for i, m := range got {
				if want := []int{100, 100, 49}[i]; len(m.To) != want {
					t.Errorf("transaction %d: %d recipients, want %d", i+1, len(m.To), want)
				}
				for _, r := range m.To {
					seen[r]++
				}
			}
			if len(seen) != 249 || seen[refused] != 0 {
				t.Errorf("%d distinct recipients got it (refused one %d times), want 249 and 0", len(seen), seen[refused])
			}
			for r, n := range seen {
				if n != 1 {
					t.Errorf("%s got it %d times", r, n)
				}
			}
			if len(rc.Recipients) != 250 || rc.Recipients.Count(core.RecipientDelivered) != 249 || rc.Recipients.Count(core.RecipientRefused) != 1 {
				t.Fatalf("recipients = %d, %d delivered, %d refused", len(rc.Recipients), rc.Recipients.Count(core.RecipientDelivered), rc.Recipients.Count(core.RecipientRefused))
			}
			if o := rc.Recipients[7]; o.Email != refused || o.Status != core.RecipientRefused || !strings.HasPrefix(o.Reply, "550 ") {
				t.Errorf("refused outcome = %+v", o)
			}
		})
	}
}

// TestEveryRecipientRefused: when every recipient is refused with a 5xx,
// Send fails permanently with each outcome beside the error, and the
// session stays usable for the next message.
func TestEveryRecipientRefused(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.WithRefusedRecipients("a@example.org", "b@example.org"))
	tr := newTransport(t, settings(sink, nil), core.DriverEnv{}, smtpdrv.Options{})
	msg := message()
	msg.To = []core.Address{{Email: "a@example.org"}}
	msg.Bcc = []core.Address{{Email: "b@example.org"}}
	rc, err := tr.Send(context.Background(), msg)
	if err == nil || core.IsTemporary(err) || rc.Recipients.Count(core.RecipientRefused) != 2 {
		t.Fatalf("every recipient refused: err %v, recipients %+v", err, rc.Recipients)
	}
	if _, err := tr.Send(context.Background(), message()); err != nil {
		t.Fatalf("next message: %v", err)
	}
	if sink.Connections() != 1 {
		t.Errorf("%d connections, want the session reused", sink.Connections())
	}
}

// TestRefusalThenDataFailure: one recipient refused, then the relay
// refuses the data for good: nobody got it, Send fails permanently and
// each recipient is refused with its own reply.
func TestRefusalThenDataFailure(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.WithRefusedRecipients("a@example.org"))
	tr := newTransport(t, settings(sink, nil), core.DriverEnv{}, smtpdrv.Options{})
	msg := message()
	msg.To = []core.Address{{Email: "a@example.org"}, {Email: "b@example.org"}}
	sink.FailNext(1, 554, "5.7.1 Message rejected")
	rc, err := tr.Send(context.Background(), msg)
	if err == nil || core.IsTemporary(err) {
		t.Fatalf("err = %v, want a permanent failure", err)
	}
	if len(rc.Recipients) != 2 || !strings.HasPrefix(rc.Recipients[0].Reply, "550 ") ||
		rc.Recipients[1].Status != core.RecipientRefused || !strings.Contains(rc.Recipients[1].Reply, "554") {
		t.Fatalf("recipients = %+v", rc.Recipients)
	}
}
