package ses_test

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// TestSendLimits reads the account's MaxSendRate and daily quota through
// each API version, counting what was sent; a throttled send is a
// rate-limit answer, not a failure.
func TestSendLimits(t *testing.T) {
	fake := startSES(t)
	tests := []struct {
		name  string
		extra core.Settings
	}{
		{"v1 GetSendQuota", nil},
		{"v2 GetAccount", core.Settings{"enable_v2_api": true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTransport(t, staticSettings(fake, tc.extra))
			r, ok := tr.(core.SendLimitReader)
			if !ok {
				t.Fatal("the SES transport does not report its send limits")
			}
			before, err := r.SendLimits(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if before.MaxPerSecond != 1 || before.Max24Hour != 200 {
				t.Fatalf("limits %+v, want MaxSendRate 1 and Max24HourSend 200 (the fake's sandbox account)", before)
			}
			if _, err := tr.Send(context.Background(), &core.Message{From: core.Address{Email: "sender@example.com"},
				To: []core.Address{{Email: "to@example.com"}}, Subject: "quota", Text: "x"}); err != nil {
				t.Fatal(err)
			}
			after, err := r.SendLimits(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if after.SentLast24Hours != before.SentLast24Hours+1 {
				t.Errorf("sent last 24 hours %d after one send, want %d", after.SentLast24Hours, before.SentLast24Hours+1)
			}
			fake.FailNext(1, 400, "Throttling", "Maximum sending rate exceeded.")
			_, err = tr.Send(context.Background(), &core.Message{From: core.Address{Email: "sender@example.com"},
				To: []core.Address{{Email: "to@example.com"}}, Subject: "throttled", Text: "x"})
			if _, limited := core.AsRateLimited(err); !limited || !core.IsTemporary(err) {
				t.Errorf("throttled send: %v, want a rate-limit answer", err)
			}
		})
	}
}
