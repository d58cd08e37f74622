package mailjet_test

import (
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/mailjet"
	"github.com/mailsvc/mailsvc/test/fakes/mailjetfake"
)

const (
	testKey    = "0123456789abcdef0123456789abcdef"
	testSecret = "fedcba9876543210fedcba9876543210"
)

// TestCustomIDIsTheReceipt: each send carries a CustomID of its own,
// which the receipt names, so that every recipient's events find the
// log; the secret key is masked like the API key.
func TestCustomIDIsTheReceipt(t *testing.T) {
	f := mailjetfake.New(testKey, testSecret)
	defer f.Close()
	tr := drivertest.NewTransport(t, mailjet.Slug, core.Settings{"api_key": testKey, "api_secret": testSecret, "base_url": f.URL})
	var ids []string
	for i := range 2 {
		rc, m := drivertest.SendRecorded(t, tr, drivertest.FullMessage(), f.Messages, i+1)
		if rc.MessageID != m.Meta["CustomID"] {
			t.Errorf("receipt %q, CustomID sent %q", rc.MessageID, m.Meta["CustomID"])
		}
		ids = append(ids, rc.MessageID)
	}
	if ids[0] == ids[1] {
		t.Errorf("two sends share the CustomID %q", ids[0])
	}
	f.FailNext(1, 400, `{"echo":"`+testSecret+`"}`)
	if _, err := tr.Send(t.Context(), drivertest.FullMessage()); err == nil || strings.Contains(err.Error(), testSecret) {
		t.Errorf("err %v: want a failure without the secret key", err)
	}
}
