package cloudflare_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/cloudflare"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/test/fakes/cloudflarefake"
)

const testToken = "cf-test-token-0123456789"

// TestPermanentBounces: Cloudflare answers per recipient. One in
// permanent_bounces beside delivered ones is refused while the message
// is sent; a message whose every recipient bounced fails for good; an
// answer with success false fails too, whatever its status.
func TestPermanentBounces(t *testing.T) {
	f := cloudflarefake.New(testToken)
	defer f.Close()
	tr := drivertest.NewTransport(t, cloudflare.Slug, core.Settings{"api_key": testToken, "account_id": cloudflarefake.AccountID, "base_url": f.URL})
	tests := []struct {
		name    string
		to      []core.Address
		fail    string // an answer the fake gives instead
		wantErr bool
		refused []string
	}{
		{"delivered", []core.Address{{Email: "a@example.org"}}, "", false, nil},
		{"one bounced", []core.Address{{Email: "a@example.org"}, {Email: "bounce@example.org"}}, "", false, []string{"bounce@example.org"}},
		{"all bounced", []core.Address{{Email: "bounce@example.org"}}, "", true, nil},
		{"success false on 200", []core.Address{{Email: "a@example.org"}}, `{"success":false,"errors":[{"code":10001,"message":"sending domain not onboarded"}]}`, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fail != "" {
				f.FailNext(1, 200, tc.fail)
			}
			msg := drivertest.FullMessage()
			msg.To, msg.Cc, msg.Bcc = tc.to, nil, nil
			rc, err := tr.Send(context.Background(), msg)
			if tc.wantErr {
				if err == nil || core.IsTemporary(err) {
					t.Fatalf("err %v, want a permanent error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			var refused []string
			for _, o := range rc.Recipients {
				if o.Status == core.RecipientRefused {
					refused = append(refused, o.Email)
				}
			}
			if strings.Join(refused, ",") != strings.Join(tc.refused, ",") {
				t.Errorf("refused %v, want %v (%+v)", refused, tc.refused, rc)
			}
		})
	}
}
