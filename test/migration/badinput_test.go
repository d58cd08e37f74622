package migration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestBadInput sends the import and scan routes and `mailsvc import` bad
// input: each answer is a 400 or 422 in the spec's error shape naming the
// field, and nothing is written.
func TestBadInput(t *testing.T) {
	s := newSite(t)
	// FluentSMTP with one plaintext SMTP connection and a 3-row log, and
	// WP Mail SMTP Lite, both present; no other plugin.
	s.setOption(t, "fluentmail-settings", `array(
	'mappings'    => array( 'a@example.com' => md5( 'a@example.com' ) ),
	'connections' => array( md5( 'a@example.com' ) => array( 'title' => 'SMTP server', 'provider_settings' => array(
		'provider' => 'smtp', 'sender_email' => 'a@example.com', 'sender_name' => 'A', 'host' => 'smtp.example.com', 'port' => '587',
		'auth' => 'yes', 'username' => 'a', 'password' => 'plain-pass', 'encryption' => 'tls', 'key_store' => 'db',
	) ) ),
	'misc'        => array( 'log_emails' => 'yes', 'default_connection' => md5( 'a@example.com' ), 'fallback_connection' => '' ),
	'use_encrypt' => '',
)`)
	s.CreateTable(t, fluentLogTable)
	s.insertRows(t, "fsmpt_email_logs", `array_map( function ( $i ) {
	return array( 'to' => maybe_serialize( array( array( 'email' => "r$i@example.com", 'name' => '' ) ) ), 'from' => 'a@example.com',
		'subject' => "S $i", 'body' => 'b', 'headers' => maybe_serialize( array() ), 'status' => 'sent', 'created_at' => current_time( 'mysql' ) );
}, range( 1, 3 ) )`)
	s.setOption(t, "wp_mail_smtp", `array( 'mail' => array( 'mailer' => 'mail', 'from_email' => 'a@example.com', 'from_name' => 'A' ) )`)

	nothingWritten := func(t *testing.T, logs int) {
		t.Helper()
		if c := s.connections(t); len(c) != 0 {
			t.Errorf("bad input created connections: %+v", c)
		}
		if l := s.logs(t); len(l) != logs {
			t.Errorf("%d logs, want %d", len(l), logs)
		}
		if st := s.settings(t); st["default_connection_id"] != nil {
			t.Errorf("bad input set the default connection: %v", st["default_connection_id"])
		}
	}
	expectError := func(t *testing.T, method, path, body string, status int, code, field string) {
		t.Helper()
		got, b := s.call(t, method, path, body)
		if got != status {
			t.Fatalf("%s %s %s: status %d, want %d: %s", method, path, body, got, status, b)
		}
		var e apiError
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("error body %s: %v", b, err)
		}
		if e.Code != code || e.Data.Status != status || e.Message == "" {
			t.Errorf("error %+v, want code %s data.status %d and a message", e, code, status)
		}
		if field != "" && e.Data.Errors[field] == "" && !strings.Contains(e.Message, field) {
			t.Errorf("error does not name %s: %s", field, b)
		}
	}

	tests := []struct {
		name, body string
		status     int
		code       string
		field      string
	}{
		{"malformed json", `{"source":"fluent-smtp",`, 400, "bad_request", ""},
		{"not an object", `"fluent-smtp"`, 400, "bad_request", ""},
		{"max_logs wrong type", `{"source":"fluent-smtp","max_logs":"all"}`, 400, "bad_request", "max_logs"},
		{"no source", `{}`, 422, "validation_error", "source"},
		{"unknown source", `{"source":"carrier-pigeon-smtp"}`, 422, "validation_error", "source"},
		{"source not on the site", `{"source":"post-smtp"}`, 422, "validation_error", "source"},
		{"max_logs below 0", `{"source":"fluent-smtp","import_logs":true,"max_logs":-1}`, 422, "validation_error", "max_logs"},
		{"max_logs above 20000", `{"source":"fluent-smtp","import_logs":true,"max_logs":20001}`, 422, "validation_error", "max_logs"},
		{"retention_days below 0", `{"source":"fluent-smtp","dry_run":true,"retention_days":-1}`, 422, "validation_error", "retention_days"},
		{"cursor not ours", `{"source":"fluent-smtp","import_logs":true,"cursor":"not-a-cursor"}`, 422, "validation_error", "cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expectError(t, "POST", "/tools/migration/import", tt.body, tt.status, tt.code, tt.field)
		})
	}
	t.Run("scan counts not a boolean", func(t *testing.T) {
		expectError(t, "GET", "/tools/migration/scan?counts=maybe", "", 422, "validation_error", "counts")
	})
	t.Run("mailsvc import", func(t *testing.T) {
		for _, args := range [][]string{
			{"import", "carrier-pigeon-smtp"},
			{"import", "post-smtp"},
			{"import", "fluent-smtp", "--logs", "--max-logs", "20001"},
			{"import", "fluent-smtp", "--logs", "--max-logs", "-1"},
		} {
			r := s.cli(t, args...)
			if r.Code == 0 || r.Stderr == "" {
				t.Errorf("mailsvc %s: exit %d, stderr %q; want a failure that says why", strings.Join(args, " "), r.Code, r.Stderr)
			}
			if strings.Contains(r.Stderr, "panic") {
				t.Errorf("mailsvc %s panicked:\n%s", strings.Join(args, " "), r.Stderr)
			}
		}
	})
	nothingWritten(t, 0)

	t.Run("cursor from another source", func(t *testing.T) {
		res := s.mustImport(t, `{"source":"fluent-smtp","import_connections":false,"import_logs":true,"max_logs":2}`)
		if res.Logs.Imported != 2 || res.Logs.Cursor == "" {
			t.Fatalf("first chunk: %+v", res.Logs)
		}
		expectError(t, "POST", "/tools/migration/import",
			fmt.Sprintf(`{"source":"wp-mail-smtp","import_logs":true,"cursor":%q}`, res.Logs.Cursor), 422, "validation_error", "cursor")
		nothingWritten(t, 2)
		// The cursor still continues its own run.
		next := s.mustImport(t, fmt.Sprintf(`{"source":"fluent-smtp","import_connections":false,"import_logs":true,"max_logs":2,"cursor":%q}`, res.Logs.Cursor))
		if next.Logs.Imported != 0 || !next.Logs.Done || next.Logs.ImportedTotal != 2 {
			t.Errorf("continuing a finished max_logs run: %+v", next.Logs)
		}
		status, _ := s.call(t, "GET", "/logs", "")
		if status != http.StatusOK {
			t.Errorf("GET /logs: %d", status)
		}
	})
}
