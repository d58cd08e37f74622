package migration_test

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/migration"
	"github.com/mailsvc/mailsvc/core"
)

// enc is SureMails' Settings::encrypt: base64 without '=' padding.
func enc(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) }

func TestSureMailsSetup(t *testing.T) {
	decode := func(v string) (string, error) {
		return (&stubSite{}).Decrypt(context.Background(), migration.SchemeBase64Unpadded, v)
	}
	conn := func(id, typ, from string, prio int64, fields map[string]any) map[string]any {
		c := map[string]any{"id": id, "type": typ, "connection_title": typ + " one", "from_email": from, "from_name": "Shop",
			"force_from_email": true, "force_from_name": false, "priority": prio, "created_at": "2026-01-01 10:00:00"}
		for k, v := range fields {
			c[k] = v
		}
		return c
	}
	opts := migration.Dict{
		"connections": map[string]any{
			"s1": conn("s1", "SMTP", "shop@example.com", 1, map[string]any{"host": "smtp.example.com", "port": int64(587), "encryption": "TLS",
				"username": "sue", "password": enc("pw1"), "auto_tls": true}),
			"a2": conn("a2", "AWS", "shop@example.com", 2, map[string]any{"username": enc("AKIA"), "password": enc("awsSecret"),
				"region": map[string]any{"label": "EU", "value": "eu-west-1"}}),
			"g3": conn("g3", "GMAIL", "other@example.com", 3, map[string]any{"client_id": "cid", "client_secret": enc("gsecret"), "refresh_token": enc("grt")}),
			"m4": conn("m4", "MAILGUN", "shop@example.com", 4, map[string]any{"api_key": enc("mgkey"), "domain": "mg.example.com", "region": "EU"}),
			"p5": conn("p5", "POSTMARK", "x@example.com", 5, map[string]any{"server_token": enc("pmtok"), "message_stream": "outbound"}),
			"b6": conn("b6", "BREVO", "x@example.com", 6, map[string]any{"api_key": enc("brevo")}),
			"z7": conn("z7", "ZOHO", "x@example.com", 7, map[string]any{"client_id": "zid", "client_secret": enc("zs"), "region": "eu"}),
			"o8": conn("o8", "OUTLOOK", "x@example.com", 8, map[string]any{"client_id": enc("oid")}),
			"k9": conn("k9", "SENDGRID", "x@example.com", 9, map[string]any{"api_key": "%%%"}),
			"sp": conn("sp", "SPARKPOST", "x@example.com", 10, map[string]any{"api_key": enc("sp-key"), "region": "EU"}),
			"mj": conn("mj", "MAILJET", "x@example.com", 11, map[string]any{"api_key": enc("mj-key"), "secret_key": enc("mj-secret")}),
			"ms": conn("ms", "MAILERSEND", "x@example.com", 12, map[string]any{"api_key": enc("mlsn.1")}),
			"s2": conn("s2", "SMTP2GO", "x@example.com", 13, map[string]any{}),
		},
		"default_connection": map[string]any{"type": "SMTP", "email": "shop@example.com", "id": "s1", "connection_title": "SMTP one"},
		"log_emails":         "no", "delete_email_logs_after": "30_days", "email_simulation": "no",
	}
	setup := migration.SureMailsSetup(opts, decode)
	if setup.DefaultKey != "s1" || setup.FallbackKey != "a2" {
		t.Errorf("default %q fallback %q, want s1 and a2 (next with the same sender)", setup.DefaultKey, setup.FallbackKey)
	}
	if !hasIssue(setup.Issues, "log was off") {
		t.Errorf("issues %v", setup.Issues)
	}
	want := map[string]struct {
		driver, status string
		settings       map[string]any
	}{
		"s1": {"smtp", migration.StatusReady, map[string]any{"host": "smtp.example.com", "encryption": "tls", "auth": true, "username": "sue", "password": "pw1", "force_from": true}},
		"a2": {"ses", migration.StatusReady, map[string]any{"access_key": "AKIA", "secret": "awsSecret", "region": "eu-west-1"}},
		"g3": {"gmail", migration.StatusReady, map[string]any{"client_id": "cid", "client_secret": "gsecret", "refresh_token": "grt"}},
		"m4": {"mailgun", migration.StatusReady, map[string]any{"api_key": "mgkey", "domain": "mg.example.com", "region": "eu"}},
		"p5": {"postmark", migration.StatusReady, map[string]any{"api_key": "pmtok", "message_stream": "outbound"}},
		"b6": {"brevo", migration.StatusReady, map[string]any{"api_key": "brevo", "from_email": "x@example.com", "force_from": true}},
		"z7": {"zoho", migration.StatusNeedsAuthorization, map[string]any{"data_center": "eu", "client_secret": "zs"}},
		"o8": {"outlook", migration.StatusNeedsAuthorization, map[string]any{"client_id": "oid"}},
		"k9": {"sendgrid", migration.StatusNeedsPassword, map[string]any{"api_key": nil}},
		"sp": {"sparkpost", migration.StatusReady, map[string]any{"api_key": "sp-key", "region": "eu"}},
		"mj": {"mailjet", migration.StatusReady, map[string]any{"api_key": "mj-key", "api_secret": "mj-secret"}},
		"ms": {"mailersend", migration.StatusReady, map[string]any{"api_key": "mlsn.1"}},
		"s2": {"smtp2go", migration.StatusNeedsPassword, map[string]any{"api_key": nil}},
	}
	if len(setup.Candidates) != len(want) {
		t.Fatalf("%d candidates, want %d", len(setup.Candidates), len(want))
	}
	for _, c := range setup.Candidates {
		w := want[c.Key]
		if c.Driver != w.driver || statusOf(c) != w.status {
			t.Errorf("%s (%s): driver %q status %s; want %q %s (missing %v)", c.Key, c.SourceSlug, c.Driver, statusOf(c), w.driver, w.status, c.Missing)
		}
		for k, v := range w.settings {
			if c.Settings[k] != v {
				t.Errorf("%s settings[%s] = %#v, want %#v", c.Key, k, c.Settings[k], v)
			}
		}
	}
}

