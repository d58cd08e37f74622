package intake

import (
	"github.com/mailsvc/mailsvc/test/servicetest"

	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"

	"github.com/mailsvc/mailsvc/adapters/mailparse"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// TestIntakeOnWordPress runs sendmail and the SMTP listener against a real
// WordPress site on MariaDB: users and application passwords are made by
// WordPress itself, and both ways in reach the sink.
func TestIntakeOnWordPress(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	sink := smtpsink.Start(t)
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpi_", EnvironmentType: "local"})
	site.CreateUser(t, "boss", "boss@example.com", "administrator", "Boss-pass-123")
	site.CreateUser(t, "reader", "reader@example.com", "subscriber", "Reader-pass-123")
	bossPW := site.CreateApplicationPassword(t, "boss", "smtp client")
	readerPW := site.CreateApplicationPassword(t, "reader", "smtp client")

	smtpAddr := servicetest.FreeAddr(t)
	// The site is "local" (application passwords over plain HTTP), which
	// the staging guard would capture: this one is production.
	svc := servicetest.Start(t, t.TempDir(), "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_SMTP_LISTEN="+smtpAddr, "MAILSVC_ENVIRONMENT=production")
	admin := basic("boss", bossPW)
	useSink(t, svc, admin, sink.Host(), sink.Port())

	t.Run("sendmail", func(t *testing.T) {
		msg := withAttachments("From: WordPress <wordpress@example.org>\nTo: al@example.org\nBcc: hidden@example.org\nSubject: wp-sendmail\n", "from cron")
		if _, errOut, code := result(svc.Run(msg, "sendmail", "-t", "-i")); code != 0 {
			t.Fatalf("sendmail: exit %d %s", code, errOut)
		}
	})

	t.Run("SMTP AUTH", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			client   sasl.Client
			wantCode int
		}{
			{"administrator", sasl.NewPlainClient("", "boss", bossPW), 0},
			{"administrator by email, LOGIN", sasl.NewLoginClient("boss@example.com", bossPW), 0},
			{"subscriber", sasl.NewPlainClient("", "reader", readerPW), 535},
			{"login password instead of an application password", sasl.NewPlainClient("", "boss", "Boss-pass-123"), 535},
			{"another user's application password", sasl.NewPlainClient("", "boss", readerPW), 535},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := smtpsink.Dial(t, smtpAddr)
				if err := c.Auth(tc.client); smtpCode(err) != tc.wantCode || (tc.wantCode == 0 && err != nil) {
					t.Fatalf("AUTH: %v, want code %d", err, tc.wantCode)
				}
			})
		}
	})

	t.Run("SMTP message", func(t *testing.T) {
		c := smtpsink.Dial(t, smtpAddr)
		if err := c.Auth(sasl.NewPlainClient("", "boss", bossPW)); err != nil {
			t.Fatal(err)
		}
		reply, err := smtpsink.Send(c, "app@example.org", []string{"al@example.org"}, "From: app@example.org\r\nTo: al@example.org\r\nSubject: wp-smtp\r\n\r\nover SMTP\r\n")
		if err != nil {
			t.Fatal(err)
		}
		d := findLog(t, svc, admin, "wp-smtp")
		if reply != fmt.Sprintf("2.0.0 OK: queued as %d", d.ID) || d.Source != "smtp" {
			t.Errorf("reply %q, log %d source %q", reply, d.ID, d.Source)
		}
	})

	got, err := sink.WaitFor(2, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		m, err := mailparse.Parse(bytes.NewReader(r.Data))
		if err != nil {
			t.Fatal(err)
		}
		switch m.Subject {
		case "wp-sendmail":
			if strings.Join(r.To, ",") != "al@example.org,hidden@example.org" || strings.Contains(string(r.Data), "hidden@example.org") {
				t.Errorf("sendmail message: envelope %v", r.To)
			}
			assertAttachments(t, m.Attachments, withAttachmentsWant)
		case "wp-smtp":
			if strings.TrimRight(m.Text, "\n") != "over SMTP" {
				t.Errorf("SMTP message text %q", m.Text)
			}
		default:
			t.Errorf("unexpected message %q", m.Subject)
		}
	}
}
