package sendgrid_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/sendgrid"
	"github.com/mailsvc/mailsvc/test/fakes/sendgridfake"
)

const testKey = "SG.test-key-0123456789abcdef"

// fake is the SendGrid fake as the conformance suite drives it.
type fake struct{ *sendgridfake.Server }

func (f fake) URL() string                    { return f.Server.URL }
func (f fake) FailNext(n, status int)         { f.Server.FailNext(n, status, "") }
func (f fake) Messages() []drivertest.Message { return drivertest.Recorded(f.Server.Messages()) }

func TestConformance(t *testing.T) {
	drivertest.Run(t, drivertest.Harness{
		Slug:           sendgrid.Slug,
		Key:            testKey,
		WrongKey:       "SG.wrong-key-zzz",
		Start:          func() drivertest.Fake { return fake{sendgridfake.New(testKey)} },
		DefaultBaseURL: sendgrid.DefaultBaseURL,
		APIKeyConstant: "MAILSVC_SENDGRID_API_KEY",
		UnknownKey:     "region",
	})
}
