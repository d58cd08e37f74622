package drivertest

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// IdempotentSends checks a transport whose provider sends a request once
// by its idempotency key (Resend, Emailit) against the provider's local
// fake, whose held returns how many messages it holds. A message sent
// again with the same Message-ID and recipients (the resend of an
// uncertain attempt) is answered with the first send's id and not held
// twice; each part of a message split over the recipient caps (the
// same Message-ID, other recipients), another Message-ID and a message
// resent by hand (core.Message.Resends) are each sent, and so is a
// repeat of each of them once.
func IdempotentSends(t *testing.T, tr core.Transport, held func() int) {
	t.Helper()
	full := FullMessage()
	tests := []struct {
		name      string
		messageID string
		envelope  []core.Address
		resends   int
		wantHeld  int
		// sameAs names the earlier send whose id the answer repeats; ""
		// for a new message.
		sameAs string
	}{
		{name: "first", messageID: "<a.1@example.com>", wantHeld: 1},
		{name: "resent", messageID: "<a.1@example.com>", wantHeld: 1, sameAs: "first"},
		{name: "a part of it", messageID: "<a.1@example.com>", envelope: full.To[:1], wantHeld: 2},
		{name: "that part resent", messageID: "<a.1@example.com>", envelope: full.To[:1], wantHeld: 2, sameAs: "a part of it"},
		{name: "another part", messageID: "<a.1@example.com>", envelope: full.Cc, wantHeld: 3},
		{name: "another message", messageID: "<b.2@example.com>", wantHeld: 4},
		{name: "the first resent by hand", messageID: "<a.1@example.com>", resends: 1, wantHeld: 5},
		{name: "that resend's uncertain attempt resent", messageID: "<a.1@example.com>", resends: 1, wantHeld: 5, sameAs: "the first resent by hand"},
		{name: "resent by hand again", messageID: "<a.1@example.com>", resends: 2, wantHeld: 6},
	}
	ids := map[string]string{}
	for _, tc := range tests {
		msg := FullMessage().WithMessageID(tc.messageID)
		msg.Envelope, msg.Resends = tc.envelope, tc.resends
		rc, err := tr.Send(context.Background(), msg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if rc.MessageID == "" {
			t.Fatalf("%s: no message id in the receipt %+v", tc.name, rc)
		}
		for name, id := range ids {
			if same := rc.MessageID == id; same != (name == tc.sameAs) {
				t.Errorf("%s: id %q, %s's %q: same %v, want %v", tc.name, rc.MessageID, name, id, same, !same)
			}
		}
		ids[tc.name] = rc.MessageID
		if got := held(); got != tc.wantHeld {
			t.Errorf("after %s the fake holds %d messages, want %d", tc.name, got, tc.wantHeld)
		}
	}
}
