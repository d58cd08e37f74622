package migration_test

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/app/migration"
)

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
