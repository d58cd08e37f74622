package migration_test

import (
	"context"
	"maps"
	"testing"

	"github.com/mailsvc/mailsvc/app/migration"
	"github.com/mailsvc/mailsvc/core"
)

// TestAPIProvidersImported: the API providers WP Mail SMTP, Easy WP
// SMTP, FluentSMTP, Post SMTP and SureMails keep are imported as the
// drivers that serve them, their keys read (decrypted or decoded the
// plugin's way), a key the plugin pinned by a constant missing. Where
// a key is read, the imported settings validate with the driver's
// schema.
func TestAPIProvidersImported(t *testing.T) {
	ctx := context.Background()
	wpms := func(mailer string, group map[string]any) map[string]any {
		return map[string]any{"mail": map[string]any{"mailer": mailer, "from_email": "shop@example.com", "from_name": "Shop", "from_email_force": true},
			mailer: group}
	}
	fluent := func(provider string, fields map[string]any) map[string]any {
		ps := map[string]any{"provider": provider, "sender_email": "shop@example.com", "sender_name": "Shop", "force_from_email": "no", "key_store": "db"}
		maps.Copy(ps, fields)
		return map[string]any{"use_encrypt": "yes", "test": "TEST", "misc": map[string]any{"default_connection": "c1"},
			"connections": map[string]any{"c1": map[string]any{"title": provider, "provider_settings": ps}}}
	}
	fluentSealed := map[string]string{"fluentsmtp:TEST": "test", "fluentsmtp:SEALED": "fluent-key"}
	source := func(id string, site *stubSite) func(t *testing.T) migration.Candidate {
		return func(t *testing.T) migration.Candidate {
			src, ok := migration.Lookup(id)
			if !ok {
				t.Fatalf("source %s is not registered", id)
			}
			setup, err := src.Connections(ctx, site)
			if err != nil || len(setup.Candidates) != 1 {
				t.Fatalf("Connections = %+v, %v; want one candidate", setup, err)
			}
			return setup.Candidates[0]
		}
	}
	postSMTP := func(transport string, extra map[string]any, constants map[string]string) func(t *testing.T) migration.Candidate {
		return func(t *testing.T) migration.Candidate {
			o := migration.Dict{"transport_type": transport, "sender_email": "shop@example.com", "sender_name": "Shop", "prevent_sender_email_override": "1"}
			maps.Copy(o, extra)
			setup := migration.PostSMTPSetup(migration.PostSMTPInput{Options: o,
				Decode:   func(v string) (string, error) { return (&stubSite{}).Decrypt(ctx, migration.SchemeBase64, v) },
				Constant: func(n string) (string, bool) { v, ok := constants[n]; return v, ok }})
			return setup.Candidates[0]
		}
	}
	sureMails := func(typ string, fields map[string]any) func(t *testing.T) migration.Candidate {
		return func(t *testing.T) migration.Candidate {
			c := map[string]any{"id": "x1", "type": typ, "from_email": "shop@example.com", "from_name": "Shop", "force_from_email": false}
			maps.Copy(c, fields)
			setup := migration.SureMailsSetup(migration.Dict{"connections": map[string]any{"x1": c}},
				func(v string) (string, error) { return (&stubSite{}).Decrypt(ctx, migration.SchemeBase64Unpadded, v) })
			return setup.Candidates[0]
		}
	}
	tests := []struct {
		name     string
		get      func(t *testing.T) migration.Candidate
		driver   string
		settings map[string]any
		missing  []string
		issue    string
	}{
		{"wp mail smtp sendinblue", source(migration.SourceWPMailSMTP, &stubSite{options: map[string]any{"wp_mail_smtp": wpms("sendinblue", map[string]any{"api_key": "xkeysib-1", "domain": "example.com"})}}),
			"brevo", map[string]any{"api_key": "xkeysib-1", "from_email": "shop@example.com", "force_from": true}, nil, ""},
		{"wp mail smtp sparkpost eu", source(migration.SourceWPMailSMTP, &stubSite{options: map[string]any{"wp_mail_smtp": wpms("sparkpost", map[string]any{"api_key": "sp-1", "region": "EU"})}}),
			"sparkpost", map[string]any{"api_key": "sp-1", "region": "eu"}, nil, ""},
		{"wp mail smtp mailjet", source(migration.SourceWPMailSMTP, &stubSite{options: map[string]any{"wp_mail_smtp": wpms("mailjet", map[string]any{"api_key": "mj-1", "secret_key": "mj-s"})}}),
			"mailjet", map[string]any{"api_key": "mj-1", "api_secret": "mj-s"}, nil, ""},
		{"wp mail smtp resend", source(migration.SourceWPMailSMTP, &stubSite{options: map[string]any{"wp_mail_smtp": wpms("resend", map[string]any{"api_key": "re_1"})}}),
			"resend", map[string]any{"api_key": "re_1"}, nil, ""},
		{"wp mail smtp smtp2go", source(migration.SourceWPMailSMTP, &stubSite{options: map[string]any{"wp_mail_smtp": wpms("smtp2go", map[string]any{"api_key": "api-1"})}}),
			"smtp2go", map[string]any{"api_key": "api-1"}, nil, ""},
		{"wp mail smtp mailersend", source(migration.SourceWPMailSMTP, &stubSite{options: map[string]any{"wp_mail_smtp": wpms("mailersend", map[string]any{"api_key": "mlsn.1"})}}),
			"mailersend", map[string]any{"api_key": "mlsn.1"}, nil, ""},
		{"wp mail smtp elastic email", source(migration.SourceWPMailSMTP, &stubSite{options: map[string]any{"wp_mail_smtp": wpms("elasticemail", map[string]any{"api_key": "ee-1"})}}),
			"elasticemail", map[string]any{"api_key": "ee-1", "from_name": "Shop", "force_from": true}, nil, ""},
		{"wp mail smtp mandrill", source(migration.SourceWPMailSMTP, &stubSite{options: map[string]any{"wp_mail_smtp": wpms("mandrill", map[string]any{"api_key": "md-1"})}}),
			"mandrill", map[string]any{"api_key": "md-1"}, nil, ""},
		{"wp mail smtp sendlayer", source(migration.SourceWPMailSMTP, &stubSite{options: map[string]any{"wp_mail_smtp": wpms("sendlayer", map[string]any{"api_key": "sl-1"})}}),
			"sendlayer", map[string]any{"api_key": "sl-1"}, nil, ""},
		{"wp mail smtp smtp.com", source(migration.SourceWPMailSMTP, &stubSite{options: map[string]any{"wp_mail_smtp": wpms("smtpcom", map[string]any{"api_key": "sc-1", "channel": "shop"})}}),
			"smtpcom", map[string]any{"api_key": "sc-1", "channel": "shop"}, nil, ""},
		{"wp mail smtp smtp.com channel pinned", source(migration.SourceWPMailSMTP, &stubSite{
			options:   map[string]any{"wp_mail_smtp": wpms("smtpcom", map[string]any{"api_key": "sc-1", "channel": ""})},
			constants: map[string]string{"WPMS_ON": "true", "WPMS_SMTPCOM_CHANNEL": "shop"}}),
			"smtpcom", map[string]any{"api_key": "sc-1"}, []string{"channel"}, "WPMS_SMTPCOM_CHANNEL"},
		{"easy wp smtp mandrill", source(migration.SourceEasyWPSMTP, &stubSite{options: map[string]any{"easy_wp_smtp": wpms("mandrill", map[string]any{"api_key": "md-2"})}}),
			"mandrill", map[string]any{"api_key": "md-2"}, nil, ""},
		{"easy wp smtp sendlayer key pinned", source(migration.SourceEasyWPSMTP, &stubSite{
			options:   map[string]any{"easy_wp_smtp": wpms("sendlayer", map[string]any{"api_key": ""})},
			constants: map[string]string{"EASY_WP_SMTP_ON": "true", "EASY_WP_SMTP_SENDLAYER_API_KEY": "x"}}),
			"sendlayer", nil, []string{"api_key"}, "EASY_WP_SMTP_SENDLAYER_API_KEY"},
		{"fluentsmtp sendinblue decrypted", source(migration.SourceFluentSMTP, &stubSite{options: map[string]any{"fluentmail-settings": fluent("sendinblue", map[string]any{"api_key": "SEALED"})}, sealed: fluentSealed}),
			"brevo", map[string]any{"api_key": "fluent-key", "force_from": false}, nil, ""},
		{"fluentsmtp sparkpost", source(migration.SourceFluentSMTP, &stubSite{options: map[string]any{"fluentmail-settings": fluent("sparkpost", map[string]any{"api_key": "SEALED"})}, sealed: fluentSealed}),
			"sparkpost", map[string]any{"api_key": "fluent-key"}, nil, ""},
		{"fluentsmtp smtp2go", source(migration.SourceFluentSMTP, &stubSite{options: map[string]any{"fluentmail-settings": fluent("smtp2go", map[string]any{"api_key": "SEALED"})}, sealed: fluentSealed}),
			"smtp2go", map[string]any{"api_key": "fluent-key"}, nil, ""},
		{"fluentsmtp elastic email marketing", source(migration.SourceFluentSMTP, &stubSite{options: map[string]any{"fluentmail-settings": fluent("elasticmail", map[string]any{"api_key": "SEALED", "mail_type": "marketing"})}, sealed: fluentSealed}),
			"elasticemail", map[string]any{"api_key": "fluent-key"}, nil, "marketing"},
		{"fluentsmtp cloudflare", source(migration.SourceFluentSMTP, &stubSite{options: map[string]any{"fluentmail-settings": fluent("cloudflare", map[string]any{"api_key": "SEALED", "account_id": "acc-1"})}, sealed: fluentSealed}),
			"cloudflare", map[string]any{"api_key": "fluent-key", "account_id": "acc-1"}, nil, ""},
		{"fluentsmtp key sealed with another key", source(migration.SourceFluentSMTP, &stubSite{options: map[string]any{"fluentmail-settings": fluent("cloudflare", map[string]any{"api_key": "OTHER", "account_id": "acc-1"})}, sealed: fluentSealed}),
			"cloudflare", map[string]any{"account_id": "acc-1"}, []string{"api_key"}, ""},
		{"post smtp mandrill", postSMTP("mandrill_api", map[string]any{"mandrill_api_key": b64("md-key")}, nil), "mandrill", map[string]any{"api_key": "md-key", "force_from": true}, nil, ""},
		{"post smtp mailjet", postSMTP("mailjet_api", map[string]any{"mailjet_api_key": b64("mj"), "mailjet_secret_key": b64("mjs")}, nil), "mailjet", map[string]any{"api_key": "mj", "api_secret": "mjs"}, nil, ""},
		{"post smtp sendinblue", postSMTP("sendinblue_api", map[string]any{"sendinblue_api_key": b64("xkeysib")}, nil), "brevo", map[string]any{"api_key": "xkeysib"}, nil, ""},
		{"post smtp sparkpost", postSMTP("sparkpost_api", map[string]any{"sparkpost_api_key": b64("sp")}, nil), "sparkpost", map[string]any{"api_key": "sp"}, nil, ""},
		{"post smtp resend", postSMTP("resend_api", map[string]any{"resend_api_key": b64("re")}, nil), "resend", map[string]any{"api_key": "re"}, nil, ""},
		{"post smtp smtp2go", postSMTP("smtp2go_api", map[string]any{"smtp2go_api_key": b64("s2g")}, nil), "smtp2go", map[string]any{"api_key": "s2g"}, nil, ""},
		{"post smtp mailersend", postSMTP("mailersend_api", map[string]any{"mailersend_api_key": b64("ms")}, nil), "mailersend", map[string]any{"api_key": "ms"}, nil, ""},
		{"post smtp elastic email", postSMTP("elasticemail_api", map[string]any{"elasticemail_api_key": b64("ee")}, nil), "elasticemail", map[string]any{"api_key": "ee"}, nil, ""},
		{"post smtp mailtrap", postSMTP("mailtrap_api", map[string]any{"mailtrap_api_key": b64("mt")}, nil), "mailtrap", map[string]any{"api_key": "mt"}, nil, ""},
		{"post smtp emailit", postSMTP("emailit_api", map[string]any{"emailit_api_key": b64("secret_x")}, nil), "emailit", map[string]any{"api_key": "secret_x"}, nil, ""},
		{"post smtp emailit undecodable", postSMTP("emailit_api", map[string]any{"emailit_api_key": "!!"}, nil), "emailit", nil, []string{"api_key"}, ""},
		{"post smtp key pinned by POST_SMTP_API_KEY", postSMTP("mailtrap_api", map[string]any{"mailtrap_api_key": b64("mt")}, map[string]string{"POST_SMTP_API_KEY": "k"}),
			"mailtrap", map[string]any{"api_key": nil}, []string{"api_key"}, "MAILSVC_MAILTRAP_API_KEY"},
		{"suremails brevo", sureMails("BREVO", map[string]any{"api_key": enc("brevo")}), "brevo", map[string]any{"api_key": "brevo", "force_from": false}, nil, ""},
		{"suremails mailjet", sureMails("MAILJET", map[string]any{"api_key": enc("mj"), "secret_key": enc("mjs")}), "mailjet", map[string]any{"api_key": "mj", "api_secret": "mjs"}, nil, ""},
		{"suremails sparkpost eu", sureMails("SPARKPOST", map[string]any{"api_key": enc("sp"), "region": "eu"}), "sparkpost", map[string]any{"api_key": "sp", "region": "eu"}, nil, ""},
		{"suremails elastic email", sureMails("ELASTIC", map[string]any{"api_key": enc("ee"), "mail_type": "transactional"}), "elasticemail", map[string]any{"api_key": "ee"}, nil, ""},
		{"suremails emailit", sureMails("EMAILIT", map[string]any{"api_key": enc("secret_y")}), "emailit", map[string]any{"api_key": "secret_y"}, nil, ""},
		{"suremails mailersend", sureMails("MAILERSEND", map[string]any{"api_key": enc("ms")}), "mailersend", map[string]any{"api_key": "ms"}, nil, ""},
		{"suremails smtp2go without key", sureMails("SMTP2GO", nil), "smtp2go", nil, []string{"api_key"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.get(t)
			if c.Driver != tt.driver {
				t.Fatalf("driver %q, want %q (%+v)", c.Driver, tt.driver, c)
			}
			for k, want := range tt.settings {
				if got := c.Settings[k]; got != want {
					t.Errorf("settings[%s] = %#v, want %#v", k, got, want)
				}
			}
			if len(c.Missing) != len(tt.missing) || (len(tt.missing) > 0 && c.Missing[0] != tt.missing[0]) {
				t.Errorf("missing %v, want %v", c.Missing, tt.missing)
			}
			if tt.issue != "" && !hasIssue(c.Issues, tt.issue) {
				t.Errorf("issues %v lack %q", c.Issues, tt.issue)
			}
			d, ok := core.LookupDriver(c.Driver)
			if !ok || len(c.Missing) > 0 {
				return // a key is to be entered
			}
			if err := d.ValidateSettings(core.Settings(c.Settings).Clone()); err != nil {
				t.Errorf("the imported settings do not validate with %s: %v (%v)", c.Driver, err, c.Settings)
			}
		})
	}
}

