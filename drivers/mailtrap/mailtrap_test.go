package mailtrap_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/mailtrap"
	"github.com/mailsvc/mailsvc/test/fakes/mailtrapfake"
)

func TestConformance(t *testing.T) {
	drivertest.RunJSONAPI(t, drivertest.Harness{
		Slug:           mailtrap.Slug,
		Key:            "mt-test-token-0123456789",
		WrongKey:       "mt-wrong-token",
		DefaultBaseURL: mailtrap.DefaultBaseURL,
		APIKeyConstant: "MAILSVC_MAILTRAP_API_KEY",
		UnknownKey:     "region",
		CheckReceipt:   drivertest.FirstRecipientID,
	}, mailtrapfake.New)
}

// TestFakeCapIsTheDriverCap: the fake refuses what the driver's cap
// keeps it from sending.
func TestFakeCapIsTheDriverCap(t *testing.T) {
	if mailtrapfake.MaxPerField != mailtrap.MaxPerField {
		t.Fatalf("fake cap %d, driver cap %d", mailtrapfake.MaxPerField, mailtrap.MaxPerField)
	}
}
