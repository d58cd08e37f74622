package resend_test

import (
	"context"
	"testing"

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
