package sendgrid_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/sendgrid"
	"github.com/mailsvc/mailsvc/test/fakes/sendgridfake"
)

const testKey = "SG.test-key-0123456789abcdef"

// startFake starts the SendGrid fake as the conformance suite drives it.
func startFake() drivertest.Fake {
	f := sendgridfake.New(testKey)
	return drivertest.NewFake(f, f.URL, f.Messages)
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, drivertest.Harness{
		Slug:           sendgrid.Slug,
		Key:            testKey,
		WrongKey:       "SG.wrong-key-zzz",
		Start:          startFake,
		DefaultBaseURL: sendgrid.DefaultBaseURL,
		APIKeyConstant: "MAILSVC_SENDGRID_API_KEY",
		UnknownKey:     "region",
	})
}

// TestZeroByteAttachmentLeftOut: SendGrid refuses an attachment without
// content (the fake as the API); the driver leaves a zero-byte one out,
// sends the rest and says so in the receipt's response.
func TestZeroByteAttachmentLeftOut(t *testing.T) {
	f := sendgridfake.New(testKey)
	defer f.Close()
	tr, err := sendgrid.New(&core.Connection{ID: 1, Driver: sendgrid.Slug, Settings: core.Settings{"api_key": testKey, "base_url": f.URL}}, core.DriverEnv{})
	if err != nil {
		t.Fatal(err)
	}
	msg := drivertest.FullMessage()
	msg.Attachments = []core.Attachment{
		{Filename: "empty.txt", ContentType: "text/plain"},
		{Filename: "a.txt", ContentType: "text/plain", Data: []byte("hello")},
	}
	rc, err := tr.Send(context.Background(), msg)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := f.Messages()
	if len(got) != 1 || len(got[0].Attachments) != 1 || got[0].Attachments[0].Filename != "a.txt" {
		t.Fatalf("recorded %+v", got)
	}
	if !strings.Contains(rc.Response, "empty.txt") {
		t.Errorf("response %q does not name the attachment left out", rc.Response)
	}
}
