package all_test

import (
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/brevo"
	"github.com/mailsvc/mailsvc/drivers/cloudflare"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/elasticemail"
	"github.com/mailsvc/mailsvc/drivers/emailit"
	"github.com/mailsvc/mailsvc/drivers/mailersend"
	"github.com/mailsvc/mailsvc/drivers/mailjet"
	"github.com/mailsvc/mailsvc/drivers/mailtrap"
	"github.com/mailsvc/mailsvc/drivers/mandrill"
	"github.com/mailsvc/mailsvc/drivers/resend"
	"github.com/mailsvc/mailsvc/drivers/sendlayer"
	"github.com/mailsvc/mailsvc/drivers/smtp2go"
	"github.com/mailsvc/mailsvc/drivers/smtpcom"
	"github.com/mailsvc/mailsvc/drivers/sparkpost"
	"github.com/mailsvc/mailsvc/test/fakes/brevofake"
	"github.com/mailsvc/mailsvc/test/fakes/cloudflarefake"
	"github.com/mailsvc/mailsvc/test/fakes/elasticemailfake"
	"github.com/mailsvc/mailsvc/test/fakes/emailitfake"
	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/mailersendfake"
	"github.com/mailsvc/mailsvc/test/fakes/mailjetfake"
	"github.com/mailsvc/mailsvc/test/fakes/mailtrapfake"
	"github.com/mailsvc/mailsvc/test/fakes/mandrillfake"
	"github.com/mailsvc/mailsvc/test/fakes/resendfake"
	"github.com/mailsvc/mailsvc/test/fakes/sendlayerfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtp2gofake"
	"github.com/mailsvc/mailsvc/test/fakes/smtpcomfake"
	"github.com/mailsvc/mailsvc/test/fakes/sparkpostfake"
)

// mailjetSecret is the Mailjet secret key its fake accepts beside the key.
const mailjetSecret = "fedcba9876543210fedcba9876543210"

