package elasticemail_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/elasticemail"
	"github.com/mailsvc/mailsvc/test/fakes/elasticemailfake"
)

func TestConformance(t *testing.T) {
	drivertest.RunJSONAPI(t, drivertest.Harness{
		Slug:           elasticemail.Slug,
		Key:            "ee-test-key-0123456789",
		WrongKey:       "ee-wrong-key",
		DefaultBaseURL: elasticemail.DefaultBaseURL,
		APIKeyConstant: "MAILSVC_ELASTICEMAIL_API_KEY",
		UnknownKey:     "region",
		NoContentID:    true,
	}, elasticemailfake.New)
}

// TestFakeCapIsTheDriverCap: the fake refuses what the driver's cap
// keeps it from sending.
func TestFakeCapIsTheDriverCap(t *testing.T) {
	if elasticemailfake.MaxRecipients != elasticemail.MaxRecipients {
		t.Fatalf("fake cap %d, driver cap %d", elasticemailfake.MaxRecipients, elasticemail.MaxRecipients)
	}
}
