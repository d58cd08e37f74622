package migration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// Fixture sizes: postSMTPRows table rows, postSMTPLegacy old posts not yet
// migrated (plus one the plugin already copied, pinged = 1).
const (
	postSMTPRows   = 250
	postSMTPLegacy = 5
	postSMTPBase   = 1751320800 // 2025-06-30 22:00:00 UTC; row i is i hours later
)

// TestPostSMTP imports Post SMTP: the SMTP transport with its base64
// password, the fallback whose password a wp-config constant pins, and
// both logs (the table of 2.5+ and the older posts) in chunks.
func TestPostSMTP(t *testing.T) {
	const password = "post smtp P4ss"
	s := newSiteConfig(t, `define( 'POST_SMTP_FALLBACK_AUTH_PASSWORD', 'fallback-from-config' );`)
	sink := smtpsink.Start(t, smtpsink.WithAuth("post-user", password))
	s.setTimezone(t, "Europe/Paris")
	s.activatePlugins(t, "post-smtp/postman-smtp.php")
	// PostmanInputSanitizer stores passwords base64_encode()d.
	s.setOption(t, "postman_options", fmt.Sprintf(`array(
	'transport_type' => 'smtp', 'sender_email' => 'shop@example.com', 'sender_name' => 'Shop',
	'prevent_sender_email_override' => 1, 'prevent_sender_name_override' => 1,
	'hostname' => '127.0.0.1', 'port' => %s, 'enc_type' => 'none', 'auth_type' => 'login',
	'basic_auth_username' => 'post-user', 'basic_auth_password' => base64_encode( %s ),
	'fallback_smtp_enabled' => 'yes', 'fallback_smtp_hostname' => 'backup.example.com', 'fallback_smtp_port' => '587',
	'fallback_smtp_security' => 'tls', 'fallback_smtp_use_auth' => 'login', 'fallback_from_email' => 'backup@example.com',
	'fallback_smtp_username' => 'fb-user', 'fallback_smtp_password' => base64_encode( 'stale-db-copy' ),
	'mail_log_enabled' => 'true', 'mail_log_max_entries' => 250, 'run_mode' => 'production', 'smtp_mailers' => 'postsmtp',
)`, wpsite.PHPString(fmt.Sprint(sink.Port())), wpsite.PHPString(password)))
	s.php(t, `update_option( 'postman_db_version', '1.0.1' );`)
	s.CreateTable(t, wpsite.PostSMTPLogTable)
	// PostmanEmailLogs::save(): time = current_time('timestamp'), the
	// Unix time shifted by the site's offset at that moment.
	n := s.insertRows(t, "post_smtp_logs", fmt.Sprintf(`array_map( function ( $i ) {
	$ts = %d + $i * HOUR_IN_SECONDS;
	$status = 1;
	if ( 0 === $i %% 10 ) { $status = "SMTP Error: Could not authenticate ($i)."; }
	if ( 0 === $i %% 25 ) { $status = 'Sent ( ** Fallback ** )'; }
	return array(
		'solution' => null, 'success' => $status, 'from_header' => 'Shop <shop@example.com>',
		'to_header' => "customer$i@example.org", 'cc_header' => 0 === $i %% 2 ? 'boss@example.com' : '', 'bcc_header' => '',
		'reply_to_header' => '', 'transport_uri' => 'smtp:none:login://127.0.0.1:25', 'original_to' => "customer$i@example.org",
		'original_subject' => "Post #$i", 'original_message' => 0 === $i %% 2 ? "<p>Post $i</p>" : "Post $i",
		'original_headers' => 0 === $i %% 2 ? serialize( array( 'Content-Type: text/html; charset=UTF-8', 'X-Post: ' . $i ) ) : '',
		'session_transcript' => 'smtp:none:login://127.0.0.1:25',
		'time' => $ts + wp_timezone()->getOffset( new DateTime( "@$ts" ) ),
	);
}, range( 1, %d ) )`, postSMTPBase, postSMTPRows))
	if n != postSMTPRows {
		t.Fatalf("inserted %d rows, want %d", n, postSMTPRows)
	}
	// PostmanEmailLogService's pre-2.5 branch: a private post, its fields
	// in postmeta; the migration marks copied posts with pinged = 1.
	s.php(t, fmt.Sprintf(`global $wpdb;
for ( $i = 1; $i <= %d; $i++ ) {
	$ts = 1577880000 + $i * DAY_IN_SECONDS; // from 2020-01-02 12:00 UTC
	$ok = 0 !== $i %% 2;
	$id = wp_insert_post( array(
		'post_type' => 'postman_sent_mail', 'post_status' => 'private', 'post_title' => "Legacy #$i",
		'post_content' => "Legacy body $i", 'post_excerpt' => $ok ? '' : "Connection refused ($i)",
		'post_date' => wp_date( 'Y-m-d H:i:s', $ts ), 'post_date_gmt' => gmdate( 'Y-m-d H:i:s', $ts ),
	), true );
	if ( is_wp_error( $id ) ) { wpsite_fail( $id->get_error_message() ); }
	update_post_meta( $id, 'success', $ok );
	update_post_meta( $id, 'from_header', 'Shop <shop@example.com>' );
	update_post_meta( $id, 'to_header', "old$i@example.org" );
	update_post_meta( $id, 'transport_uri', 'smtp:tls:login://smtp.example.com:587' );
	update_post_meta( $id, 'original_to', "old$i@example.org" );
	update_post_meta( $id, 'original_subject', "Legacy #$i" );
	update_post_meta( $id, 'original_message', "Legacy message $i" );
	update_post_meta( $id, 'original_headers', '' );
	if ( %d === $i ) { $wpdb->update( $wpdb->posts, array( 'pinged' => '1' ), array( 'ID' => $id ) ); }
}
`, postSMTPLegacy+1, postSMTPLegacy+1))

	const total = postSMTPRows + postSMTPLegacy
	e, ok := s.scan(t, true)["post-smtp"]
	if !ok || !e.Active || e.Connections == nil || *e.Connections != 2 || !e.LogsAvailable || e.LogRows == nil || *e.LogRows < total {
		t.Fatalf("scan entry %+v (found %v): want active, 2 connections, %d+ log rows", e, ok, total)
	}
	want := map[string]wantConn{
		"primary":  {status: "ready", from: "smtp", to: "smtp", def: true},
		"fallback": {status: "needs_password", from: "smtp", to: "smtp", fallback: true},
	}
	noSecret(t, "dry run", s.importAnswer(t, "dry run", `{"source":"post-smtp","dry_run":true,"import_logs":true}`), password, "stale-db-copy", "fallback-from-config")
	dry := s.mustImport(t, `{"source":"post-smtp","dry_run":true,"import_logs":true}`)
	checkConns(t, dry, want, false)
	if dry.Logs.Total != total || dry.Logs.Imported != 0 {
		t.Errorf("dry run logs %+v, want total %d", dry.Logs, total)
	}
	fb := dry.connection(t, "fallback")
	if strings.Join(fb.Missing, ",") != "password" || !hasString(fb.Issues, "POST_SMTP_FALLBACK_AUTH_PASSWORD") || !hasString(fb.Issues, "MAILSVC_SMTP_PASSWORD") {
		t.Errorf("fallback: missing %v issues %v; want the password missing and both constants named", fb.Missing, fb.Issues)
	}
	if _, has := fb.Settings["password"]; has {
		t.Errorf("the stale stored fallback password was imported: %v", fb.Settings)
	}
	if len(s.connections(t)) != 0 || len(s.logs(t)) != 0 {
		t.Fatal("the dry run wrote connections or logs")
	}

	ids := checkConns(t, s.mustImport(t, `{"source":"post-smtp"}`), want, true)
	checkDefault(t, s, ids["primary"], 0)
	again := checkConns(t, s.mustImport(t, `{"source":"post-smtp"}`), want, true)
	if again["primary"] != ids["primary"] || len(s.connections(t)) != 1 {
		t.Errorf("re-import: id %d (was %d), %d connections", again["primary"], ids["primary"], len(s.connections(t)))
	}
	sendThrough(t, s, sink, ids["primary"], "post-user")

	runs := s.importAllLogs(t, "post-smtp", "")
	if len(runs) != 2 || runs[0].Logs.Imported != 200 || runs[1].Logs.Imported != total-200 || !runs[1].Logs.Done {
		for _, r := range runs {
			t.Logf("chunk %+v", r.Logs)
		}
		t.Fatalf("%d chunks; want 200 then %d", len(runs), total-200)
	}
	if again := s.importAllLogs(t, "post-smtp", ""); again[0].Logs.Imported != 0 {
		t.Errorf("second log run imported %d", again[0].Logs.Imported)
	}
	logs := importedLogs(t, s, "post-smtp")
	if len(logs) != total {
		t.Fatalf("%d imported logs, want %d", len(logs), total)
	}
	if _, ok := logs[fmt.Sprintf("Legacy #%d", postSMTPLegacy+1)]; ok {
		t.Error("a legacy post the plugin already copied into its table was imported twice")
	}
	for i := 1; i <= postSMTPLegacy; i++ {
		l := logs[fmt.Sprintf("Legacy #%d", i)]
		at := time.Unix(1577880000+int64(i)*86400, 0)
		wantStatus := core.StatusDelivered
		if i%2 == 0 {
			wantStatus = core.StatusFailed
		}
		if l.Status != wantStatus || !l.CreatedAt.Equal(at) || len(l.Message.To) != 1 || l.Message.To[0].Email != fmt.Sprintf("old%d@example.org", i) {
			t.Errorf("legacy %d: %s at %s to %v; want %s at %s", i, l.Status, l.CreatedAt, l.Message.To, wantStatus, at.UTC())
		}
		if wantStatus == core.StatusFailed && !strings.Contains(l.LastError, "Connection refused") {
			t.Errorf("legacy %d: last_error %q", i, l.LastError)
		}
	}
	for i := 1; i <= postSMTPRows; i++ {
		l, ok := logs[fmt.Sprintf("Post #%d", i)]
		if !ok {
			t.Errorf("row %d not imported", i)
			continue
		}
		at := time.Unix(postSMTPBase+int64(i)*3600, 0)
		wantStatus := core.StatusDelivered
		if i%10 == 0 && i%25 != 0 {
			wantStatus = core.StatusFailed
		}
		if l.Status != wantStatus || !l.CreatedAt.Equal(at) {
			t.Errorf("row %d: %s at %s, want %s at %s (Paris time converted)", i, l.Status, l.CreatedAt, wantStatus, at.UTC())
		}
	}
	html := s.log(t, logs["Post #2"].ID)
	if html.Message.HTML != "<p>Post 2</p>" || len(html.Message.Cc) != 1 || html.Message.From.Email != "shop@example.com" {
		t.Errorf("html row %+v", html.Message)
	}
	if text := s.log(t, logs["Post #3"].ID); text.Message.Text != "Post 3" {
		t.Errorf("text row %+v", text.Message)
	}
}
