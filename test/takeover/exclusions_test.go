package takeover

import (
	"bytes"
	"database/sql"
	"fmt"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// subjects lists the Subject headers of the messages a sink received.
func subjects(t *testing.T, got []smtpsink.Received) []string {
	t.Helper()
	var out []string
	for _, m := range got {
		msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			t.Fatalf("parse message: %v", err)
		}
		out = append(out, msg.Header.Get("Subject"))
	}
	return out
}

// TestPluginExclusionsWithService sets the Pro plugin exclusions through
// the service's REST API beside a real WordPress site: the excluded
// plugin's wp_mail() goes through the site's own mailer (PHPMailer to the
// site's SMTP server, configured by a phpmailer_init hook) and never
// reaches the queue, while another plugin's mail is queued and delivered
// by the service through its connection. With exclusions switched off,
// both are taken over.
func TestPluginExclusionsWithService(t *testing.T) {
	site, dir := installTakeoverSite(t, "wpe_")
	hostSink, svcSink := smtpsink.Start(t), smtpsink.Start(t)
	site.WriteContent(t, map[string]string{
		"mu-plugins/host-smtp.php":              wpsite.PHPMailerSMTPPlugin(hostSink.Port(), ""),
		"plugins/legacy-forms/legacy-forms.php": "<?php\n/* Plugin Name: Legacy Forms */\nfunction legacy_forms_send( $subject ) { return wp_mail( 'owner@example.com', $subject, 'a form entry' ); }\n",
		"plugins/shop-mailer/shop-mailer.php":   "<?php\n/* Plugin Name: Shop Mailer */\nfunction shop_mailer_send( $subject ) { return wp_mail( 'buyer@example.com', $subject, 'your order' ); }\n",
	})
	site.PHP(t, `update_option( 'active_plugins', array( 'legacy-forms/legacy-forms.php', 'shop-mailer/shop-mailer.php' ) ); echo 'ok';`)

	svc, appPW := serveSite(t, site, dir, "exclusions test")
	deliverToSink(t, svc.Base, site.AdminLogin, appPW, svcSink, "")
	db, err := sql.Open("mysql", site.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	queuedSources := func(subject string) []string {
		t.Helper()
		return queryStrings(t, db, "SELECT source FROM wpe_mailsvc_logs WHERE subject = ?", subject)
	}
	send := func(legacy, shop string) {
		t.Helper()
		out := site.PHP(t, fmt.Sprintf(`echo wp_json_encode( array( legacy_forms_send( %s ), shop_mailer_send( %s ) ) );`, wpsite.PHPString(legacy), wpsite.PHPString(shop)))
		if out != "[true,true]" {
			t.Fatalf("wp_mail() results %s, want [true,true]", out)
		}
	}

	// Exclusions on: the legacy plugin's mail leaves through the site's
	// own SMTP server, synchronously, and is not in the queue.
	status, body := call(t, "PUT", svc.Base+"/pro/settings", `{"plugin_exclusions_enabled":true,"excluded_plugins":["legacy-forms"]}`, site.AdminLogin, appPW)
	if status != 200 || !strings.Contains(string(body), `"excluded_plugins":["legacy-forms"]`) {
		t.Fatalf("PUT /pro/settings: %d %s", status, body)
	}
	send("Legacy entry (excluded)", "Order 1")
	if got := subjects(t, hostSink.Messages()); len(got) != 1 || got[0] != "Legacy entry (excluded)" {
		t.Fatalf("the site's own SMTP server got %q, want only the excluded plugin's message", got)
	}
	if got := queuedSources("Legacy entry (excluded)"); len(got) != 0 {
		t.Errorf("the excluded message is in the queue (sources %v)", got)
	}
	if got := queuedSources("Order 1"); len(got) != 1 || got[0] != "shop-mailer" {
		t.Errorf("queued sources of the shop's message %v, want [shop-mailer]", got)
	}
	got, err := svcSink.WaitFor(1, 60*time.Second)
	if err != nil {
		t.Fatalf("the service delivered nothing: %v\n%s", err, svc.Stderr)
	}
	if s := subjects(t, got); s[0] != "Order 1" {
		t.Fatalf("the service delivered %q, want the shop's message", s)
	}

	// Exclusions off: both plugins' mail is taken over.
	if status, body := call(t, "PUT", svc.Base+"/pro/settings", `{"plugin_exclusions_enabled":false}`, site.AdminLogin, appPW); status != 200 {
		t.Fatalf("PUT /pro/settings: %d %s", status, body)
	}
	send("Legacy entry (taken over)", "Order 2")
	if got, err := svcSink.WaitFor(3, 60*time.Second); err != nil {
		t.Fatalf("the service delivered %d of 3: %v", len(got), err)
	}
	if got := queuedSources("Legacy entry (taken over)"); len(got) != 1 || got[0] != "legacy-forms" {
		t.Errorf("queued sources %v, want [legacy-forms]", got)
	}
	if n := len(hostSink.Messages()); n != 1 {
		t.Errorf("the site's own SMTP server got %d messages, want still 1", n)
	}
	svc.Stop(t)
}
