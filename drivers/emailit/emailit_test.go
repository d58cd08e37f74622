package emailit_test

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/emailit"
	"github.com/mailsvc/mailsvc/test/fakes/emailitfake"
)

const testKey = "secret_test-key-0123456789"

// TestResendIsSentOnce: a message sent again with the same Message-ID
// and recipients (the engine's resend of an uncertain attempt) carries
// the same Idempotency-Key, so Emailit takes it once and answers with
// the first message's id; another part of the same message (other
// recipients, the same Message-ID) and another Message-ID are other
// messages.
func TestResendIsSentOnce(t *testing.T) {
	f := emailitfake.New(testKey)
	defer f.Close()
	tr := drivertest.NewTransport(t, emailit.Slug, core.Settings{"api_key": testKey, "base_url": f.URL})
	full := drivertest.FullMessage()
	tests := []struct {
		name      string
		messageID string
		envelope  []core.Address
		wantSent  int
		wantFirst bool // answered with the first send's id
	}{
		{"first", "<a.1@example.com>", nil, 1, true},
		{"resent", "<a.1@example.com>", nil, 1, true},
		{"a part of it", "<a.1@example.com>", full.To[:1], 2, false},
		{"that part resent", "<a.1@example.com>", full.To[:1], 2, false},
		{"another part", "<a.1@example.com>", full.Cc, 3, false},
		{"another message", "<b.2@example.com>", nil, 4, false},
	}
	var first string
	for i, tc := range tests {
		msg := drivertest.FullMessage().WithMessageID(tc.messageID)
		msg.Envelope = tc.envelope
		rc, err := tr.Send(context.Background(), msg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if i == 0 {
			first = rc.MessageID
		}
		if (rc.MessageID == first) != tc.wantFirst {
			t.Errorf("%s: id %q, first %q: same %v, want %v", tc.name, rc.MessageID, first, rc.MessageID == first, tc.wantFirst)
		}
		if got := len(f.Messages()); got != tc.wantSent {
			t.Errorf("after %s the fake holds %d messages, want %d", tc.name, got, tc.wantSent)
		}
	}
}
