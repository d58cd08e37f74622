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

func TestConformance(t *testing.T) {
	drivertest.RunJSONAPI(t, drivertest.Harness{
		Slug:           emailit.Slug,
		Key:            testKey,
		WrongKey:       "secret_wrong",
		DefaultBaseURL: emailit.DefaultBaseURL,
		APIKeyConstant: "MAILSVC_EMAILIT_API_KEY",
		UnknownKey:     "region",
		CheckReceipt: func(t *testing.T, rc core.Receipt, m drivertest.Message) {
			if rc.MessageID != "em_"+m.ID {
				t.Errorf("receipt id %q, want em_%s", rc.MessageID, m.ID)
			}
		},
	}, emailitfake.New)
}

// TestResendIsSentOnce: a message sent again with the same Message-ID
// (the engine's resend of an uncertain attempt) carries the same
// Idempotency-Key, so Emailit takes it once and answers with the first
// message's id; another Message-ID is another message.
func TestResendIsSentOnce(t *testing.T) {
	f := emailitfake.New(testKey)
	defer f.Close()
	tr := drivertest.NewTransport(t, emailit.Slug, core.Settings{"api_key": testKey, "base_url": f.URL})
	tests := []struct {
		messageID string
		wantSent  int
	}{
		{"<a.1@example.com>", 1},
		{"<a.1@example.com>", 1},
		{"<b.2@example.com>", 2},
	}
	var first string
	for i, tc := range tests {
		msg := drivertest.FullMessage().WithMessageID(tc.messageID)
		rc, err := tr.Send(context.Background(), msg)
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if i == 0 {
			first = rc.MessageID
		}
		if i == 1 && rc.MessageID != first {
			t.Errorf("the resend's id %q, want the first's %q", rc.MessageID, first)
		}
		if got := len(f.Messages()); got != tc.wantSent {
			t.Errorf("after send %d the fake holds %d messages, want %d", i, got, tc.wantSent)
		}
	}
}

// TestFakeCapIsTheDriverCap: the fake refuses what the driver's cap
// keeps it from sending.
func TestFakeCapIsTheDriverCap(t *testing.T) {
	if emailitfake.MaxPerField != emailit.MaxPerField {
		t.Fatalf("fake cap %d, driver cap %d", emailitfake.MaxPerField, emailit.MaxPerField)
	}
}
