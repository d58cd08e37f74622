package intake

import (
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/servicetest"

	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/adapters/mailparse"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

func smtpCode(err error) int {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

func TestSubmissionListener(t *testing.T) {
	sink := smtpsink.Start(t)
	dir := t.TempDir()
	smtpAddr := servicetest.FreeAddr(t)
	svc := servicetest.Start(t, dir, "MAILSVC_SMTP_LISTEN="+smtpAddr, "MAILSVC_SMTP_MAX_BYTES=65536")
	adminPW := adminPassword(t, svc)
	admin := basic("admin", adminPW)
	subscriberPW := addUser(t, svc, "reader", "subscriber")
	editorPW := addUser(t, svc, "writer", "editor")
	useSink(t, svc, admin, sink.Host(), sink.Port())

	t.Run("AUTH", func(t *testing.T) {
		tests := []struct {
			name     string
			client   sasl.Client
			wantCode int
		}{
			{"PLAIN administrator", sasl.NewPlainClient("", "admin", adminPW), 0},
			{"LOGIN administrator by email", sasl.NewLoginClient("admin@localhost.localdomain", adminPW), 0},
			{"PLAIN administrator, password with spaces as WordPress shows it", sasl.NewPlainClient("", "admin", chunk(adminPW)), 0},
			{"PLAIN subscriber", sasl.NewPlainClient("", "reader", subscriberPW), 535},
			{"LOGIN editor lacks manage_options", sasl.NewLoginClient("writer", editorPW), 535},
			{"PLAIN wrong password", sasl.NewPlainClient("", "admin", strings.ToUpper(adminPW)), 535},
			{"LOGIN unknown user", sasl.NewLoginClient("ghost", adminPW), 535},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c := smtpsink.Dial(t, smtpAddr)
				err := c.Auth(tt.client)
				if smtpCode(err) != tt.wantCode || (tt.wantCode == 0 && err != nil) {
					t.Fatalf("AUTH: %v, want code %d", err, tt.wantCode)
				}
			})
		}
	})

	t.Run("MAIL before AUTH is refused", func(t *testing.T) {
		c := smtpsink.Dial(t, smtpAddr)
		if err := c.Mail("site@example.org", nil); smtpCode(err) != 530 {
			t.Fatalf("MAIL: %v, want 530", err)
		}
	})

	t.Run("oversize message", func(t *testing.T) {
		c := smtpsink.Dial(t, smtpAddr)
		if n, ok := c.MaxMessageSize(); !ok || n != 65536 {
			t.Errorf("EHLO SIZE %d %v, want 65536", n, ok)
		}
		if err := c.Auth(sasl.NewPlainClient("", "admin", adminPW)); err != nil {
			t.Fatal(err)
		}
		big := "From: site@example.org\r\nTo: al@example.org\r\nSubject: big\r\n\r\n" + strings.Repeat(strings.Repeat("x", 70)+"\r\n", 1000)
		if _, err := smtpsink.Send(c, "site@example.org", []string{"al@example.org"}, big); smtpCode(err) != 552 {
			t.Fatalf("DATA: %v, want 552", err)
		}
	})

	t.Run("delivered to the sink", func(t *testing.T) {
		sink.Reset()
		c := smtpsink.Dial(t, smtpAddr)
		if err := c.Auth(sasl.NewLoginClient("admin", adminPW)); err != nil {
			t.Fatal(err)
		}
		msg := withAttachments("From: App <app@example.org>\nTo: Al <al@example.org>\nSubject: via-smtp-listener\n", "over SMTP")
		msg = strings.ReplaceAll(msg, "\n", "\r\n")
		reply, err := smtpsink.Send(c, "bounce@example.org", []string{"al@example.org", "hidden@example.org"}, msg)
		if err != nil {
			t.Fatal(err)
		}
		d := findLog(t, svc, admin, "via-smtp-listener")
		if want := fmt.Sprintf("2.0.0 OK: queued as %d", d.ID); reply != want {
			t.Errorf("reply %q, want %q", reply, want)
		}
		if d.Source != "smtp" || d.Message.From != (core.Address{Name: "App", Email: "app@example.org"}) || fmt.Sprint(emails(d.Message.To)) != "[al@example.org]" || fmt.Sprint(emails(d.Message.Bcc)) != "[hidden@example.org]" {
			t.Errorf("log %+v", d)
		}
		got, err := sink.WaitFor(1, 60*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got[0].To) != "[al@example.org hidden@example.org]" {
			t.Errorf("envelope %v", got[0].To)
		}
		m, err := mailparse.Parse(bytes.NewReader(got[0].Data))
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != "via-smtp-listener" || m.Text != "over SMTP" || m.HTML != "<p>HTML body</p>" {
			t.Errorf("delivered %q %q %q", m.Subject, m.Text, m.HTML)
		}
		if strings.Contains(string(got[0].Data), "hidden@example.org") {
			t.Errorf("the Bcc recipient appears in the delivered message")
		}
		assertAttachments(t, m.Attachments, withAttachmentsWant)
	})
}

// chunk formats an application password as WordPress displays it.
func chunk(pw string) string {
	var parts []string
	for i := 0; i < len(pw); i += 4 {
		parts = append(parts, pw[i:min(i+4, len(pw))])
	}
	return strings.Join(parts, " ")
}

func TestSubmissionListenerSTARTTLS(t *testing.T) {
	sink := smtpsink.Start(t)
	dir := t.TempDir()
	certFile, keyFile, pool := smtpsink.SelfSignedFiles(t, dir)
	// On all interfaces (not loopback): AUTH only after STARTTLS.
	port := strings.TrimPrefix(servicetest.FreeAddr(t), "127.0.0.1:")
	svc := servicetest.Start(t, dir, "MAILSVC_SMTP_LISTEN=0.0.0.0:"+port, "MAILSVC_SMTP_TLS_CERT="+certFile, "MAILSVC_SMTP_TLS_KEY="+keyFile)
	adminPW := adminPassword(t, svc)
	useSink(t, svc, basic("admin", adminPW), sink.Host(), sink.Port())
	addr := "127.0.0.1:" + port

	plain, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.Hello("client.test"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := plain.Extension("STARTTLS"); !ok {
		t.Fatal("STARTTLS not offered")
	}
	if ok, _ := plain.Extension("AUTH"); ok {
		t.Error("AUTH offered over plain text on a non-loopback listener")
	}
	if err := plain.Auth(sasl.NewPlainClient("", "admin", adminPW)); err == nil {
		t.Fatal("AUTH accepted over plain text on a non-loopback listener")
	}

	c, err := smtp.DialStartTLS(addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Auth(sasl.NewPlainClient("", "admin", adminPW)); err != nil {
		t.Fatal(err)
	}
	if ok, mechs := c.Extension("AUTH"); !ok || mechs != "PLAIN LOGIN" {
		t.Errorf("AUTH after STARTTLS: %v %q", ok, mechs)
	}
	if state, ok := c.TLSConnectionState(); !ok || !state.HandshakeComplete {
		t.Fatal("no TLS after STARTTLS")
	}
	if _, err := smtpsink.Send(c, "site@example.org", []string{"al@example.org"}, "From: site@example.org\r\nTo: al@example.org\r\nSubject: over-tls\r\n\r\nsecret\r\n"); err != nil {
		t.Fatal(err)
	}
	got, err := sink.WaitFor(1, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got[0].Data), "Subject: over-tls") {
		t.Errorf("sink got %s", got[0].Data)
	}
}
