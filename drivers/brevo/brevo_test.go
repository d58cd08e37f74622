package brevo_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/brevo"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/test/fakes/brevofake"
)

const testKey = "xkeysib-0123456789abcdef0123456789abcdef-AbCdEf"

var harness = drivertest.Harness{
	Slug:     brevo.Slug,
	Key:      testKey,
	WrongKey: "xkeysib-wrong",
	CheckReceipt: func(t *testing.T, rc core.Receipt, m drivertest.Message) {
		if rc.MessageID != "<"+m.ID+"@smtp-relay.mailin.fr>" {
			t.Errorf("receipt id %q, fake id %q", rc.MessageID, m.ID)
		}
	},
	NoContentID:     true,
	ReplyToCap:      1,
	DefaultBaseURL:  brevo.DefaultBaseURL,
	MaxMessageBytes: brevo.MaxMessageBytes,
	APIKeyConstant:  "MAILSVC_BREVO_API_KEY",
	UnknownKey:      "region",
	SchemaCases: []drivertest.SchemaCase{
		{Name: "force_from off", Settings: core.Settings{"api_key": "k", "from_email": "a@example.com", "force_from": false}},
		{Name: "force_from not a boolean", Settings: core.Settings{"api_key": "k", "force_from": "maybe"}, WantFields: []string{"force_from"}},
	},
}

func TestConformance(t *testing.T) { drivertest.RunJSONAPI(t, harness, brevofake.New) }
