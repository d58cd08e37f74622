package smtp2go_test

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/smtp2go"
	"github.com/mailsvc/mailsvc/test/fakes/smtp2gofake"
)

const testKey = "api-0123456789ABCDEF0123456789ABCDEF"

// TestFailedRecipientsAreAFailure: SMTP2GO's 200 that took no recipient
// or failed one is a permanent failure, not a sent message.
func TestFailedRecipientsAreAFailure(t *testing.T) {
	tests := []struct{ name, body string }{
		{"none succeeded", `{"request_id":"r","data":{"succeeded":0,"failed":1,"failures":["ann@example.org"],"email_id":"1er8bV-6Tw0Mi-7h"}}`},
		{"one failed", `{"request_id":"r","data":{"succeeded":3,"failed":1,"failures":["bob@example.org"],"email_id":"1er8bV-6Tw0Mi-7h"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := smtp2gofake.New(testKey)
			defer f.Close()
			f.FailNext(1, 200, tc.body)
			tr := drivertest.NewTransport(t, smtp2go.Slug, core.Settings{"api_key": testKey, "base_url": f.URL})
			if _, err := tr.Send(context.Background(), drivertest.FullMessage()); err == nil || core.IsTemporary(err) {
				t.Fatalf("err %v, want a permanent failure", err)
			}
		})
	}
}
