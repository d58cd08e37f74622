package migration_test

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/mailsvc/mailsvc/app/migration"
)

func TestEasyWPSMTPv1Candidate(t *testing.T) {
	opts := func(pass string, extra map[string]any) migration.Dict {
		d := migration.Dict{
			"from_email_field": "shop@example.com", "from_name_field": "Shop", "force_from_name_replace": int64(1),
			"smtp_settings": map[string]any{"host": "smtp.example.com", "type_encryption": "tls", "port": int64(587),
				"autentication": "yes", "username": "sue", "password": pass, "encrypt_pass": int64(1), "insecure_ssl": false},
		}
		maps.Copy(d, extra)
		return d
	}
	decrypt := func(v string) (string, error) {
		if v == "SEALED" {
			return `it's "secret"`, nil
		}
		return "", migration.ErrUndecryptable
	}
	tests := []struct {
		name      string
		opts      migration.Dict
		encrypted bool
		password  any
		status    string
		issue     string
	}{
		{"aes-ctr encrypted", opts("SEALED", nil), true, `it's "secret"`, migration.StatusReady, ""},
		{"encrypted with a lost key", opts("OTHER", nil), true, nil, migration.StatusNeedsPassword, "swpsmtp_enc_key"},
		{"base64, slashes stripped", opts(b64(`it\'s`), nil), false, "it's", migration.StatusReady, ""},
		{"very old plain text", opts("plain pass!", nil), false, "plain pass!", migration.StatusReady, ""},
		{"sender name not forced", opts("SEALED", map[string]any{"force_from_name_replace": int64(0), "reply_to_email": "r@example.com"}), true,
			`it's "secret"`, migration.StatusReady, "kept the message's sender name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := migration.EasyWPSMTPv1Candidate(tt.opts, tt.encrypted, decrypt)
			if c.Driver != "smtp" || c.Key != "primary" || c.Settings["force_from"] != true || c.Settings["username"] != "sue" {
				t.Fatalf("candidate = %+v", c)
			}
			if c.Settings["password"] != tt.password {
				t.Errorf("password = %#v, want %#v", c.Settings["password"], tt.password)
			}
			if got := statusOf(c); got != tt.status {
				t.Errorf("status = %s, want %s", got, tt.status)
			}
			if tt.issue != "" && !hasIssue(c.Issues, tt.issue) {
				t.Errorf("issues %v lack %q", c.Issues, tt.issue)
			}
		})
	}
}

