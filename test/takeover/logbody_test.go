package takeover

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// storedLog is what GET /logs/{id} says of a log's body.
type storedLog struct {
	ID              int64  `json:"id"`
	Status          string `json:"status"`
	Source          string `json:"source"`
	BodyMode        string `json:"body_mode"`
	RedactedCount   int    `json:"redacted_count"`
	AttachmentsKept bool   `json:"attachments_kept"`
	Message         struct {
		Subject string `json:"subject"`
		Text    string `json:"text"`
		HTML    string `json:"html"`
	} `json:"message"`
}

// TestLogBodyOnWordPress runs WordPress's own password reset
// (retrieve_password) through the bridge and the service: the sink gets
// the working link, the log keeps it redacted, and WordPress still
// accepts the key. Then the none mode with a per-source override, a
// pattern published by the site's mail_svc_log_redact_patterns filter,
// the refused resend, and `mailsvc logs redact` over a log stored whole.
func TestLogBodyOnWordPress(t *testing.T) {
	site := installBridgeSite(t, wpsite.Options{Prefix: "wpb_"})
	// A plugin of the site's own (a must-use plugin file), and the site's
	// redaction pattern for its order codes.
	plugin := `<?php
function my_plugin_mail( $subject, $body ) { return wp_mail( 'buyer@example.com', $subject, $body ); }
add_filter( 'mail_svc_log_redact_patterns', function ( $patterns ) { $patterns[] = '/order code: ([A-Z0-9]+)/i'; return $patterns; } );
`
	if err := os.WriteFile(filepath.Join(site.ContentDir, "mu-plugins", "my-plugin.php"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	site.CreateUser(t, "resetme", "resetme@example.com", "subscriber", "Old-pass-123")
	sink := smtpsink.Start(t)
	dir := t.TempDir()
	env := environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1")
	svc := servicetest.StartEnv(t, dir, env)
	user, pass := site.AdminLogin, site.CreateApplicationPassword(t, site.AdminLogin, "log body test")
	api := func(method, path, body string, want int, v any) []byte {
		t.Helper()
		return callWant(t, method, svc.Base+path, body, user, pass, want, v)
	}
	deliverToSink(t, svc.Base, user, pass, sink, "")

	// finalLog waits for the log of subject to be delivered with its mode
	// applied, and returns it.
	finalLog := func(subject string) storedLog {
		t.Helper()
		var d storedLog
		deadline := time.Now().Add(60 * time.Second)
		for {
			var list []storedLog
			api("GET", "/logs?search="+url.QueryEscape(subject), "", 200, &list)
			if len(list) == 1 {
				api("GET", fmt.Sprintf("/logs/%d", list[0].ID), "", 200, &d)
				if d.Status == "delivered" && d.BodyMode != "" {
					return d
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no delivered log for %q: %+v", subject, d)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// 1. The password reset, in the default (redacted) mode.
	if out := site.PHP(t, `var_export( retrieve_password( 'resetme' ) );`); !strings.Contains(out, "true") {
		t.Fatalf("retrieve_password: %s", out)
	}
	got, err := sink.WaitFor(1, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	text := parse(t, got[0].Data).Text
	// WordPress 6.1 writes action, key, login; 7.1 login, key, action
	// and the language.
	link, redacted := `wp-login\.php\?action=rp&key=([A-Za-z0-9]+)&login=resetme`, "action=rp&key=[redacted]&login=resetme"
	if wpsite.AtLeast(t, "7.1") {
		link, redacted = `wp-login\.php\?login=resetme&key=([A-Za-z0-9]+)&action=rp&wp_lang=en_US`, "login=resetme&key=[redacted]&action=rp&wp_lang=en_US"
	}
	m := regexp.MustCompile(link).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the mail at the sink has no working reset link (WordPress %s):\n%s", wpsite.Version(t), text)
	}
	key := m[1]
	reset := finalLog("Password Reset")
	if strings.Contains(reset.Message.Text, key) || !strings.Contains(reset.Message.Text, redacted) ||
		reset.BodyMode != "redacted" || reset.RedactedCount != 1 || reset.Source != "wordpress" {
		t.Fatalf("stored reset log: %+v", reset)
	}
	check := `$u = check_password_reset_key( ` + wpsite.PHPString(key) + `, 'resetme' ); echo is_wp_error( $u ) ? 'error: ' . $u->get_error_code() : 'valid';`
	if out := site.PHP(t, check); !strings.Contains(out, "valid") {
		t.Fatalf("WordPress refuses the key from the sink: %s", out)
	}
	b := api("POST", fmt.Sprintf("/logs/%d/resend", reset.ID), "", 409, nil)
	if !strings.Contains(string(b), "this message held a one-time link that was not kept") {
		t.Fatalf("resend of the redacted log: %s", b)
	}

	// 2. The site's pattern, published by the bridge, redacts too.
	site.PHP(t, `my_plugin_mail( 'Your order', 'Thanks! Order code: AB12CD.' );`)
	if d := finalLog("Your order"); d.Message.Text != "Thanks! Order code: [redacted]." || d.Source != "my-plugin" {
		t.Fatalf("site pattern: %+v", d)
	}

	// 3. none for every source but the site's plugin, which keeps full
	// bodies.
	api("PUT", "/settings", `{"log_body":"none","log_body_sources":{"my-plugin":"full"}}`, 200, nil)
	site.PHP(t, `wp_mail( 'someone@example.com', 'Core notice', 'Body that must not be kept' ); my_plugin_mail( 'Plugin receipt', 'Receipt body, order code: ZZ9.' );`)
	if d := finalLog("Core notice"); d.Message.Text != "" || d.Message.HTML != "" || d.BodyMode != "none" {
		t.Errorf("none mode kept %+v", d)
	} else if b := api("POST", fmt.Sprintf("/logs/%d/resend", d.ID), "", 409, nil); !strings.Contains(string(b), "keeps no body") {
		t.Errorf("resend of a none log: %s", b)
	}
	plain := finalLog("Plugin receipt")
	if plain.Message.Text != "Receipt body, order code: ZZ9." || plain.BodyMode != "full" {
		t.Errorf("the override did not win: %+v", plain)
	}
	if got, err := sink.WaitFor(4, 60*time.Second); err != nil || len(got) != 4 {
		t.Fatalf("sink: %d messages, %v", len(got), err)
	}

	// The table itself, not only the API, holds no live key.
	db, err := sql.Open("mysql", site.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var leaks int
	if err := db.QueryRow(`SELECT COUNT(*) FROM wpb_mailsvc_logs WHERE text_body LIKE ? OR html_body LIKE ? OR message LIKE ?`,
		"%"+key+"%", "%"+key+"%", "%"+key+"%").Scan(&leaks); err != nil || leaks != 0 {
		t.Fatalf("%d stored logs hold the reset key (%v)", leaks, err)
	}

	// 4. A log stored whole before the modes existed (its mode cleared
	// as the upgrade leaves old rows), redacted by the command.
	if _, err := db.Exec(`UPDATE wpb_mailsvc_logs SET body_mode = '' WHERE id = ?`, plain.ID); err != nil {
		t.Fatal(err)
	}
	api("PUT", "/settings", `{"log_body":"redacted","log_body_sources":{}}`, 200, nil)
	out, err := run(t, dir, env, "logs", "redact", "--batch", "2")
	if err != nil || !strings.Contains(out, "1 rewritten, 1 values redacted") {
		t.Fatalf("logs redact: %v\n%s", err, out)
	}
	var after storedLog
	api("GET", fmt.Sprintf("/logs/%d", plain.ID), "", 200, &after)
	if after.Message.Text != "Receipt body, order code: [redacted]." || after.BodyMode != "redacted" || after.RedactedCount != 1 {
		t.Errorf("after logs redact: %+v", after)
	}
	if out, err := run(t, dir, env, "logs", "redact"); err != nil || !strings.Contains(out, "Done: 0 logs read") {
		t.Errorf("a second run: %v\n%s", err, out)
	}
}