func TestSureMailsLogs(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tz database")
	}
	src, _ := migration.Lookup(migration.SourceSureMails)
	headers := `a:2:{i:0;s:23:"Content-Type: text/html";i:1;s:26:"Reply-To: help@example.com";}`
	response := `a:1:{i:0;a:2:{s:5:"retry";i:0;s:7:"Message";s:12:"Auth failed.";}}`
	site := &stubSite{loc: paris,
		serial: map[string]any{
			headers:  []any{"Content-Type: text/html", "Reply-To: help@example.com"},
			response: []any{map[string]any{"retry": int64(0), "Message": "Auth failed."}},
		},
		tables: map[string][]migration.Row{"suremails_email_log": {
			{"id": "10", "email_from": "Shop <shop@example.com>", "email_to": "Ann <ann@example.org>, bob@example.org", "subject": "Sent",
				"body": "<b>hi</b>", "headers": headers, "status": "sent", "response": "", "connection": "SMTP", "created_at": "2026-07-01 12:00:00"},
			{"id": "11", "email_from": "shop@example.com", "email_to": "ann@example.org", "subject": "Failed", "body": "x", "headers": "",
				"status": "failed", "response": response, "connection": "SMTP", "created_at": "2026-07-01 12:01:00"},
			{"id": "12", "email_from": "shop@example.com", "email_to": "ann@example.org", "subject": "Blocked", "body": "x", "headers": "",
				"status": "blocked", "response": "", "connection": "SMTP", "created_at": "2026-07-01 12:02:00"},
			{"id": "13", "email_from": "shop@example.com", "email_to": "ann@example.org", "subject": "Pending", "body": "x", "headers": "",
				"status": "pending", "response": "", "connection": "SMTP", "created_at": "bad"},
		}},
	}
	entries, err := src.Logs().ReadLogs(context.Background(), site, 0, 200)
	if err != nil || len(entries) != 4 {
		t.Fatalf("ReadLogs = %d, %v", len(entries), err)
	}
	e := entries[0]
	if e.Status != core.StatusDelivered || !e.Time.Equal(time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)) || e.Message.HTML != "<b>hi</b>" ||
		len(e.Message.To) != 2 || e.Message.To[0].Name != "Ann" || len(e.Message.ReplyTo) != 1 || e.Provider != "SMTP" {
		t.Errorf("sent row = %+v", e)
	}
	if entries[1].Status != core.StatusFailed || entries[1].Error != "Auth failed." {
		t.Errorf("failed row = %+v", entries[1])
	}
	if entries[2].Status != core.StatusFailed || !hasIssue([]string{entries[2].Error}, "Content Guard") {
		t.Errorf("blocked row = %+v", entries[2])
	}
	if entries[3].Status != core.StatusQueued || !entries[3].Skip {
		t.Errorf("pending row with a bad time = %+v, want queued and skipped", entries[3])
	}
}