// wantCandidate is what an importer should make of one connection.
type wantCandidate struct {
	driver, status string
	settings       map[string]any // nil value: not set
}

// checkCandidate fails t unless c is want.
func checkCandidate(t *testing.T, c migration.Candidate, want wantCandidate) {
	t.Helper()
	if c.Driver != want.driver || statusOf(c) != want.status {
		t.Errorf("%s (%s): driver %q status %s; want %q %s (missing %v, issues %v)", c.Key, c.SourceSlug, c.Driver, statusOf(c), want.driver, want.status, c.Missing, c.Issues)
	}
	for k, v := range want.settings {
		if c.Settings[k] != v {
			t.Errorf("%s settings[%s] = %#v, want %#v", c.Key, k, c.Settings[k], v)
		}
	}
}

// TestWPMailSMTPAPIMailers: WP Mail SMTP's Brevo (sendinblue),
// SparkPost, Mailjet, MailerSend, SMTP2GO and Resend mailers become
// connections of those drivers with their plain-text keys, SparkPost's
// region lower-cased; a key pinned by a WPMS_ constant is asked for.
func TestWPMailSMTPAPIMailers(t *testing.T) {
	src, _ := migration.Lookup(migration.SourceWPMailSMTP)
	option := func(mailer string, group map[string]any) map[string]any {
		return map[string]any{"mail": map[string]any{"mailer": mailer, "from_email": "shop@example.com", "from_name": "Shop"}, mailer: group}
	}
	tests := []struct {
		name      string
		mailer    string
		group     map[string]any
		constants map[string]string
		want      wantCandidate
	}{
		{"brevo", "sendinblue", map[string]any{"api_key": "xkeysib-1", "domain": "example.com"}, nil,
			wantCandidate{"brevo", migration.StatusReady, map[string]any{"api_key": "xkeysib-1", "from_email": "shop@example.com", "domain": nil}}},
		{"sparkpost eu", "sparkpost", map[string]any{"api_key": "sp-key", "region": "EU"}, nil,
			wantCandidate{"sparkpost", migration.StatusReady, map[string]any{"api_key": "sp-key", "region": "eu"}}},
		{"mailjet", "mailjet", map[string]any{"api_key": "mj-key", "secret_key": "mj-secret"}, nil,
			wantCandidate{"mailjet", migration.StatusReady, map[string]any{"api_key": "mj-key", "api_secret": "mj-secret"}}},
		{"mailersend", "mailersend", map[string]any{"api_key": "mlsn.1", "has_pro_plan": true}, nil,
			wantCandidate{"mailersend", migration.StatusReady, map[string]any{"api_key": "mlsn.1"}}},
		{"smtp2go", "smtp2go", map[string]any{"api_key": "api-1"}, nil,
			wantCandidate{"smtp2go", migration.StatusReady, map[string]any{"api_key": "api-1"}}},
		{"resend", "resend", map[string]any{"api_key": "re_1"}, nil,
			wantCandidate{"resend", migration.StatusReady, map[string]any{"api_key": "re_1"}}},
		{"mailjet secret pinned", "mailjet", map[string]any{"api_key": "mj-key", "secret_key": ""},
			map[string]string{"WPMS_ON": "true", "WPMS_MAILJET_SECRET_KEY": "x"},
			wantCandidate{"mailjet", migration.StatusNeedsPassword, map[string]any{"api_secret": nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := &stubSite{options: map[string]any{"wp_mail_smtp": option(tt.mailer, tt.group)}, constants: tt.constants}
			setup, err := src.Connections(context.Background(), site)
			if err != nil || len(setup.Candidates) != 1 {
				t.Fatalf("Connections = %+v, %v", setup, err)
			}
			checkCandidate(t, setup.Candidates[0], tt.want)
		})
	}
}

// TestFluentSMTPAPIProviders: FluentSMTP's Brevo (sendinblue),
// SparkPost and SMTP2GO connections become connections of those
// drivers, their encrypted api_key opened.
func TestFluentSMTPAPIProviders(t *testing.T) {
	src, _ := migration.Lookup(migration.SourceFluentSMTP)
	conn := func(provider, key string) map[string]any {
		return map[string]any{"title": provider, "provider_settings": map[string]any{"provider": provider, "sender_email": "shop@example.com", "api_key": key}}
	}
	site := &stubSite{
		options: map[string]any{"fluentmail-settings": map[string]any{
			"use_encrypt": "yes", "test": "enc-test",
			"misc":        map[string]any{"default_connection": "b"},
			"connections": map[string]any{"b": conn("sendinblue", "enc-brevo"), "s": conn("sparkpost", "enc-sp"), "g": conn("smtp2go", "enc-s2g"), "x": conn("smtp2go", "not-openable")},
		}},
		sealed: map[string]string{"fluentsmtp:enc-test": "test", "fluentsmtp:enc-brevo": "xkeysib-1", "fluentsmtp:enc-sp": "sp-key", "fluentsmtp:enc-s2g": "api-1"},
	}
	setup, err := src.Connections(context.Background(), site)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]wantCandidate{
		"b": {"brevo", migration.StatusReady, map[string]any{"api_key": "xkeysib-1", "from_email": "shop@example.com"}},
		"s": {"sparkpost", migration.StatusReady, map[string]any{"api_key": "sp-key"}},
		"g": {"smtp2go", migration.StatusReady, map[string]any{"api_key": "api-1"}},
		"x": {"smtp2go", migration.StatusNeedsPassword, map[string]any{"api_key": nil}},
	}
	if len(setup.Candidates) != len(want) {
		t.Fatalf("%d candidates, want %d", len(setup.Candidates), len(want))
	}
	for _, c := range setup.Candidates {
		checkCandidate(t, c, want[c.Key])
	}
}
