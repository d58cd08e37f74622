package all_test

import (
	"slices"
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

// TestBuiltInDriversDeclareTheirDestinations: every field that says where
// a connection's secrets go is marked Destination in the schema GET
// /transports serves, and no other field is.
func TestBuiltInDriversDeclareTheirDestinations(t *testing.T) {
	want := map[string][]string{
		"smtp":     {"host", "port", "encryption"},
		"sendgrid": {"base_url"},
		"mailgun":  {"base_url"},
		"postmark": {"base_url"},
		"ses":      {"custom_endpoint", "smtp_host", "smtp_port", "smtp_encryption"},
		"outlook":  {"base_url", "oauth_base_url", "smtp_host", "smtp_port"},
		"gmail":    {"base_url", "oauth_base_url", "smtp_host", "smtp_port"},
		"zoho":     {"base_url", "oauth_base_url"},
	}
	for slug, keys := range want {
		d, _ := core.LookupDriver(slug)
		var got []string
		for _, f := range d.Fields {
			if f.Destination {
				got = append(got, f.Key)
			}
		}
		if !slices.Equal(got, keys) {
			t.Errorf("%s destinations %v, want %v", slug, got, keys)
		}
	}
}
