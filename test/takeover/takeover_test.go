package takeover

import (
	"github.com/mailsvc/mailsvc/test/servicetest"

	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	// The MariaDB driver, to look at the site's tables directly.
	_ "github.com/go-sql-driver/mysql"

	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

func randomFile(t *testing.T, path string, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b = append([]byte{0, '\r', '\n', '.', '\r', '\n', 0xff}, b...) // bytes a text path would damage
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// serviceTables lists the site's {prefix}mailsvc_* tables.
func serviceTables(t *testing.T, site *wpsite.Site) []string {
	t.Helper()
	db, err := sql.Open("mysql", site.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := queryStrings(t, db, "SHOW TABLES LIKE '"+strings.ReplaceAll(site.Prefix, "_", `\_`)+`mailsvc\_%'`)
	slices.Sort(out)
	return out
}

// expected is what the sink must receive for one wp_mail() call.
type expected struct {
	envelope    []string // RCPT TO, sorted
	mailFrom    string
	from        string // From header, as net/mail parses it
	to, cc      []string
	replyTo     string
	headers     map[string]string // other header values that must be present
	text, html  string
	attachments map[string][]byte
	types       map[string]string
}

// TestWordPressTakeover installs the bridge with `mailsvc wp install`,
// configures an SMTP connection to a local sink through the REST API,
// stops the service, sends mail with wp_mail() from WordPress (which must
// still succeed), starts the service and checks every message at the
// sink. Then it checks the bridge's refusal paths and `mailsvc uninstall`.
func TestWordPressTakeover(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpt_"})
	sink := smtpsink.Start(t)
	dir := t.TempDir()
	env := environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1")
	installEnv := environ(dir) // wp install finds wp-config.php through --wp-path

	// 1. mailsvc wp install.
	out, err := run(t, dir, installEnv, "wp", "install", "--wp-path", site.Dir)
	if err != nil {
		t.Fatalf("wp install: %v\n%s", err, out)
	}
	bridgePath := filepath.Join(site.ContentDir, "mu-plugins", bridge.FileName)
	if b, err := os.ReadFile(bridgePath); err != nil || !bytes.Equal(b, bridge.Source) {
		t.Fatalf("bridge not installed at %s (%v)\n%s", bridgePath, err, out)
	}
	for _, want := range []string{"wpt_mailsvc_logs: ready", bridgePath, site.DBName, "WordPress site: " + site.SiteURL} {
		if !strings.Contains(out, want) {
			t.Errorf("wp install output lacks %q:\n%s", want, out)
		}
	}
	if tables := serviceTables(t, site); !slices.Contains(tables, "wpt_mailsvc_logs") {
		t.Fatalf("wp install did not create the queue table in the site's database: %v", tables)
	}
	if out, err := run(t, dir, installEnv, "wp", "install", "--wp-path", filepath.Join(dir, "nowhere")); err == nil {
		t.Fatalf("wp install with a missing wp-config.php succeeded:\n%s", out)
	}

	// 2. An SMTP connection to the sink as the default, through REST with
	// a WordPress-made application password.
	appPW := site.CreateApplicationPassword(t, site.AdminLogin, "takeover test")
	svc := servicetest.StartEnv(t, dir, env)
	deliverToSink(t, svc.Base, site.AdminLogin, appPW, sink, "")
	svc.Stop(t)

	// 3. wp_mail() while the service is down.
	pdfPath, binPath := filepath.Join(site.Dir, "invoice.pdf"), filepath.Join(site.Dir, "upload-7f3a.tmp")
	pdf, blob := randomFile(t, pdfPath, 20000), randomFile(t, binPath, 5000)
	php := `$results = array();
$results['plain'] = wp_mail( 'plain@example.com', 'Plain message', "Hello,\nthis is plain text." );
$results['html'] = wp_mail( 'Html Reader <html@example.com>', 'HTML message', '<h1>Hi</h1><p>HTML body</p>', array( 'Content-Type: text/html; charset=UTF-8', 'From: "Site Team" <team@example.com>' ) );
$results['addresses'] = wp_mail( array( 'first@example.com', 'Second Person <second@example.com>' ), 'Addresses message', 'to cc bcc reply-to', "Cc: Carbon <cc@example.com>\r\nBcc: secret@example.com\r\nReply-To: Replies <reply@example.com>\r\nX-Site-Tag: takeover" );
$results['attachments'] = wp_mail( 'files@example.com', 'Attachments message', 'two files', array( 'X-Files: 2' ), array( ` + wpsite.PHPString(pdfPath) + `, 'data.bin' => ` + wpsite.PHPString(binPath) + ` ) );
add_filter( 'wp_mail', function ( $atts ) {
	if ( 'Filtered message' === $atts['subject'] ) {
		$atts['subject'] .= ' (via filter)';
		$atts['headers']  = array_merge( (array) $atts['headers'], array( 'X-Filtered: yes' ) );
	}
	return $atts;
} );
add_filter( 'wp_mail_from', function () { return 'filtered-from@example.com'; } );
$results['filtered'] = wp_mail( 'filtered@example.com', 'Filtered message', 'filters ran', array() );
$results['takeover'] = defined( 'MAIL_SVC_WP_MAIL_TAKEOVER' ) && MAIL_SVC_WP_MAIL_TAKEOVER;
echo wp_json_encode( $results );`
	raw := site.PHP(t, php)
	var results map[string]bool
	if err := json.Unmarshal([]byte(raw), &results); err != nil {
		t.Fatalf("PHP output %q: %v", raw, err)
	}
	for _, k := range []string{"plain", "html", "addresses", "attachments", "filtered", "takeover"} {
		if !results[k] {
			t.Errorf("%s: got false with the service stopped, want true (output %s)", k, raw)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(sink.Messages()); n != 0 {
		t.Fatalf("the sink got %d messages while the service was stopped", n)
	}

	// 4. The service starts and delivers what was queued.
	svc = servicetest.StartEnv(t, dir, env)
	got, err := sink.WaitFor(5, 60*time.Second)
	if err != nil {
		t.Fatalf("waiting for delivery: %v\nservice stderr:\n%s", err, svc.Stderr)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(sink.Messages()); n != 5 {
		t.Fatalf("the sink got %d messages, want 5", n)
	}
	wordpressFrom := "wordpress@127.0.0.1"
	want := map[string]expected{
		"Plain message": {
			envelope: []string{"plain@example.com"}, mailFrom: wordpressFrom,
			from: `"WordPress" <` + wordpressFrom + `>`, to: []string{"<plain@example.com>"},
			text: "Hello,\nthis is plain text.",
		},
		"HTML message": {
			envelope: []string{"html@example.com"}, mailFrom: "team@example.com",
			from: `"Site Team" <team@example.com>`, to: []string{`"Html Reader" <html@example.com>`},
			html: "<h1>Hi</h1><p>HTML body</p>",
		},
		"Addresses message": {
			envelope: []string{"cc@example.com", "first@example.com", "second@example.com", "secret@example.com"}, mailFrom: wordpressFrom,
			from: `"WordPress" <` + wordpressFrom + `>`, to: []string{"<first@example.com>", `"Second Person" <second@example.com>`},
			cc: []string{`"Carbon" <cc@example.com>`}, replyTo: `"Replies" <reply@example.com>`,
			headers: map[string]string{"X-Site-Tag": "takeover"}, text: "to cc bcc reply-to",
		},
		"Attachments message": {
			envelope: []string{"files@example.com"}, mailFrom: wordpressFrom,
			from: `"WordPress" <` + wordpressFrom + `>`, to: []string{"<files@example.com>"},
			headers: map[string]string{"X-Files": "2"}, text: "two files",
			attachments: map[string][]byte{"invoice.pdf": pdf, "data.bin": blob},
			types:       map[string]string{"invoice.pdf": "application/pdf", "data.bin": "application/octet-stream"},
		},
		"Filtered message (via filter)": {
			envelope: []string{"filtered@example.com"}, mailFrom: "filtered-from@example.com",
			from: `"WordPress" <filtered-from@example.com>`, to: []string{"<filtered@example.com>"},
			headers: map[string]string{"X-Filtered": "yes"}, text: "filters ran",
		},
	}
	addrs := func(h mail.Header, key string) []string {
		if h.Get(key) == "" {
			return nil
		}
		list, err := h.AddressList(key)
		if err != nil {
			t.Errorf("%s header %q: %v", key, h.Get(key), err)
		}
		var out []string
		for _, a := range list {
			out = append(out, a.String())
		}
		return out
	}
	seen := map[string]bool{}
	for _, m := range got {
		p := parse(t, m.Data)
		subject := p.Header.Get("Subject")
		w, ok := want[subject]
		if !ok || seen[subject] {
			t.Errorf("unexpected or repeated message %q", subject)
			continue
		}
		seen[subject] = true
		t.Run(subject, func(t *testing.T) {
			rcpts := slices.Clone(m.To)
			slices.Sort(rcpts)
			if !slices.Equal(rcpts, w.envelope) || m.From != w.mailFrom {
				t.Errorf("envelope %s → %v, want %s → %v", m.From, rcpts, w.mailFrom, w.envelope)
			}
			if from := addrs(p.Header, "From"); len(from) != 1 || from[0] != w.from {
				t.Errorf("From %v, want %s", from, w.from)
			}
			if to := addrs(p.Header, "To"); !slices.Equal(to, w.to) {
				t.Errorf("To %v, want %v", to, w.to)
			}
			if cc := addrs(p.Header, "Cc"); !slices.Equal(cc, w.cc) {
				t.Errorf("Cc %v, want %v", cc, w.cc)
			}
			if rt := strings.Join(addrs(p.Header, "Reply-To"), ", "); rt != w.replyTo {
				t.Errorf("Reply-To %q, want %q", rt, w.replyTo)
			}
			if p.Header.Get("Bcc") != "" || bytes.Contains(m.Data, []byte("secret@example.com")) {
				t.Errorf("the Bcc recipient shows in the message:\n%s", m.Data)
			}
			for k, v := range w.headers {
				if got := p.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if strings.TrimRight(p.Text, "\n") != w.text || strings.TrimRight(p.HTML, "\n") != w.html {
				t.Errorf("text %q html %q, want %q and %q", p.Text, p.HTML, w.text, w.html)
			}
			if len(p.Attachments) != len(w.attachments) {
				t.Errorf("%d attachments, want %d", len(p.Attachments), len(w.attachments))
			}
			for name, data := range w.attachments {
				if !bytes.Equal(p.Attachments[name], data) {
					t.Errorf("attachment %s: %d bytes differ from the %d sent", name, len(p.Attachments[name]), len(data))
				}
				if p.Types[name] != w.types[name] {
					t.Errorf("attachment %s type %q, want %q", name, p.Types[name], w.types[name])
				}
			}
		})
	}
	svc.Stop(t)

	t.Run("a missing queue table fails like a database error", func(t *testing.T) {
		out := site.PHP(t, `global $wpdb;
$wpdb->query( "RENAME TABLE {$wpdb->prefix}mailsvc_logs TO {$wpdb->prefix}mailsvc_logs_away" );
$failed = null;
add_action( 'wp_mail_failed', function ( $e ) use ( &$failed ) { $failed = $e; } );
$r = wp_mail( 'lost@example.com', 'Never queued', 'x' );
$wpdb->query( "RENAME TABLE {$wpdb->prefix}mailsvc_logs_away TO {$wpdb->prefix}mailsvc_logs" );
echo wp_json_encode( array(
	'result' => $r,
	'code'   => $failed instanceof WP_Error ? $failed->get_error_code() : null,
	'error'  => $failed instanceof WP_Error ? $failed->get_error_message() : null,
	'to'     => $failed instanceof WP_Error ? $failed->get_error_data()['to'] : null,
) );`)
		var res struct {
			Result bool
			Code   *string
			Error  string
			To     []string
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("PHP output %q: %v", out, err)
		}
		if res.Result || res.Code == nil || *res.Code != "wp_mail_failed" || !strings.Contains(res.Error, "mailsvc_logs") || !slices.Equal(res.To, []string{"lost@example.com"}) {
			t.Fatalf("wp_mail() with no queue table: %s", out)
		}
	})

	t.Run("another plugin's wp_mail wins and the bridge says so", func(t *testing.T) {
		other := filepath.Join(site.ContentDir, "mu-plugins", "aaa-other-mailer.php")
		if err := os.WriteFile(other, []byte("<?php\nfunction wp_mail( $to, $subject, $message, $headers = '', $attachments = array() ) { return 'other mailer'; }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(other)
		out := site.PHP(t, `wp_set_current_user( 1 );
ob_start();
do_action( 'admin_notices' );
$notice = ob_get_clean();
echo wp_json_encode( array(
	'result'   => wp_mail( 'x@example.com', 's', 'm' ),
	'takeover' => defined( 'MAIL_SVC_WP_MAIL_TAKEOVER' ),
	'notice'   => $notice,
) );`)
		var res struct {
			Result   any
			Takeover bool
			Notice   string
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("PHP output %q: %v", out, err)
		}
		if res.Result != "other mailer" || res.Takeover || !strings.Contains(res.Notice, "mu-plugins/aaa-other-mailer.php") || !strings.Contains(res.Notice, "wp_mail()") {
			t.Fatalf("with another wp_mail(): %+v", res)
		}
	})

	t.Run("uninstall", func(t *testing.T) {
		// An option of the service's, and one of WordPress's own.
		site.PHP(t, `update_option( 'mailsvc_bridge_notice_dismissed', '1' ); update_option( 'mail_svc_version', '1.0.0' );`)
		options := func() string {
			return site.PHP(t, `echo wp_json_encode( array( get_option( 'mailsvc_bridge_notice_dismissed' ), get_option( 'mail_svc_version' ), get_option( 'blogname' ) ) );`)
		}
		// The options the bridge publishes (the filters' results, the hooks
		// with callbacks, ...) and its transients (the service's state kept
		// for the notices), besides the notice and version options.
		var published []string
		if err := json.Unmarshal([]byte(site.PHP(t, `global $wpdb; echo wp_json_encode( $wpdb->get_col( "SELECT option_name FROM $wpdb->options WHERE (option_name LIKE 'mailsvc\\_%' OR option_name LIKE '\\_transient\\_mailsvc\\_%' OR option_name LIKE '\\_transient\\_timeout\\_mailsvc\\_%') AND option_name <> 'mailsvc_bridge_notice_dismissed'" ) );`)), &published); err != nil {
			t.Fatal(err)
		}
		allTables := serviceTables(t, site)
		if len(allTables) < 6 {
			t.Fatalf("service tables before uninstall: %v", allTables)
		}
		// MAIL_SVC_PRESERVE_DATA true: the tables stay, the bridge goes.
		out, err := run(t, dir, append(slices.Clone(installEnv), "MAIL_SVC_PRESERVE_DATA=true"), "uninstall", "--yes", "--wp-path", site.Dir)
		if err != nil {
			t.Fatalf("uninstall (preserve): %v\n%s", err, out)
		}
		if got := serviceTables(t, site); !slices.Equal(got, allTables) {
			t.Errorf("tables after a preserving uninstall: %v, want %v", got, allTables)
		}
		if _, err := os.Stat(bridgePath); !os.IsNotExist(err) {
			t.Errorf("bridge still present after uninstall (preserve): %v", err)
		}
		if got := options(); got != `["1","1.0.0","mailsvc test site"]` {
			t.Errorf("options after a preserving uninstall: %s", got)
		}
		if !strings.Contains(out, "Kept") || !strings.Contains(out, "Removed the wp_mail() bridge") {
			t.Errorf("preserving uninstall output:\n%s", out)
		}
		// Without WordPress's bridge, wp_mail() is WordPress's own again.
		if out := site.PHP(t, `echo defined( 'MAIL_SVC_WP_MAIL_TAKEOVER' ) ? 'bridge' : 'core';`); out != "core" {
			t.Errorf("after uninstall wp_mail() is %q", out)
		}

		// Reinstall, then uninstall for good.
		if out, err := run(t, dir, installEnv, "wp", "install", "--wp-path", site.Dir); err != nil {
			t.Fatalf("wp install again: %v\n%s", err, out)
		}
		out, err = run(t, dir, installEnv, "uninstall", "--yes", "--wp-path", site.Dir)
		if err != nil {
			t.Fatalf("uninstall: %v\n%s", err, out)
		}
		if got := serviceTables(t, site); len(got) != 0 {
			t.Errorf("tables after uninstall: %v", got)
		}
		if _, err := os.Stat(bridgePath); !os.IsNotExist(err) {
			t.Errorf("bridge still present after uninstall: %v", err)
		}
		if !strings.Contains(out, fmt.Sprintf("Dropped %d tables", len(allTables))) || !strings.Contains(out, "Removed the wp_mail() bridge") {
			t.Errorf("uninstall output:\n%s", out)
		}
		// The service's options are gone; WordPress's own are untouched.
		if got := options(); got != `[false,false,"mailsvc test site"]` {
			t.Errorf("options after uninstall: %s", got)
		}
		// The two above and those the bridge publishes on page loads
		// (docs/hooks.md): every one the service and its bridge wrote.
		if !strings.Contains(out, fmt.Sprintf("Deleted %d options", 2+len(published))) {
			t.Errorf("uninstall output:\n%s\nthe bridge had published %v", out, published)
		}
		if left := site.PHP(t, `global $wpdb; echo (int) $wpdb->get_var( "SELECT COUNT(*) FROM $wpdb->options WHERE option_name LIKE 'mailsvc\\_%' OR option_name LIKE 'mail\\_svc\\_%'" );`); left != "0" {
			t.Errorf("%s of the service's options left after uninstall", left)
		}
	})
}
