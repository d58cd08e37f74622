package smtpcom_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/smtpcom"
	"github.com/mailsvc/mailsvc/test/fakes/smtpcomfake"
)

func TestConformance(t *testing.T) {
	drivertest.RunJSONAPI(t, drivertest.Harness{
		Slug:           smtpcom.Slug,
		Key:            "sc-test-key-0123456789",
		WrongKey:       "sc-wrong-key",
		ExtraSettings:  core.Settings{smtpcom.KeyChannel: smtpcomfake.Channel},
		DefaultBaseURL: smtpcom.DefaultBaseURL,
		APIKeyConstant: "MAILSVC_SMTPCOM_API_KEY",
		UnknownKey:     "region",
		SchemaCases: []drivertest.SchemaCase{
			{Name: "no channel", Settings: core.Settings{"api_key": "k"}, WantFields: []string{smtpcom.KeyChannel}},
		},
	}, smtpcomfake.New)
}

// TestFakeCapIsTheDriverCap: the fake refuses what the driver's cap
// keeps it from sending.
func TestFakeCapIsTheDriverCap(t *testing.T) {
	if smtpcomfake.MaxRecipients != smtpcom.MaxRecipients {
		t.Fatalf("fake cap %d, driver cap %d", smtpcomfake.MaxRecipients, smtpcom.MaxRecipients)
	}
}