func TestEasyWPSMTPSource(t *testing.T) {
	src, ok := migration.Lookup(migration.SourceEasyWPSMTP)
	if !ok {
		t.Fatal("easy-wp-smtp is not registered")
	}
	ctx := context.Background()
	v2 := func(mailer string, groups map[string]any) map[string]any {
		o := map[string]any{"mail": map[string]any{"mailer": mailer, "from_email": "shop@example.com", "from_name": "Shop", "from_email_force": true}}
		maps.Copy(o, groups)
		return o
	}
	smtp := map[string]any{"smtp": map[string]any{"host": "smtp.example.com", "port": int64(465), "encryption": "ssl", "auth": true, "user": "sue",
		"pass": "c2VhbGVkLWJveC1vZi1lbm91Z2gtYnl0ZXMtZm9yLXNlY3JldGJveC0xMjM0NTY3OA=="}}
	tests := []struct {
		name      string
		site      *stubSite
		driver    string
		status    string
		password  any
		issue     string
		setupNote string
	}{
		{"v2 smtp opened with Easy WP SMTP's key", &stubSite{
			options: map[string]any{"easy_wp_smtp": v2("smtp", smtp), "swpsmtp_options": map[string]any{"from_email_field": "old@example.com"}},
			sealed:  map[string]string{"easywpsmtp:c2VhbGVkLWJveC1vZi1lbm91Z2gtYnl0ZXMtZm9yLXNlY3JldGJveC0xMjM0NTY3OA==": "v2pass"},
		}, "smtp", migration.StatusReady, "v2pass", "", "1.x settings are still stored"},
		{"v2 sealed with WP Mail SMTP's key only: not opened", &stubSite{
			options: map[string]any{"easy_wp_smtp": v2("smtp", smtp)},
			sealed:  map[string]string{"wpmailsmtp:c2VhbGVkLWJveC1vZi1lbm91Z2gtYnl0ZXMtZm9yLXNlY3JldGJveC0xMjM0NTY3OA==": "wrong"},
		}, "smtp", migration.StatusNeedsPassword, nil, "easy_wp_smtp_mail_key", ""},
		{"v2 constants pinned", &stubSite{
			options:   map[string]any{"easy_wp_smtp": v2("sendgrid", map[string]any{"sendgrid": map[string]any{"api_key": ""}})},
			constants: map[string]string{"EASY_WP_SMTP_ON": "true", "EASY_WP_SMTP_SENDGRID_API_KEY": "SG.x"},
		}, "sendgrid", migration.StatusNeedsPassword, nil, "EASY_WP_SMTP_SENDGRID_API_KEY is defined", ""},
		{"v2 intermediate constant spelling", &stubSite{
			options:   map[string]any{"easy_wp_smtp": v2("sendgrid", map[string]any{"sendgrid": map[string]any{"api_key": ""}})},
			constants: map[string]string{"EASY_WP_SMTP_ON": "1", "EasyWPSMTP_SENDGRID_API_KEY": "SG.x"},
		}, "sendgrid", migration.StatusNeedsPassword, nil, "EasyWPSMTP_SENDGRID_API_KEY", ""},
		{"v2 constants off without EASY_WP_SMTP_ON", &stubSite{
			options:   map[string]any{"easy_wp_smtp": v2("mailgun", map[string]any{"mailgun": map[string]any{"api_key": "key-1", "domain": "mg.example.com", "region": "EU"}})},
			constants: map[string]string{"EASY_WP_SMTP_MAILGUN_API_KEY": "ignored"},
		}, "mailgun", migration.StatusReady, nil, "", ""},
		{"v2 gmail through the vendor relay", &stubSite{
			options: map[string]any{"easy_wp_smtp": v2("gmail", map[string]any{"gmail": map[string]any{"client_id": "c", "client_secret": "s",
				"refresh_token": "rt", "relay_credentials": map[string]any{"token": "x"}}})},
		}, "gmail", migration.StatusNeedsAuthorization, nil, "vendor's relay", ""},
		{"v2 php mail unsupported", &stubSite{options: map[string]any{"easy_wp_smtp": v2("mail", nil)}}, "", migration.StatusUnsupported, nil, "", ""},
		{"v1 only", &stubSite{
			options: map[string]any{"swpsmtp_pass_encrypted": "1", "swpsmtp_options": map[string]any{"from_email_field": "shop@example.com",
				"smtp_settings": map[string]any{"host": "h.example.com", "type_encryption": "ssl", "port": "465", "autentication": "yes", "username": "u", "password": "V1BOX"}}},
			sealed: map[string]string{"easywpsmtp1:V1BOX": "v1pass"},
		}, "smtp", migration.StatusReady, "v1pass", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := src.Detect(ctx, tt.site)
			if err != nil || !d.Found {
				t.Fatalf("Detect = %+v, %v", d, err)
			}
			setup, err := src.Connections(ctx, tt.site)
			if err != nil || len(setup.Candidates) != 1 || setup.DefaultKey != "primary" {
				t.Fatalf("Connections = %+v, %v", setup, err)
			}
			c := setup.Candidates[0]
			if c.Driver != tt.driver || statusOf(c) != tt.status {
				t.Errorf("driver %q status %s; want %q %s (missing %v issues %v)", c.Driver, statusOf(c), tt.driver, tt.status, c.Missing, c.Issues)
			}
			if c.Settings["password"] != tt.password {
				t.Errorf("password = %#v, want %#v", c.Settings["password"], tt.password)
			}
			if tt.issue != "" && !hasIssue(c.Issues, tt.issue) {
				t.Errorf("issues %v lack %q", c.Issues, tt.issue)
			}
			if hasIssue(c.Issues, "WPMS_") || hasIssue(c.Issues, "wp_mail_smtp_mail_key") {
				t.Errorf("issues name WP Mail SMTP's constants or key: %v", c.Issues)
			}
			if tt.setupNote != "" && !hasIssue(setup.Issues, tt.setupNote) {
				t.Errorf("setup issues %v lack %q", setup.Issues, tt.setupNote)
			}
		})
	}
	t.Run("broken option is an error, not a failure", func(t *testing.T) {
		site := &stubSite{unread: map[string]bool{"easy_wp_smtp": true}}
		setup, err := src.Connections(ctx, site)
		if err != nil || len(setup.Errors) != 1 || len(setup.Candidates) != 0 {
			t.Fatalf("Connections = %+v, %v", setup, err)
		}
	})
	t.Run("no Pro log table", func(t *testing.T) {
		ok, reason, err := src.Logs().Available(ctx, &stubSite{})
		if err != nil || ok || reason == "" || errors.Is(err, migration.ErrUnreadable) {
			t.Fatalf("Available = %v %q %v", ok, reason, err)
		}
	})
}
