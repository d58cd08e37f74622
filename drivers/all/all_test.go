package all_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	_ "github.com/mailsvc/mailsvc/drivers/all"
	"github.com/mailsvc/mailsvc/drivers/brevo"
	"github.com/mailsvc/mailsvc/drivers/cloudflare"
	"github.com/mailsvc/mailsvc/drivers/elasticemail"
	"github.com/mailsvc/mailsvc/drivers/emailit"
	"github.com/mailsvc/mailsvc/drivers/gmail"
	"github.com/mailsvc/mailsvc/drivers/mailersend"
	"github.com/mailsvc/mailsvc/drivers/mailgun"
	"github.com/mailsvc/mailsvc/drivers/mailjet"
	"github.com/mailsvc/mailsvc/drivers/mailtrap"
	"github.com/mailsvc/mailsvc/drivers/mandrill"
	"github.com/mailsvc/mailsvc/drivers/outlook"
	"github.com/mailsvc/mailsvc/drivers/postmark"
	"github.com/mailsvc/mailsvc/drivers/resend"
	"github.com/mailsvc/mailsvc/drivers/sendgrid"
	"github.com/mailsvc/mailsvc/drivers/sendlayer"
	"github.com/mailsvc/mailsvc/drivers/smtp2go"
	"github.com/mailsvc/mailsvc/drivers/smtpcom"
	"github.com/mailsvc/mailsvc/drivers/sparkpost"
	"github.com/mailsvc/mailsvc/drivers/zoho"
)

