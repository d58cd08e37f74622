package sendlayer_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/sendlayer"
	"github.com/mailsvc/mailsvc/test/fakes/sendlayerfake"
)

func TestConformance(t *testing.T) {
	drivertest.RunJSONAPI(t, drivertest.Harness{
		Slug:           sendlayer.Slug,
		Key:            "sl-test-key-0123456789",
		WrongKey:       "sl-wrong-key",
		DefaultBaseURL: sendlayer.DefaultBaseURL,
		APIKeyConstant: "MAILSVC_SENDLAYER_API_KEY",
		UnknownKey:     "region",
	}, sendlayerfake.New)
}

// TestFakeCapIsTheDriverCap: the fake refuses what the driver's cap
// keeps it from sending.
func TestFakeCapIsTheDriverCap(t *testing.T) {
	if sendlayerfake.MaxRecipients != sendlayer.MaxRecipients {
		t.Fatalf("fake cap %d, driver cap %d", sendlayerfake.MaxRecipients, sendlayer.MaxRecipients)
	}
}
