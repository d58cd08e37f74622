package mandrill_test

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/mandrill"
	"github.com/mailsvc/mailsvc/test/fakes/mandrillfake"
)

const testKey = "md-test-key-0123456789"

// TestPerRecipientAnswers: Mandrill answers per recipient. A rejected
// recipient beside accepted ones is refused while the message is sent; a
// message whose every recipient is rejected fails for good.
func TestPerRecipientAnswers(t *testing.T) {
	f := mandrillfake.New(testKey)
	defer f.Close()
	tr := drivertest.NewTransport(t, mandrill.Slug, core.Settings{"api_key": testKey, "base_url": f.URL})
	tests := []struct {
		name         string
		to           []core.Address
		wantErr      bool
		wantOutcomes map[string]string
	}{
		{"all sent", []core.Address{{Email: "a@example.org"}, {Email: "b@example.org"}}, false, nil},
		{"one rejected", []core.Address{{Email: "a@example.org"}, {Email: "rejected@example.org"}}, false,
			map[string]string{"a@example.org": core.RecipientDelivered, "rejected@example.org": core.RecipientRefused}},
		{"all rejected", []core.Address{{Email: "rejected@example.org"}}, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
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
			got := map[string]string{}
			for _, o := range rc.Recipients {
				got[o.Email] = o.Status
			}
			if len(got) != len(tc.wantOutcomes) {
				t.Fatalf("outcomes %+v, want %v", rc.Recipients, tc.wantOutcomes)
			}
			for e, s := range tc.wantOutcomes {
				if got[e] != s {
					t.Errorf("%s: %q, want %q", e, got[e], s)
				}
			}
		})
	}
}
