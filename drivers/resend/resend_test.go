package resend_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/resend"
	"github.com/mailsvc/mailsvc/test/fakes/resendfake"
)

const testKey = "re_123456789_abcdefghijklmnopqrstuv"

// TestVerifySendingOnlyKey: a key with Sending access only cannot read
// the domains; Resend's 401 restricted_api_key proves it valid, while a
// wrong key still fails.
func TestVerifySendingOnlyKey(t *testing.T) {
	f := resendfake.NewSendingOnly(testKey)
	defer f.Close()
	tests := []struct {
		key     string
		wantErr bool
	}{{testKey, false}, {"re_wrong_key", true}}
	for _, tc := range tests {
		tr := drivertest.NewTransport(t, resend.Slug, core.Settings{"api_key": tc.key, "base_url": f.URL})
		if err := tr.(core.Verifier).Verify(context.Background()); (err != nil) != tc.wantErr {
			t.Errorf("key %s: Verify err %v, wantErr %v", tc.key, err, tc.wantErr)
		}
	}
	if len(f.Messages()) != 0 {
		t.Error("verify sent a message")
	}
}

// TestResendIsSentOnce: the Idempotency-Key makes Resend send the resend
// of an uncertain attempt once, while each part of a split message,
// another message and a message resent by hand are sent (see
// drivertest.IdempotentSends).
func TestResendIsSentOnce(t *testing.T) {
	f := resendfake.New(testKey)
	defer f.Close()
	tr := drivertest.NewTransport(t, resend.Slug, core.Settings{"api_key": testKey, "base_url": f.URL})
	drivertest.IdempotentSends(t, tr, func() int { return len(f.Messages()) })
}

// TestIdempotencyConflicts: Resend's 409s for a key it holds are never a
// delivery. A key whose first request is still in progress is uncertain
// (looked up and sent again with the key after the grace), and once the
// first request is answered the same send gets its id; a key that came
// with another body (the same Message-ID and recipients, another
// subject) fails for good. Neither is held twice.
func TestIdempotencyConflicts(t *testing.T) {
	tests := []struct {
		name string
		// second is the message sent while first (held by the fake until
		// the second is answered, when hold is set) has the key.
		hold          bool
		second        func(m *core.Message)
		wantUncertain bool
		wantTemporary bool
		wantInError   string
	}{
		{name: "the first still in progress", hold: true, second: func(*core.Message) {},
			wantUncertain: true, wantTemporary: true, wantInError: "concurrent_idempotent_requests"},
		{name: "the key with another body", second: func(m *core.Message) { m.Subject = "Another subject" },
			wantInError: "invalid_idempotent_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := resendfake.New(testKey)
			defer f.Close()
			tr := drivertest.NewTransport(t, resend.Slug, core.Settings{"api_key": testKey, "base_url": f.URL})
			release := func() {}
			if tc.hold {
				release = f.HoldSends()
			}
			defer release()
			type result struct {
				rc  core.Receipt
				err error
			}
			firstDone := make(chan result, 1)
			go func() {
				rc, err := tr.Send(context.Background(), drivertest.FullMessage().WithMessageID("<c.3@example.com>"))
				firstDone <- result{rc, err}
			}()
			var first result
			if tc.hold {
				deadline := time.Now().Add(10 * time.Second)
				for f.HeldSends() == 0 {
					if time.Now().After(deadline) {
						t.Fatal("the first send did not reach the fake")
					}
					time.Sleep(5 * time.Millisecond)
				}
			} else if first = <-firstDone; first.err != nil {
				t.Fatalf("first send: %v", first.err)
			}

			m := drivertest.FullMessage().WithMessageID("<c.3@example.com>")
			tc.second(m)
			_, err := tr.Send(context.Background(), m)
			if err == nil || core.IsUncertain(err) != tc.wantUncertain || core.IsTemporary(err) != tc.wantTemporary ||
				!strings.Contains(err.Error(), tc.wantInError) {
				t.Fatalf("second send: err %v; want uncertain %v, temporary %v, naming %s", err, tc.wantUncertain, tc.wantTemporary, tc.wantInError)
			}
			if tc.hold {
				release()
				if first = <-firstDone; first.err != nil {
					t.Fatalf("first send: %v", first.err)
				}
				rc, err := tr.Send(context.Background(), drivertest.FullMessage().WithMessageID("<c.3@example.com>"))
				if err != nil || rc.MessageID != first.rc.MessageID {
					t.Fatalf("sent again once the first was answered: %+v, %v; want the first's id %q", rc, err, first.rc.MessageID)
				}
			}
			if n := len(f.Messages()); n != 1 {
				t.Errorf("the fake holds %d messages, want 1", n)
			}
		})
	}
}
