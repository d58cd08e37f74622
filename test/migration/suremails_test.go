package migration

import (
	"fmt"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// sureMailsLogTable is SureMails' inc/db/email-log.php table.
const sureMailsLogTable = "CREATE TABLE `{prefix}suremails_email_log` (\n" +
	"`id` bigint(20) NOT NULL AUTO_INCREMENT,\n" +
	"`email_from` varchar(100) NOT NULL,\n" +
	"`email_to` longtext NOT NULL,\n" +
	"`subject` varchar(255) NOT NULL,\n" +
	"`body` longtext NOT NULL,\n" +
	"`headers` longtext NOT NULL,\n" +
	"`attachments` longtext NOT NULL,\n" +
	"`status` ENUM('failed', 'sent', 'pending', 'blocked') NOT NULL DEFAULT 'pending',\n" +
	"`response` longtext NOT NULL,\n" +
	"`meta` json NULL,\n" +
	"`connection` varchar(255) NOT NULL,\n" +
	"`created_at` datetime DEFAULT CURRENT_TIMESTAMP NOT NULL,\n" +
	"`updated_at` datetime DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP NOT NULL,\n" +
	"PRIMARY KEY (`id`), KEY `email_from` (`email_from`), KEY `status` (`status`)\n" +
	") {charset};"

// sureMailsEncryptPHP is SureMails' Settings::encrypt: base64 with the
// '=' padding stripped.
const sureMailsEncryptPHP = `function fx_suremails_encrypt( $input ) {
	return rtrim( base64_encode( $input ), '=' );
}
`

// TestSureMails imports SureMails' connections (SMTP default, an SES
// fallback with the same sender, a Brevo one) and its log.
func TestSureMails(t *testing.T) {
	const password = "sure pass"     // 9 bytes: base64 has padding to strip
	const awsSecret = "aws/Secret+1" // 12 bytes
	s := newSite(t)
	sink := smtpsink.Start(t, smtpsink.WithAuth("sure-user", password))
	s.setTimezone(t, "Asia/Kolkata")
	s.activatePlugins(t, "suremails/suremails.php")
	s.php(t, sureMailsEncryptPHP+fmt.Sprintf(`
update_option( 'suremails_connections', array(
	'connections' => array(
		'c-smtp' => array( 'id' => 'c-smtp', 'type' => 'SMTP', 'connection_title' => 'My SMTP', 'from_email' => 'shop@example.com',
			'force_from_email' => true, 'from_name' => 'Shop', 'force_from_name' => false, 'priority' => 1, 'created_at' => '2026-01-01 10:00:00',
			'host' => '127.0.0.1', 'port' => %s, 'encryption' => 'NONE', 'username' => 'sure-user',
			'password' => fx_suremails_encrypt( %s ), 'auto_tls' => false, 'return_path' => true ),
		'c-aws' => array( 'id' => 'c-aws', 'type' => 'AWS', 'connection_title' => 'SES', 'from_email' => 'shop@example.com',
			'force_from_email' => true, 'from_name' => 'Shop', 'force_from_name' => false, 'priority' => 2, 'created_at' => '2026-01-01 10:00:00',
			'username' => fx_suremails_encrypt( 'AKIASUREMAILS' ), 'password' => fx_suremails_encrypt( %s ),
			'region' => 'eu-west-1', 'return_path' => true ),
		'c-brevo' => array( 'id' => 'c-brevo', 'type' => 'BREVO', 'connection_title' => 'Brevo', 'from_email' => 'news@example.com',
			'force_from_email' => true, 'from_name' => 'News', 'force_from_name' => false, 'priority' => 3, 'created_at' => '2026-01-01 10:00:00',
			'api_key' => fx_suremails_encrypt( 'xkeysib-brevo' ) ),
	),
	'default_connection' => array( 'type' => 'SMTP', 'email' => 'shop@example.com', 'id' => 'c-smtp', 'connection_title' => 'My SMTP' ),
	'log_emails' => 'yes', 'delete_email_logs_after' => '30_days', 'email_simulation' => 'no',
) );
`, wpsite.PHPString(fmt.Sprint(sink.Port())), wpsite.PHPString(password), wpsite.PHPString(awsSecret)))
	s.CreateTable(t, sureMailsLogTable)
	// Logger::log_email + EmailLog::insert: created_at is
	// current_time('mysql'), site-local; arrays maybe_serialize()d.
	const rows = 205
	const base = 1761955200 // 2025-11-01 00:00:00 UTC
	n := s.insertRows(t, "suremails_email_log", fmt.Sprintf(`array_map( function ( $i ) {
	$ts = %d + $i * 1800;
	$status = array( 'sent', 'sent', 'failed', 'blocked', 'pending' )[ $i %% 5 ];
	return array(
		'email_from' => 'Shop <shop@example.com>', 'email_to' => "Client $i <client$i@example.org>, copy$i@example.org",
		'subject' => "Sure #$i", 'body' => "<div>Sure $i</div>",
		'headers' => maybe_serialize( array( 'Content-Type: text/html; charset=UTF-8', 'Reply-To: help@example.com' ) ),
		'attachments' => maybe_serialize( array() ), 'status' => $status,
		'response' => maybe_serialize( 'failed' === $status ? array( array( 'retry' => 0, 'Message' => "Email sending failed via SMTP: auth ($i)", 'Connection' => 'SMTP', 'timestamp' => wp_date( 'Y-m-d H:i:s', $ts ) ) ) : array() ),
		'meta' => wp_json_encode( array( 'retry' => 0, 'resend' => 0 ) ), 'connection' => 'SMTP',
		'created_at' => wp_date( 'Y-m-d H:i:s', $ts ), 'updated_at' => wp_date( 'Y-m-d H:i:s', $ts ),
	);
}, range( 1, %d ) )`, base, rows))
	if n != rows {
		t.Fatalf("inserted %d rows, want %d", n, rows)
	}

	e, ok := s.scan(t, true)["suremails"]
	if !ok || !e.Active || e.Connections == nil || *e.Connections != 3 || e.LogRows == nil || *e.LogRows != rows {
		t.Fatalf("scan entry %+v (found %v)", e, ok)
	}
	want := map[string]wantConn{
		"c-smtp":  {status: "ready", from: "SMTP", to: "smtp", def: true},
		"c-aws":   {status: "ready", from: "AWS", to: "ses", fallback: true},
		"c-brevo": {status: "ready", from: "BREVO", to: "brevo"},
	}
	noSecret(t, "dry run", s.importAnswer(t, "dry run", `{"source":"suremails","dry_run":true}`), password, awsSecret, "AKIASUREMAILS")
	checkConns(t, s.mustImport(t, `{"source":"suremails","dry_run":true}`), want, false)
	if len(s.connections(t)) != 0 {
		t.Fatal("the dry run created connections")
	}
	ids := checkConns(t, s.mustImport(t, `{"source":"suremails"}`), want, true)
	checkDefault(t, s, ids["c-smtp"], ids["c-aws"])
	again := checkConns(t, s.mustImport(t, `{"source":"suremails"}`), want, true)
	if again["c-smtp"] != ids["c-smtp"] || again["c-aws"] != ids["c-aws"] || len(s.connections(t)) != 3 {
		t.Errorf("re-import: %v (was %v), %d connections", again, ids, len(s.connections(t)))
	}
	sendThrough(t, s, sink, ids["c-smtp"], "sure-user")

	logs := importLogsInTwoChunks(t, s, "suremails", rows)
	for i := 1; i <= rows; i++ {
		l := logs[fmt.Sprintf("Sure #%d", i)]
		at := time.Unix(base+int64(i)*1800, 0)
		// A message still pending in SureMails is never sent: the Engine
		// stores it as failed with a note.
		wantStatus := map[int]string{0: core.StatusDelivered, 1: core.StatusDelivered, 2: core.StatusFailed, 3: core.StatusFailed, 4: core.StatusFailed}[i%5]
		if l.Status != wantStatus || !l.CreatedAt.Equal(at) || len(l.Message.To) != 2 {
			t.Errorf("row %d: %s at %s to %v; want %s at %s (Kolkata time converted)", i, l.Status, l.CreatedAt, l.Message.To, wantStatus, at.UTC())
		}
	}
	one := s.log(t, logs["Sure #2"].ID)
	if one.Message.HTML != "<div>Sure 2</div>" || len(one.Message.ReplyTo) != 1 || one.Message.To[0].Name != "Client 2" || one.LastError == "" {
		t.Errorf("row 2 %+v (last_error %q)", one.Message, one.LastError)
	}
}