// TestJSONAPIConformance runs the conformance suite and its limits
// (drivertest.RunJSONAPI) on each JSON API driver against its fake, a
// row per driver, a subtest named by the driver's slug. Where a row
// names the fake's recipient cap, it is the driver's: the fake refuses
// what the driver's cap keeps it from sending.
func TestJSONAPIConformance(t *testing.T) {
	tests := []struct {
		harness            drivertest.Harness
		start              func(key string) *fakeapi.Server
		fakeCap, driverCap int
	}{
		{harness: drivertest.Harness{
			Slug: brevo.Slug, Key: "xkeysib-0123456789abcdef0123456789abcdef-AbCdEf", WrongKey: "xkeysib-wrong",
			CheckReceipt: func(t *testing.T, rc core.Receipt, m drivertest.Message) {
				if rc.MessageID != "<"+m.ID+"@smtp-relay.mailin.fr>" {
					t.Errorf("receipt id %q, fake id %q", rc.MessageID, m.ID)
				}
			},
			NoContentID: true, ReplyToCap: 1,
			DefaultBaseURL: brevo.DefaultBaseURL, MaxMessageBytes: brevo.MaxMessageBytes,
			APIKeyConstant: "MAILSVC_BREVO_API_KEY", UnknownKey: "region",
			SchemaCases: []drivertest.SchemaCase{
				{Name: "force_from off", Settings: core.Settings{"api_key": "k", "from_email": "a@example.com", "force_from": false}},
				{Name: "force_from not a boolean", Settings: core.Settings{"api_key": "k", "force_from": "maybe"}, WantFields: []string{"force_from"}},
			},
		}, start: brevofake.New},
		{harness: drivertest.Harness{
			Slug: cloudflare.Slug, Key: "cf-test-token-0123456789", WrongKey: "cf-wrong-token",
			ExtraSettings:  core.Settings{cloudflare.KeyAccountID: cloudflarefake.AccountID},
			DefaultBaseURL: cloudflare.DefaultBaseURL, APIKeyConstant: "MAILSVC_CLOUDFLARE_API_KEY", UnknownKey: "region",
			NoRecipientNames: true,
			// The receipt keeps the Message-ID the message went with.
			CheckReceipt: func(t *testing.T, rc core.Receipt, m drivertest.Message) {
				if rc.MessageID == "" || "<"+rc.MessageID+">" != m.Headers["Message-ID"] {
					t.Errorf("receipt id %q, sent Message-ID %q", rc.MessageID, m.Headers["Message-ID"])
				}
			},
			SchemaCases: []drivertest.SchemaCase{
				{Name: "no account id", Settings: core.Settings{"api_key": "k"}, WantFields: []string{cloudflare.KeyAccountID}},
			},
		}, start: cloudflarefake.New, fakeCap: cloudflarefake.MaxRecipients, driverCap: cloudflare.MaxRecipients},
		{harness: drivertest.Harness{
			Slug: elasticemail.Slug, Key: "ee-test-key-0123456789", WrongKey: "ee-wrong-key",
			DefaultBaseURL: elasticemail.DefaultBaseURL, APIKeyConstant: "MAILSVC_ELASTICEMAIL_API_KEY", UnknownKey: "region",
			NoContentID: true,
		}, start: elasticemailfake.New, fakeCap: elasticemailfake.MaxRecipients, driverCap: elasticemail.MaxRecipients},
		{harness: drivertest.Harness{
			Slug: emailit.Slug, Key: "secret_test-key-0123456789", WrongKey: "secret_wrong",
			DefaultBaseURL: emailit.DefaultBaseURL, APIKeyConstant: "MAILSVC_EMAILIT_API_KEY", UnknownKey: "region",
			CheckReceipt: func(t *testing.T, rc core.Receipt, m drivertest.Message) {
				if rc.MessageID != "em_"+m.ID {
					t.Errorf("receipt id %q, want em_%s", rc.MessageID, m.ID)
				}
			},
		}, start: emailitfake.New, fakeCap: emailitfake.MaxPerField, driverCap: emailit.MaxPerField},
		{harness: drivertest.Harness{
			Slug: mailersend.Slug, Key: "mlsn.0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", WrongKey: "mlsn.wrong",
			ExtraSettings: core.Settings{"custom_headers": true}, ReplyToCap: 1,
			DefaultBaseURL: mailersend.DefaultBaseURL, MaxMessageBytes: mailersend.MaxMessageBytes,
			APIKeyConstant: "MAILSVC_MAILERSEND_API_KEY", UnknownKey: "region",
		}, start: mailersendfake.New},
		{harness: drivertest.Harness{
			Slug: mailjet.Slug, Key: "0123456789abcdef0123456789abcdef", WrongKey: "ffffffffffffffffffffffffffffffff",
			ExtraSettings: core.Settings{"api_secret": mailjetSecret},
			CheckReceipt: func(t *testing.T, rc core.Receipt, _ drivertest.Message) {
				if !strings.HasPrefix(rc.MessageID, "mailsvc-") || !strings.Contains(rc.Response, "MessageID 288230376151711744") {
					t.Errorf("receipt %+v: want the CustomID and Mailjet's MessageID", rc)
				}
			},
			ReplyToCap:     1,
			DefaultBaseURL: mailjet.DefaultBaseURL, MaxMessageBytes: mailjet.MaxMessageBytes,
			APIKeyConstant: "MAILSVC_MAILJET_API_KEY", UnknownKey: "region",
			SchemaCases: []drivertest.SchemaCase{
				{Name: "missing api_secret", Settings: core.Settings{"api_key": "k"}, WantFields: []string{"api_secret"}},
			},
		}, start: func(key string) *fakeapi.Server { return mailjetfake.New(key, mailjetSecret) }},
		{harness: drivertest.Harness{
			Slug: mailtrap.Slug, Key: "mt-test-token-0123456789", WrongKey: "mt-wrong-token",
			DefaultBaseURL: mailtrap.DefaultBaseURL, APIKeyConstant: "MAILSVC_MAILTRAP_API_KEY", UnknownKey: "region",
			CheckReceipt: drivertest.FirstRecipientID,
		}, start: mailtrapfake.New, fakeCap: mailtrapfake.MaxPerField, driverCap: mailtrap.MaxPerField},
		{harness: drivertest.Harness{
			Slug: mandrill.Slug, Key: "md-test-key-0123456789", WrongKey: "md-wrong-key",
			DefaultBaseURL: mandrill.DefaultBaseURL, APIKeyConstant: "MAILSVC_MANDRILL_API_KEY", UnknownKey: "region",
			AttachmentName: drivertest.ContentIDName, AttachmentsByName: true,
			CheckReceipt: drivertest.FirstRecipientID,
		}, start: mandrillfake.New},
		{harness: drivertest.Harness{
			Slug: resend.Slug, Key: "re_123456789_abcdefghijklmnopqrstuv", WrongKey: "re_wrong_key",
			DefaultBaseURL: resend.DefaultBaseURL, MaxMessageBytes: resend.MaxMessageBytes,
			APIKeyConstant: "MAILSVC_RESEND_API_KEY", UnknownKey: "region",
		}, start: resendfake.New},
		{harness: drivertest.Harness{
			Slug: sendlayer.Slug, Key: "sl-test-key-0123456789", WrongKey: "sl-wrong-key",
			DefaultBaseURL: sendlayer.DefaultBaseURL, APIKeyConstant: "MAILSVC_SENDLAYER_API_KEY", UnknownKey: "region",
		}, start: sendlayerfake.New, fakeCap: sendlayerfake.MaxRecipients, driverCap: sendlayer.MaxRecipients},
		{harness: drivertest.Harness{
			Slug: smtp2go.Slug, Key: "api-0123456789ABCDEF0123456789ABCDEF", WrongKey: "api-WRONG",
			AttachmentName: drivertest.ContentIDName, AttachmentsByName: true,
			DefaultBaseURL: smtp2go.DefaultBaseURL, MaxMessageBytes: smtp2go.MaxMessageBytes,
			APIKeyConstant: "MAILSVC_SMTP2GO_API_KEY", UnknownKey: "region",
		}, start: smtp2gofake.New},
		{harness: drivertest.Harness{
			Slug: smtpcom.Slug, Key: "sc-test-key-0123456789", WrongKey: "sc-wrong-key",
			ExtraSettings:  core.Settings{smtpcom.KeyChannel: smtpcomfake.Channel},
			DefaultBaseURL: smtpcom.DefaultBaseURL, APIKeyConstant: "MAILSVC_SMTPCOM_API_KEY", UnknownKey: "region",
			SchemaCases: []drivertest.SchemaCase{
				{Name: "no channel", Settings: core.Settings{"api_key": "k"}, WantFields: []string{smtpcom.KeyChannel}},
			},
		}, start: smtpcomfake.New, fakeCap: smtpcomfake.MaxRecipients, driverCap: smtpcom.MaxRecipients},
		{harness: drivertest.Harness{
			Slug: sparkpost.Slug, Key: "0123456789abcdef0123456789abcdef01234567", WrongKey: "ffffffffffffffffffffffffffffffffffffffff",
			AttachmentName: drivertest.ContentIDName, AttachmentsByName: true,
			DefaultBaseURL: sparkpost.BaseURLUS, MaxMessageBytes: sparkpost.MaxMessageBytes,
			APIKeyConstant: "MAILSVC_SPARKPOST_API_KEY", UnknownKey: "domain", Defaulted: []string{"region"},
			SchemaCases: []drivertest.SchemaCase{
				{Name: "eu region", Settings: core.Settings{"api_key": "k", "region": "eu"}},
				{Name: "unknown region", Settings: core.Settings{"api_key": "k", "region": "ap"}, WantFields: []string{"region"}},
			},
		}, start: sparkpostfake.New},
	}
	for _, tc := range tests {
		t.Run(tc.harness.Slug, func(t *testing.T) {
			if tc.fakeCap != tc.driverCap {
				t.Fatalf("fake cap %d, driver cap %d", tc.fakeCap, tc.driverCap)
			}
			drivertest.RunJSONAPI(t, tc.harness, tc.start)
		})
	}
}
