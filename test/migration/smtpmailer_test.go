package migration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// TestSMTPMailer imports SMTP Mailer's one connection, saved as its
// settings page saves it (smtp_mailer_update_option, base64 password).
func TestSMTPMailer(t *testing.T) {
	const password = "Mailer pa$$ 42"
	s := newSite(t)
	sink := smtpsink.Start(t, smtpsink.WithAuth("mailer-user", password))
	s.activatePlugins(t, "smtp-mailer/main.php")
	s.setOption(t, "smtp_mailer_options", fmt.Sprintf(`array(
	'smtp_host' => '127.0.0.1', 'smtp_auth' => 'true', 'smtp_username' => 'mailer-user',
	'smtp_password' => base64_encode( %s ), 'type_of_encryption' => 'none', 'smtp_port' => %s,
	'from_email' => 'shop@example.com', 'from_name' => 'Shop', 'force_from_name' => '',
	'force_from_email' => '1', 'force_from_address' => '', 'disable_ssl_verification' => '',
)`, wpsite.PHPString(password), wpsite.PHPString(fmt.Sprint(sink.Port()))))
	want := map[string]wantConn{"primary": {status: "ready", from: "smtp", to: "smtp", def: true}}

	e, ok := s.scan(t, true)["smtp-mailer"]
	if !ok || !e.Active || e.Connections == nil || *e.Connections != 1 || e.LogsAvailable {
		t.Fatalf("scan entry %+v (found %v): want active, 1 connection, no log", e, ok)
	}
	noSecret(t, "dry run", s.importAnswer(t, "dry run", `{"source":"smtp-mailer","dry_run":true}`), password)
	checkConns(t, s.mustImport(t, `{"source":"smtp-mailer","dry_run":true}`), want, false)
	if n := len(s.connections(t)); n != 0 {
		t.Fatalf("dry run created %d connections", n)
	}
	r := s.cli(t, "import", "smtp-mailer", "--dry-run")
	if r.Code != 0 || !strings.Contains(r.Stdout, "ready") || !strings.Contains(r.Stdout, "smtp → smtp") {
		t.Errorf("mailsvc import smtp-mailer --dry-run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	noSecret(t, "mailsvc import --dry-run", []byte(r.Stdout+r.Stderr), password)
	if n := len(s.connections(t)); n != 0 {
		t.Fatalf("the command's dry run created %d connections", n)
	}
	res := s.mustImport(t, `{"source":"smtp-mailer","import_logs":true}`)
	ids := checkConns(t, res, want, true)
	if res.Logs.Available || res.Logs.Imported != 0 {
		t.Errorf("logs %+v: SMTP Mailer keeps none", res.Logs)
	}
	c := res.connection(t, "primary")
	if c.Settings["host"] != "127.0.0.1" || c.Settings["force_from"] != true || c.Settings["password"] == password || c.Settings["password"] == nil {
		t.Errorf("settings %v", c.Settings)
	}
	checkDefault(t, s, ids["primary"], 0)
	again := checkConns(t, s.mustImport(t, `{"source":"smtp-mailer"}`), want, true)
	if again["primary"] != ids["primary"] || len(s.connections(t)) != 1 {
		t.Errorf("re-import: id %d (was %d), %d connections", again["primary"], ids["primary"], len(s.connections(t)))
	}
	sendThrough(t, s, sink, ids["primary"], "mailer-user")
}