func TestBuiltInDriversAreRegistered(t *testing.T) {
	for _, slug := range []string{"smtp", "sendgrid", "mailgun", "postmark", "ses", "outlook", "gmail", "zoho",
		"brevo", "sparkpost", "mailjet", "resend", "smtp2go", "mailersend",
		"elasticemail", "mandrill", "mailtrap", "sendlayer", "smtpcom", "emailit", "cloudflare"} {
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

// TestEndpointFieldsDeclareTheProviderHosts checks that every URL field of
// a built-in driver (each names one of the provider's endpoints) declares
// the provider's hosts, and that the endpoint the driver uses when the
// field is empty is one of them.
func TestEndpointFieldsDeclareTheProviderHosts(t *testing.T) {
	defaults := map[string][]string{
		"sendgrid/base_url":      {sendgrid.DefaultBaseURL, "https://api.eu.sendgrid.com"},
		"mailgun/base_url":       {mailgun.BaseURLUS, mailgun.BaseURLEU},
		"postmark/base_url":      {postmark.DefaultBaseURL},
		"gmail/base_url":         {gmail.DefaultBaseURL},
		"gmail/oauth_base_url":   {gmail.DefaultOAuthBaseURL, "https://oauth2.googleapis.com"},
		"outlook/base_url":       {outlook.DefaultBaseURL},
		"outlook/oauth_base_url": {outlook.DefaultOAuthBaseURL},
		"ses/custom_endpoint":    {"https://email.us-east-1.amazonaws.com", "https://email.eu-central-1.amazonaws.com/"},
		"ses/imds_endpoint":      {"http://169.254.169.254", "http://[fd00:ec2::254]"},
		"brevo/base_url":         {brevo.DefaultBaseURL, "https://api.sendinblue.com"},
		"sparkpost/base_url":     {sparkpost.BaseURLUS, sparkpost.BaseURLEU},
		"mailjet/base_url":       {mailjet.DefaultBaseURL},
		"resend/base_url":        {resend.DefaultBaseURL},
		"smtp2go/base_url":       {smtp2go.DefaultBaseURL},
		"mailersend/base_url":    {mailersend.DefaultBaseURL},
		"zoho/base_url":          nil,
		"mailtrap/base_url":      {mailtrap.DefaultBaseURL, mailtrap.BulkBaseURL},
		"sendlayer/base_url":     {sendlayer.DefaultBaseURL},
		"smtpcom/base_url":       {smtpcom.DefaultBaseURL},
		"emailit/base_url":       {emailit.DefaultBaseURL},
		"cloudflare/base_url":    {cloudflare.DefaultBaseURL},
		"elasticemail/base_url":  {elasticemail.DefaultBaseURL},
		"mandrill/base_url":      {mandrill.DefaultBaseURL},
		"zoho/oauth_base_url":    nil,
	}
	for _, dc := range zoho.DataCenters() {
		defaults["zoho/base_url"] = append(defaults["zoho/base_url"], zoho.MailURL(dc))
		defaults["zoho/oauth_base_url"] = append(defaults["zoho/oauth_base_url"], zoho.AccountsURL(dc))
	}
	seen := map[string]bool{}
	for _, d := range core.Drivers() {
		for _, f := range d.Fields {
			if f.Type != core.FieldURL {
				continue
			}
			name := d.Slug + "/" + f.Key
			seen[name] = true
			if len(f.Hosts) == 0 {
				t.Errorf("%s: a URL field without hosts", name)
			}
			urls, ok := defaults[name]
			if !ok || len(urls) == 0 {
				t.Errorf("%s: no default endpoint listed in this test", name)
			}
			for _, u := range urls {
				if msg := core.CheckEndpoint(u, f.Hosts); msg != "" {
					t.Errorf("%s: the provider's own %s is refused: %s", name, u, msg)
				}
			}
		}
	}
	for name, urls := range defaults {
		if urls != nil && !seen[name] {
			t.Errorf("%s: no such endpoint field", name)
		}
	}
}

// TestBuiltInDriversDeclareTheirDestinations: every field that says where
// a connection's secrets go is marked Destination in the schema GET
// /transports serves, and no other field is.
func TestBuiltInDriversDeclareTheirDestinations(t *testing.T) {
	want := map[string][]string{
		"smtp":         {"host", "port", "encryption"},
		"sendgrid":     {"base_url"},
		"mailgun":      {"base_url"},
		"postmark":     {"base_url"},
		"ses":          {"custom_endpoint", "smtp_host", "smtp_port", "smtp_encryption"},
		"outlook":      {"base_url", "oauth_base_url", "smtp_host", "smtp_port"},
		"gmail":        {"base_url", "oauth_base_url", "smtp_host", "smtp_port"},
		"zoho":         {"base_url", "oauth_base_url"},
		"elasticemail": {"base_url"},
		"cloudflare":   {"base_url"},
		"emailit":      {"base_url"},
		"smtpcom":      {"base_url"},
		"sendlayer":    {"base_url"},
		"mailtrap":     {"base_url"},
		"mandrill":     {"base_url"},
		"brevo":        {"base_url"},
		"sparkpost":    {"base_url"},
		"mailjet":      {"base_url"},
		"resend":       {"base_url"},
		"smtp2go":      {"base_url"},
		"mailersend":   {"base_url"},
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

// TestJSONDriversSchema: each JSON API driver serves the common settings
// (api_key, from_email, from_name, force_from, base_url), says where its
// console shows the key (setup_help), and shows base_url and its webhook
// secrets under "Advanced" only.
func TestJSONDriversSchema(t *testing.T) {
	for _, slug := range []string{"brevo", "sparkpost", "mailjet", "resend", "smtp2go", "mailersend",
		"elasticemail", "mandrill", "mailtrap", "sendlayer", "smtpcom", "emailit", "cloudflare"} {
		d, ok := core.LookupDriver(slug)
		if !ok {
			t.Errorf("%s is not registered", slug)
			continue
		}
		if d.SetupHelp == "" || d.Name == "" || d.RecipientCaps.Zero() {
			t.Errorf("%s: name %q, setup help %q, caps %+v", slug, d.Name, d.SetupHelp, d.RecipientCaps)
		}
		for _, key := range []string{"api_key", "from_email", "from_name", "force_from", "base_url"} {
			f := d.Field(key)
			if f == nil {
				t.Errorf("%s has no %s", slug, key)
				continue
			}
			if wantAdvanced := key == "base_url"; f.Advanced != wantAdvanced {
				t.Errorf("%s %s: advanced %v, want %v", slug, key, f.Advanced, wantAdvanced)
			}
		}
		for _, f := range d.Fields {
			if strings.HasPrefix(f.Key, "webhook_") && !f.Advanced {
				t.Errorf("%s %s is not advanced", slug, f.Key)
			}
		}
	}
}

// TestDriversSpeakToAFirstTimeUser checks what the setup wizard needs of
// every registered driver: where its console shows the key (SetupHelp),
// a user name typed in clear (never a password field), at least one
// field that is not advanced, and the common tuning fields (concurrency,
// rate) folded under Advanced.
func TestDriversSpeakToAFirstTimeUser(t *testing.T) {
	for _, d := range core.Drivers() {
		t.Run(d.Slug, func(t *testing.T) {
			if d.SetupHelp == "" {
				t.Error("no SetupHelp: the wizard cannot say where the provider's console shows the key")
			}
			essential := 0
			for _, f := range d.Fields {
				if strings.HasSuffix(f.Key, "username") && f.Type == core.FieldPassword {
					t.Errorf("%s is a password field: a user name is typed in clear", f.Key)
				}
				if !f.Advanced {
					essential++
				}
				if f.Required && f.Advanced {
					t.Errorf("%s is required and advanced", f.Key)
				}
			}
			if essential == 0 {
				t.Error("every field is advanced: the wizard would show nothing")
			}
			for _, key := range []string{core.SettingMaxConcurrency, core.SettingAdaptiveConcurrency, core.SettingMaxPerSecond} {
				if f := d.Field(key); f == nil || !f.Advanced {
					t.Errorf("%s is not under Advanced", key)
				}
			}
		})
	}
	smtp, _ := core.LookupDriver("smtp")
	for _, key := range []string{"helo", "timeout", "insecure_skip_verify", "force_from"} {
		if f := smtp.Field(key); f == nil || !f.Advanced {
			t.Errorf("smtp's %s is not under Advanced", key)
		}
	}
	for _, key := range []string{"host", "port", "encryption", "username", "password"} {
		if f := smtp.Field(key); f == nil || f.Advanced {
			t.Errorf("smtp's %s is not among the essential fields", key)
		}
	}
}
