package all_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/core"
	_ "github.com/mailsvc/mailsvc/drivers/all"
)

func TestBuiltInDriversAreRegistered(t *testing.T) {
	for _, slug := range []string{"smtp", "sendgrid", "mailgun", "postmark", "ses", "outlook", "gmail", "zoho"} {
		d, ok := core.LookupDriver(slug)
		if !ok {
			t.Errorf("driver %q is not registered", slug)
			continue
		}
		if d.New == nil || len(d.Fields) == 0 {
			t.Errorf("driver %q has no constructor or schema", slug)
		}
	}
}
