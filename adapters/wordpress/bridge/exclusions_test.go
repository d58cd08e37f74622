package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/rawmime"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// openStore opens the site's database as the service does (creating the
// service's tables) and closes it when the test ends.
func openStore(t *testing.T, site *wpsite.Site) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), "mysql:"+site.DSN, site.Prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// mailRun is what exclusionsPHP prints: each call's result, the
// wp_mail_succeeded and wp_mail_failed events in order, and how many
// queries read the settings table.
type mailRun struct {
	Results         []any       `json:"results"`
	Events          []mailEvent `json:"events"`
	SettingsQueries int         `json:"settings_queries"`
}

// mailEvent is one wp_mail_succeeded or wp_mail_failed.
type mailEvent struct {
	Action           string `json:"action"`
	Subject          string `json:"subject"`
	Error            string `json:"error"`
	Code             string `json:"code"`
	HasPHPMailerCode bool   `json:"has_phpmailer_code"`
}

// exclusionsPHP wraps PHP statements that append wp_mail() results to
// $results with the recording of events and settings queries.
func exclusionsPHP(calls string) string {
	return `$results = array();
$events  = array();
$settings_queries = 0;
add_action( 'wp_mail_succeeded', function ( $d ) use ( &$events ) { $events[] = array( 'action' => 'succeeded', 'subject' => $d['subject'] ); } );
add_action( 'wp_mail_failed', function ( $e ) use ( &$events ) {
	$d = $e->get_error_data();
	$events[] = array( 'action' => 'failed', 'subject' => $d['subject'], 'error' => $e->get_error_message(), 'code' => $e->get_error_code(), 'has_phpmailer_code' => isset( $d['phpmailer_exception_code'] ) );
} );
add_filter( 'query', function ( $q ) use ( &$settings_queries ) {
	if ( false !== strpos( $q, 'mailsvc_settings' ) ) {
		$settings_queries++;
	}
	return $q;
} );
` + calls + `
echo wp_json_encode( compact( 'results', 'events', 'settings_queries' ) );`
}

