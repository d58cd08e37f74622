package migration_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/migration"
	"github.com/mailsvc/mailsvc/core"
)

func TestWPSMTPLegacyCandidate(t *testing.T) {
	base := func(user, pass string) migration.Dict {
		return migration.Dict{"from": "shop@example.com", "fromname": "Shop", "host": "smtp.example.com", "smtpsecure": "ssl",
			"port": "465", "smtpauth": "yes", "username": user, "password": pass, "deactivate": "", "disable_logs": "no"}
	}
	tests := []struct {
		name       string
		opts       migration.Dict
		user, pass any
		status     string
		issue      string
	}{
		{"base64 credentials (1.2.4+)", base(b64("sue@example.com"), b64("pa:ss")), "sue@example.com", "pa:ss", migration.StatusReady, "base64"},
		{"plain credentials (1.2.3)", base("sue@example.com", "p@ss word!"), "sue@example.com", "p@ss word!", migration.StatusReady, "as typed"},
		{"one of each needs review", base(b64("sue@example.com"), "p@ss word!"), "sue@example.com", "p@ss word!", migration.StatusNeedsReview, "not stored the same way"},
		{"no password", base("sue", ""), "sue", nil, migration.StatusNeedsPassword, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := migration.WPSMTPLegacyCandidate(tt.opts)
			if c.Driver != "smtp" || c.Key != "legacy_smtp_id" {
				t.Fatalf("driver %q key %q", c.Driver, c.Key)
			}
			if c.Settings["username"] != tt.user || c.Settings["password"] != tt.pass {
				t.Errorf("credentials = %#v / %#v, want %#v / %#v", c.Settings["username"], c.Settings["password"], tt.user, tt.pass)
			}
			if got := statusOf(c); got != tt.status {
				t.Errorf("status = %s, want %s", got, tt.status)
			}
			if tt.issue != "" && !hasIssue(c.Issues, tt.issue) {
				t.Errorf("issues %v lack %q", c.Issues, tt.issue)
			}
			if c.Settings["encryption"] != "ssl" || c.Settings["port"] != int64(465) {
				t.Errorf("settings = %v", c.Settings)
			}
		})
	}
}

func TestWPSMTPSetup(t *testing.T) {
	provider := func(id, name, host string, active bool) map[string]any {
		return map[string]any{"id": id, "name": name, "description": "", "from_email": name + "@example.com", "from_name": "Shop",
			"smtp_host": host, "smtp_port": int64(587), "smtp_auth": "yes", "smtp_username": "apikey", "smtp_password": "plain-" + name,
			"disable_logs": false, "smtp_secure": "tls", "is_active": active}
	}
	providers := migration.Dict{
		"a1": provider("a1", "sendgrid", "", false),
		"b2": provider("b2", "other", "mail.example.com", true),
		"c3": provider("c3", "amazon_ses", "", false),
		"d4": provider("d4", "brevo", "smtp-relay.brevo.com", false),
	}
	setup := migration.WPSMTPSetup(providers, migration.Dict{"host": "old.example.com", "from": "x@example.com"}, false)
	if len(setup.Candidates) != 4 || setup.DefaultKey != "b2" || setup.Candidates[0].Key != "b2" {
		t.Fatalf("setup = %+v: want 4 providers, b2 (active) first and default, legacy ignored", setup)
	}
	want := map[string]struct{ host, status, slug string }{
		"a1": {"smtp.sendgrid.net", migration.StatusReady, "sendgrid"},
		"b2": {"mail.example.com", migration.StatusReady, "other"},
		"c3": {"", migration.StatusNeedsReview, "amazon_ses"},
		"d4": {"smtp-relay.brevo.com", migration.StatusReady, "brevo"},
	}
	for _, c := range setup.Candidates {
		w := want[c.Key]
		if c.Driver != "smtp" || c.SourceSlug != w.slug || c.Settings["host"] != w.host || statusOf(c) != w.status {
			t.Errorf("%s: %s→%s host %v status %s; want %s→smtp host %q %s", c.Key, c.SourceSlug, c.Driver, c.Settings["host"], statusOf(c), w.slug, w.host, w.status)
		}
		if c.Settings["password"] != "plain-"+w.slug {
			t.Errorf("%s password = %v (Solid Mail stores it as typed)", c.Key, c.Settings["password"])
		}
	}
	t.Run("legacy migration that failed", func(t *testing.T) {
		s := migration.WPSMTPSetup(migration.Dict{"legacy_smtp_id": provider("legacy_smtp_id", "other", "h.example.com", true)}, nil, true)
		if statusOf(s.Candidates[0]) != migration.StatusNeedsReview || !hasIssue(s.Candidates[0].Issues, "could not verify") {
			t.Errorf("candidate = %+v", s.Candidates[0])
		}
	})
	t.Run("legacy only", func(t *testing.T) {
		s := migration.WPSMTPSetup(nil, migration.Dict{"host": "old.example.com", "from": "x@example.com", "smtpauth": "no", "disable_logs": "yes"}, false)
		if len(s.Candidates) != 1 || s.DefaultKey != "legacy_smtp_id" || statusOf(s.Candidates[0]) != migration.StatusReady || !hasIssue(s.Issues, "log was off") {
			t.Errorf("setup = %+v", s)
		}
	})
}

func TestWPSMTPLogs(t *testing.T) {
	src, _ := migration.Lookup(migration.SourceWPSMTP)
	logs := src.Logs()
	arrTo := `a:2:{i:0;s:15:"ann@example.org";i:1;s:15:"bob@example.org";}`
	site := &stubSite{
		serial: map[string]any{arrTo: []any{"ann@example.org", "bob@example.org"}},
		tables: map[string][]migration.Row{"wpsmtp_logs": {
			{"mail_id": "1", "timestamp": "1782900000", "to": "ann@example.org", "subject": "Hi", "message": "Hello", "headers": "Cc: cid@example.org\nFrom: Shop <shop@example.com>"},
			{"mail_id": "2", "timestamp": "1782900060", "to": arrTo, "subject": "Fail", "message": "<div>x</div>", "headers": "", "error": "Could not connect to SMTP host."},
			{"mail_id": "3", "timestamp": "1782900120", "to": "", "subject": "none", "message": "x", "headers": ""},
		}},
	}
	ctx := context.Background()
	entries, err := logs.ReadLogs(ctx, site, 0, 200)
	if err != nil || len(entries) != 3 {
		t.Fatalf("ReadLogs = %d, %v", len(entries), err)
	}
	e := entries[0]
	if e.Status != core.StatusDelivered || !e.Time.Equal(time.Unix(1782900000, 0)) || e.Message.Text != "Hello" ||
		len(e.Message.Cc) != 1 || e.Message.From.Email != "shop@example.com" {
		t.Errorf("row 1 = %+v", e)
	}
	e = entries[1]
	if e.Status != core.StatusFailed || e.Error != "Could not connect to SMTP host." || len(e.Message.To) != 2 || e.Message.HTML == "" {
		t.Errorf("row 2 = %+v", e)
	}
	if !entries[2].Skip {
		t.Errorf("row without recipient not skipped: %+v", entries[2])
	}
	if rest, _ := logs.ReadLogs(ctx, site, 2, 200); len(rest) != 1 || rest[0].Position != 3 {
		t.Errorf("ReadLogs after 2 = %+v", rest)
	}
}
