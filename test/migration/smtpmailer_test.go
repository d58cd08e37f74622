package migration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// wantConn is what an import answer must say of one connection.
type wantConn struct {
	status, from, to string
	def, fallback    bool
}

// checkConns compares an import answer with want (by key) and returns
// the connection ids it reports. written says whether connections were
// written (not a dry run): then ready and needs_authorization ones have
// an id and the others none.
func checkConns(t *testing.T, res *importResult, want map[string]wantConn, written bool) map[string]int64 {
	t.Helper()
	if len(res.Connections) != len(want) {
		t.Fatalf("%d connections, want %d: %+v", len(res.Connections), len(want), res.Connections)
	}
	ids := map[string]int64{}
	for key, w := range want {
		c := res.connection(t, key)
		if c.Status != w.status || c.Conversion.From != w.from || c.Conversion.To != w.to {
			t.Errorf("%s: status %q conversion %q→%q, want %q %q→%q (missing %v, issues %v)",
				key, c.Status, c.Conversion.From, c.Conversion.To, w.status, w.from, w.to, c.Missing, c.Issues)
		}
		if c.WasDefault != w.def || c.WasFallback != w.fallback {
			t.Errorf("%s: was_default %v was_fallback %v, want %v %v", key, c.WasDefault, c.WasFallback, w.def, w.fallback)
		}
		creatable := w.status == "ready" || w.status == "needs_authorization"
		if got := c.ConnectionID != nil; got != (written && creatable) {
			t.Errorf("%s: connection_id %v, want one: %v", key, c.ConnectionID, written && creatable)
		}
		if c.ConnectionID != nil {
			ids[key] = *c.ConnectionID
		}
	}
	return ids
}

// noSecret fails when b shows one of the secrets unmasked.
func noSecret(t *testing.T, what string, b []byte, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if strings.Contains(string(b), sec) {
			t.Errorf("%s shows the secret %q unmasked", what, sec)
		}
	}
}

// sendThrough sends a test email through connection id and requires the
// sink to receive it authenticated as user: proof that the imported
// password is the real one.
func sendThrough(t *testing.T, s *migrationSite, sink *smtpsink.Sink, id int64, user string) {
	t.Helper()
	var res struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}
	before := len(sink.Messages())
	s.callJSON(t, "POST", "/test-email", fmt.Sprintf(`{"to":"check@example.com","connection_id":%d}`, id), http.StatusOK, &res)
	if !res.Success {
		t.Fatalf("test email through connection %d failed: %s", id, res.Message)
	}
	msgs, err := sink.WaitFor(before+1, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := msgs[len(msgs)-1]; got.Username != user {
		t.Errorf("sink authenticated %q, want %q", got.Username, user)
	}
	if sink.AuthFailures() != 0 {
		t.Errorf("%d failed authentications at the sink", sink.AuthFailures())
	}
}

// importedLogs returns the logs imported from source, by subject.
func importedLogs(t *testing.T, s *migrationSite, source string) map[string]core.Log {
	t.Helper()
	out := map[string]core.Log{}
	for _, l := range s.logs(t) {
		if l.Source == "import:"+source {
			out[l.Message.Subject] = l
		}
	}
	return out
}

// importLogsInTwoChunks imports source's log of rows rows (more than 200,
// at most 400), requiring a chunk of 200 and one of the rest, and returns
// the imported logs by subject, requiring rows of them.
func importLogsInTwoChunks(t *testing.T, s *migrationSite, source string, rows int) map[string]core.Log {
	t.Helper()
	runs := s.importAllLogs(t, source, "")
	if len(runs) != 2 || runs[0].Logs.Imported != 200 || runs[1].Logs.Imported != rows-200 || !runs[1].Logs.Done {
		t.Fatalf("%d log chunks, last %+v; want 200 then %d", len(runs), runs[len(runs)-1].Logs, rows-200)
	}
	logs := importedLogs(t, s, source)
	if len(logs) != rows {
		t.Fatalf("%d imported logs, want %d", len(logs), rows)
	}
	return logs
}

// checkDefault requires the service's default (and fallback, when not 0)
// connection to be the given ids.
func checkDefault(t *testing.T, s *migrationSite, def, fallback int64) {
	t.Helper()
	st := s.settings(t)
	if fmt.Sprint(st["default_connection_id"]) != fmt.Sprint(def) {
		t.Errorf("default_connection_id %v, want %d", st["default_connection_id"], def)
	}
	if fallback != 0 && fmt.Sprint(st["fallback_connection_id"]) != fmt.Sprint(fallback) {
		t.Errorf("fallback_connection_id %v, want %d", st["fallback_connection_id"], fallback)
	}
}

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