// TestBridgePluginExclusions: with the service's bridge directive
// (core.BridgeExcludedSources in core.ScopeBridge) naming a plugin, mail
// from that plugin is sent through WordPress's PHPMailer path (here
// configured by a phpmailer_init hook to a local SMTP sink) and not
// queued; everything else is queued. An empty or absent directive, or one
// that cannot be read: everything is queued. (How the Pro settings decide
// the directive, Pro switched off included, is TestBridgeFollowsProSettings
// in cmd/mailsvc/pro.)
func TestBridgePluginExclusions(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpx_"})
	if _, err := bridge.Install(site.ContentDir); err != nil {
		t.Fatal(err)
	}
	db := openStore(t, site)
	ctx := context.Background()
	sink := smtpsink.Start(t)
	image, imageBytes := filepath.Join(site.Dir, "logo.png"), []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0xff}
	if err := os.WriteFile(image, imageBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	attachment := filepath.Join(site.Dir, "report.txt")
	if err := os.WriteFile(attachment, []byte("attached text"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, site.ContentDir, map[string]string{
		// The site's own SMTP setup, as an SMTP plugin hooks it.
		"mu-plugins/smtp-setup.php": fmt.Sprintf(`<?php
add_action( 'phpmailer_init', function ( $phpmailer ) {
	$phpmailer->isSMTP();
	$phpmailer->Host        = '127.0.0.1';
	$phpmailer->Port        = %d;
	$phpmailer->SMTPAuth    = false;
	$phpmailer->SMTPAutoTLS = false;
	$phpmailer->SMTPSecure  = '';
} );
`, sink.Port()),
		"plugins/keep-out/keep-out.php": "<?php\n/* Plugin Name: Keep Out */\nfunction keep_out_send( $subject, $headers = '', $attachments = array() ) { return wp_mail( 'Reader <reader@example.com>, second@example.com', $subject, 'excluded body', $headers, $attachments ); }\nfunction keep_out_embed( $subject, $embeds ) { return wp_mail( 'reader@example.com', $subject, '<img src=\"cid:brand-logo\">', 'Content-Type: text/html', array(), $embeds ); }\n",
		"plugins/taken/taken.php":       "<?php\n/* Plugin Name: Taken */\nfunction taken_send( $subject ) { return wp_mail( 'reader@example.com', $subject, 'taken body' ); }\n",
	})
	site.PHP(t, `update_option( 'active_plugins', array( 'keep-out/keep-out.php', 'taken/taken.php' ) ); echo 'ok';`)

	exclude := func(t *testing.T, sources ...string) {
		t.Helper()
		if sources == nil {
			sources = []string{}
		}
		if err := db.Settings().SaveSettings(ctx, core.ScopeBridge, map[string]any{core.BridgeExcludedSources: sources}); err != nil {
			t.Fatal(err)
		}
	}
	run := func(t *testing.T, calls string) mailRun {
		t.Helper()
		raw := site.PHP(t, exclusionsPHP(calls))
		var r mailRun
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			t.Fatalf("PHP output %q: %v", raw, err)
		}
		return r
	}
	queued := func(t *testing.T, subject string) *core.Log {
		t.Helper()
		logs, _, err := db.Logs().FindLogs(ctx, core.LogFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range logs {
			if l.Message.Subject == subject {
				return l
			}
		}
		return nil
	}
	received := func(subject string) []smtpsink.Received {
		var out []smtpsink.Received
		for _, m := range sink.Messages() {
			if msg, err := mail.ReadMessage(bytes.NewReader(m.Data)); err == nil && msg.Header.Get("Subject") == subject {
				out = append(out, m)
			}
		}
		return out
	}

	t.Run("excluded plugin goes through PHPMailer, others are queued", func(t *testing.T) {
		exclude(t, "other-plugin", "keep-out")
		r := run(t, `$results[] = keep_out_send( 'excluded one', array( 'From: Keep Out <keep@example.com>', 'Cc: Carbon <cc@example.com>', 'Bcc: hidden@example.com', 'Reply-To: replies@example.com', 'X-Origin: keep-out' ), array( 'named.txt' => `+wpsite.PHPString(attachment)+` ) );
$results[] = taken_send( 'taken one' );
$results[] = keep_out_send( 'excluded two' );`)
		if got := fmt.Sprint(r.Results); got != "[true true true]" {
			t.Fatalf("wp_mail() results %s, want all true", got)
		}
		wantEvents := []mailEvent{{Action: "succeeded", Subject: "excluded one"}, {Action: "succeeded", Subject: "taken one"}, {Action: "succeeded", Subject: "excluded two"}}
		if !slices.Equal(r.Events, wantEvents) {
			t.Errorf("events %+v, want %+v", r.Events, wantEvents)
		}
		if r.SettingsQueries != 1 {
			t.Errorf("%d queries of the settings table for three wp_mail() calls, want 1", r.SettingsQueries)
		}
		if l := queued(t, "taken one"); l == nil || l.Source != "taken" || l.Status != core.StatusQueued {
			t.Errorf("the non-excluded plugin's message is not queued with its source: %+v", l)
		}
		for _, s := range []string{"excluded one", "excluded two"} {
			if l := queued(t, s); l != nil {
				t.Errorf("the excluded plugin's %q was queued (source %s)", s, l.Source)
			}
		}
		if n := len(received("taken one")); n != 0 {
			t.Errorf("the queued message reached the sink %d times from PHP", n)
		}
		got := received("excluded one")
		if len(got) != 1 || len(received("excluded two")) != 1 {
			t.Fatalf("the sink got %d and %d of the excluded messages, want 1 each", len(got), len(received("excluded two")))
		}
		m := got[0]
		msg, _ := mail.ReadMessage(bytes.NewReader(m.Data))
		rcpts := slices.Clone(m.To)
		slices.Sort(rcpts)
		if m.From != "keep@example.com" || !slices.Equal(rcpts, []string{"cc@example.com", "hidden@example.com", "reader@example.com", "second@example.com"}) {
			t.Errorf("envelope %s → %v", m.From, rcpts)
		}
		for h, want := range map[string]string{"From": "Keep Out <keep@example.com>", "To": "Reader <reader@example.com>, second@example.com", "Cc": "Carbon <cc@example.com>", "Reply-To": "replies@example.com", "X-Origin": "keep-out"} {
			if v := msg.Header.Get(h); v != want {
				t.Errorf("header %s = %q, want %q", h, v, want)
			}
		}
		if msg.Header.Get("Bcc") != "" || !bytes.Contains(m.Data, []byte("filename=named.txt")) || !bytes.Contains(m.Data, []byte("excluded body")) {
			t.Errorf("message body, attachment or Bcc wrong:\n%s", m.Data)
		}
	})

	t.Run("an excluded plugin's embeds go through PHPMailer as WordPress 6.9 sends them", func(t *testing.T) {
		exclude(t, "keep-out")
		r := run(t, `add_filter( 'wp_mail_embed_args', function ( $a ) { if ( 'logo' === $a['cid'] ) { $a['cid'] = 'brand-logo'; $a['name'] = 'brand.png'; } return $a; } );
$results[] = keep_out_embed( 'excluded embeds', array( 'logo' => `+wpsite.PHPString(image)+` ) );`)
		if got := fmt.Sprint(r.Results); got != "[true]" {
			t.Fatalf("wp_mail() results %s, want [true]", got)
		}
		got := received("excluded embeds")
		if len(got) != 1 || queued(t, "excluded embeds") != nil {
			t.Fatalf("the sink got %d messages, want 1 and nothing queued", len(got))
		}
		m, err := rawmime.Parse(got[0].Data)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Attachments) != 1 || !m.Attachments[0].Inline || m.Attachments[0].ContentID != "brand-logo" || m.Attachments[0].Filename != "brand.png" || !bytes.Equal(m.Attachments[0].Data, imageBytes) {
			t.Errorf("parts %+v, want brand.png inline as <brand-logo> with the file's bytes:\n%s", m.Attachments, got[0].Data)
		}
	})

	t.Run("a refused message fires wp_mail_failed as WordPress does", func(t *testing.T) {
		exclude(t, "keep-out")
		sink.FailNext(1, 550, "mailbox unavailable")
		r := run(t, `$results[] = keep_out_send( 'excluded refused' );`)
		if got := fmt.Sprint(r.Results); got != "[false]" {
			t.Fatalf("wp_mail() results %s, want [false]", got)
		}
		if len(r.Events) != 1 || r.Events[0].Action != "failed" || r.Events[0].Code != "wp_mail_failed" || r.Events[0].Subject != "excluded refused" || !r.Events[0].HasPHPMailerCode || r.Events[0].Error == "" {
			t.Errorf("events %+v, want one wp_mail_failed with PHPMailer's error", r.Events)
		}
		if l := queued(t, "excluded refused"); l != nil {
			t.Errorf("a refused excluded message was queued")
		}
	})

	t.Run("a stream wrapper attachment fails the excluded plugin's message too", func(t *testing.T) {
		exclude(t, "keep-out")
		path := "phar://" + filepath.Join(site.Dir, "upload.zip") + "/inner.txt"
		r := run(t, `$results[] = keep_out_send( 'excluded wrapper', '', array( `+wpsite.PHPString(attachment)+`, `+wpsite.PHPString(path)+` ) );`)
		if got := fmt.Sprint(r.Results); got != "[false]" {
			t.Fatalf("wp_mail() results %s, want [false]", got)
		}
		if len(r.Events) != 1 || r.Events[0].Action != "failed" || r.Events[0].Code != "wp_mail_failed" || r.Events[0].Subject != "excluded wrapper" ||
			!strings.HasPrefix(r.Events[0].Error, "Could not access file: "+path+" ") {
			t.Errorf("events %+v, want one wp_mail_failed naming %s", r.Events, path)
		}
		if n := len(received("excluded wrapper")); n != 0 || queued(t, "excluded wrapper") != nil {
			t.Errorf("the message was sent (%d) or queued", n)
		}
	})

	cases := []struct {
		name    string
		setup   func(t *testing.T)
		calls   string
		subject string
	}{
		{
			name:    "nothing excluded",
			setup:   func(t *testing.T) { exclude(t) },
			subject: "nothing excluded",
		},
		{
			name:    "another plugin excluded",
			setup:   func(t *testing.T) { exclude(t, "taken") },
			subject: "not in the list",
		},
		{
			name: "no directive",
			setup: func(t *testing.T) {
				exclude(t, "keep-out")
				if err := db.Gorm().Exec("DELETE FROM " + db.TableName("settings") + " WHERE scope = 'bridge'").Error; err != nil {
					t.Fatal(err)
				}
			},
			subject: "no directive",
		},
		{
			name: "a directive that is not a list",
			setup: func(t *testing.T) {
				if err := db.Settings().SaveSettings(ctx, core.ScopeBridge, map[string]any{core.BridgeExcludedSources: "keep-out"}); err != nil {
					t.Fatal(err)
				}
			},
			subject: "not a list",
		},
		{
			name:  "settings table missing",
			setup: func(t *testing.T) { exclude(t, "keep-out") },
			calls: `global $wpdb;
$wpdb->query( "RENAME TABLE {$wpdb->base_prefix}mailsvc_settings TO {$wpdb->base_prefix}mailsvc_settings_away" );
$results[] = keep_out_send( 'no settings table' );
$wpdb->query( "RENAME TABLE {$wpdb->base_prefix}mailsvc_settings_away TO {$wpdb->base_prefix}mailsvc_settings" );`,
			subject: "no settings table",
		},
		{
			name: "a directive that is not JSON",
			setup: func(t *testing.T) {
				exclude(t, "keep-out")
				if err := db.Gorm().Exec("UPDATE " + db.TableName("settings") + " SET setting_value = 'keep-out' WHERE scope = 'bridge' AND setting_key = 'excluded_sources'").Error; err != nil {
					t.Fatal(err)
				}
			},
			subject: "bad settings",
		},
	}
	for _, c := range cases {
		t.Run(c.name+": queued", func(t *testing.T) {
			c.setup(t)
			calls := c.calls
			if calls == "" {
				calls = `$results[] = keep_out_send( ` + wpsite.PHPString(c.subject) + ` );`
			}
			r := run(t, calls)
			if got := fmt.Sprint(r.Results); got != "[true]" {
				t.Fatalf("wp_mail() results %s, want [true]", got)
			}
			if len(r.Events) != 1 || r.Events[0].Action != "succeeded" {
				t.Errorf("events %+v, want one wp_mail_succeeded", r.Events)
			}
			if l := queued(t, c.subject); l == nil || l.Source != "keep-out" {
				t.Errorf("the message is not queued with source keep-out: %+v", l)
			}
			if n := len(received(c.subject)); n != 0 {
				t.Errorf("the sink got the message %d times", n)
			}
		})
	}
	if s := strings.TrimSpace(site.PHP(t, `echo defined( 'MAIL_SVC_WP_MAIL_TAKEOVER' ) ? 'bridge' : 'core';`)); s != "bridge" {
		t.Fatalf("wp_mail() is %s's", s)
	}
}
