package emailit_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/emailit"
	"github.com/mailsvc/mailsvc/test/fakes/emailitfake"
)

const testKey = "secret_test-key-0123456789"

// TestResendIsSentOnce: the Idempotency-Key makes Emailit send the
// resend of an uncertain attempt once, while each part of a split
// message, another message and a message resent by hand are sent (see
// drivertest.IdempotentSends).
func TestResendIsSentOnce(t *testing.T) {
	f := emailitfake.New(testKey)
	defer f.Close()
	tr := drivertest.NewTransport(t, emailit.Slug, core.Settings{"api_key": testKey, "base_url": f.URL})
	drivertest.IdempotentSends(t, tr, func() int { return len(f.Messages()) })
}
