package mailersend_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/mailersend"
	"github.com/mailsvc/mailsvc/test/fakes/mailersendfake"
)

const testKey = "mlsn.0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

var harness = drivertest.Harness{
	Slug:     mailersend.Slug,
	Key:      testKey,
	WrongKey: "mlsn.wrong",
	Start: func() drivertest.Fake {
		f := mailersendfake.New(testKey)
		return drivertest.NewFake(f, f.URL, f.Messages)
	},
	ReplyToCap:     1,
	DefaultBaseURL: mailersend.DefaultBaseURL,
	APIKeyConstant: "MAILSVC_MAILERSEND_API_KEY",
	UnknownKey:     "region",
}

func TestConformance(t *testing.T) { drivertest.Run(t, harness) }

// TestRecipientCapSplits: 120 To recipients, over MailerSend's 50 in to,
// go as three calls.
func TestRecipientCapSplits(t *testing.T) { drivertest.RecipientCapSplits(t, harness, 120, 3) }
