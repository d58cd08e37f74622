package intake

import (
	"github.com/mailsvc/mailsvc/internal/testenv"

	"github.com/mailsvc/mailsvc/test/servicetest"

	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/mailparse"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// TestPHPMailThroughSendmailWhileServiceStopped sets PHP's sendmail_path
// to `mailsvc sendmail -t -i` and calls PHP's own mail() while the
// service is stopped: mail() must return true (the message is queued in
// the database), and the message must reach the sink once the service
// starts again. With the database unreachable, mail() returns false.
func TestPHPMailThroughSendmailWhileServiceStopped(t *testing.T) {
	php := testenv.PHP(t)
	sink := smtpsink.Start(t)
	dir := t.TempDir()
	svc := servicetest.Start(t, dir)
	pw := adminPassword(t, svc)
	useSink(t, svc, basic("admin", pw), sink.Host(), sink.Port())
	svc.Stop(t)

	// A wrapper as docs/operations.md shows: PHP clears the environment.
	wrapper := filepath.Join(dir, "mailsvc-sendmail")
	script := "#!/bin/sh\nMAILSVC_ENV_FILE= MAILSVC_DATA_DIR=" + filepath.Join(dir, "data") + " exec " + servicetest.Binary + " sendmail \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	mailFromPHP := func(sendmailPath string) string {
		cmd := exec.Command(php, "-n", "-d", "sendmail_path="+sendmailPath, "-r", `
$headers = array( 'From' => 'Site <site@example.org>', 'Cc' => 'cy@example.org', 'Bcc' => 'hidden@example.org', 'Content-Type' => 'text/plain; charset=UTF-8' );
var_export( mail( 'Al <al@example.org>', 'php-mail-subject', "Grüße from PHP\n.\nafter a lone dot", $headers ) );`)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("php: %v\n%s", err, out.String())
		}
		return strings.TrimSpace(out.String())
	}
	if got := mailFromPHP(wrapper + " -t -i"); !strings.HasSuffix(got, "true") {
		t.Fatalf("mail() with the service stopped returned %s", got)
	}

	down := filepath.Join(dir, "mailsvc-sendmail-db-down")
	script = "#!/bin/sh\nMAILSVC_ENV_FILE= MAILSVC_DB='mysql:root@tcp(127.0.0.1:1)/mailsvc' exec " + servicetest.Binary + " sendmail \"$@\"\n"
	if err := os.WriteFile(down, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := mailFromPHP(down + " -t -i"); !strings.HasSuffix(got, "false") {
		t.Errorf("mail() with the database down returned %s", got)
	}

	if n := len(sink.Messages()); n != 0 {
		t.Fatalf("the sink received %d messages while the service was stopped", n)
	}
	svc2 := servicetest.Start(t, dir)
	got, err := sink.WaitFor(1, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	env := slices.Clone(got[0].To)
	slices.Sort(env)
	if strings.Join(env, ",") != "al@example.org,cy@example.org,hidden@example.org" {
		t.Errorf("envelope %v", env)
	}
	m, err := mailparse.Parse(bytes.NewReader(got[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "php-mail-subject" || strings.TrimRight(m.Text, "\n") != "Grüße from PHP\n.\nafter a lone dot" || m.From.Email != "site@example.org" {
		t.Errorf("delivered subject %q text %q from %v", m.Subject, m.Text, m.From)
	}
	if strings.Contains(string(got[0].Data), "hidden@example.org") {
		t.Error("the Bcc address was delivered in the message")
	}
	// The outcome is recorded just after the sink accepts the message.
	d := findLog(t, svc2, basic("admin", pw), "php-mail-subject")
	for deadline := time.Now().Add(30 * time.Second); d.Status != "delivered" && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		d = findLog(t, svc2, basic("admin", pw), "php-mail-subject")
	}
	if d.Source != "sendmail" || d.Status != "delivered" {
		t.Errorf("log source %q status %q", d.Source, d.Status)
	}
}
