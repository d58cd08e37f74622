package migration

import (
	"fmt"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// wpSMTPLogTable is WP SMTP's inc/Logger/Table.php: timestamp is a real
// instant (DEFAULT CURRENT_TIMESTAMP).
const wpSMTPLogTable = "CREATE TABLE IF NOT EXISTS `{prefix}wpsmtp_logs` (\n" +
	"`mail_id` INT NOT NULL AUTO_INCREMENT,\n" +
	"`timestamp` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,\n" +
	"`to` VARCHAR(200) NOT NULL DEFAULT '0',\n" +
	"`subject` VARCHAR(200) NOT NULL DEFAULT '0',\n" +
	"`message` TEXT NULL,\n" +
	"`headers` TEXT NULL,\n" +
	"`error` TEXT NULL,\n" +
	"PRIMARY KEY (`mail_id`)\n" +
	") DEFAULT CHARACTER SET = utf8 DEFAULT COLLATE utf8_general_ci;"

// TestWPSMTP imports WP SMTP 1.x (base64 credentials), then the same site
// after Solid Mail 2.x migrated it and a SendGrid provider was added, and
// the wpsmtp_logs log.
func TestWPSMTP(t *testing.T) {
	const password = "wp smtp pass!"
	s := newSite(t)
	sink := smtpsink.Start(t, smtpsink.WithAuth("wp-user", password))
	s.setTimezone(t, "America/New_York")
	s.activatePlugins(t, "wp-smtp/wp-smtp.php")
	// wp-smtp.php 1.2.4+ saves username and password base64_encode()d.
	s.setOption(t, "wp_smtp_options", fmt.Sprintf(`array(
	'from' => 'shop@example.com', 'fromname' => 'Shop', 'host' => '127.0.0.1', 'smtpsecure' => '',
	'port' => %s, 'smtpauth' => 'yes', 'username' => base64_encode( 'wp-user' ),
	'password' => base64_encode( %s ), 'deactivate' => '', 'disable_logs' => 'no',
)`, wpsite.PHPString(fmt.Sprint(sink.Port())), wpsite.PHPString(password)))
	s.CreateTable(t, wpSMTPLogTable)
	// Process::log_mails inserts the wp_mail() arguments (arrays
	// maybe_serialize()d); update_failed_status adds the error. The
	// timestamps are set afterwards to known instants.
	const rows = 210
	const base = 1735732800 // 2025-01-01 12:00:00 UTC
	s.php(t, fmt.Sprintf(`global $wpdb;
for ( $i = 1; $i <= %d; $i++ ) {
	$to = 0 === $i %% 4 ? maybe_serialize( array( "a$i@example.org", "b$i@example.org" ) ) : "a$i@example.org";
	$headers = 0 === $i %% 2 ? maybe_serialize( array( 'Content-Type: text/html', 'Cc: cc@example.org' ) ) : '';
	$data = array( 'to' => $to, 'subject' => "WP #$i", 'message' => 0 === $i %% 2 ? "<p>WP $i</p>" : "WP $i", 'headers' => $headers );
	if ( 0 === $i %% 7 ) {
		$data['error'] = "Could not instantiate mail function ($i).";
	}
	if ( false === $wpdb->insert( $wpdb->prefix . 'wpsmtp_logs', $data, array_fill( 0, count( $data ), '%%s' ) ) ) {
		wpsite_fail( $wpdb->last_error );
	}
	$wpdb->query( $wpdb->prepare( "UPDATE {$wpdb->prefix}wpsmtp_logs SET timestamp = FROM_UNIXTIME( %%d ) WHERE mail_id = %%d", %d + $i * 600, $wpdb->insert_id ) );
}
`, rows, base))

	e, ok := s.scan(t, true)["wp-smtp"]
	if !ok || !e.Active || e.Connections == nil || *e.Connections != 1 || e.LogRows == nil || *e.LogRows != rows {
		t.Fatalf("scan entry %+v (found %v)", e, ok)
	}
	want := map[string]wantConn{"legacy_smtp_id": {status: "ready", from: "smtp", to: "smtp", def: true}}
	ids := dryRunThenImport(t, s, "wp-smtp", want, password)
	checkDefault(t, s, ids["legacy_smtp_id"], 0)
	sendThrough(t, s, sink, ids["legacy_smtp_id"], "wp-user")

	// Solid Mail 2.x: MigrationVer130 turned the old option into the
	// provider legacy_smtp_id (credentials decoded), then a SendGrid
	// provider became the active one.
	s.setOption(t, "solid_smtp_providers", fmt.Sprintf(`array(
	'legacy_smtp_id' => array( 'id' => 'legacy_smtp_id', 'name' => 'other', 'description' => 'Other SMTP: shop@example.com',
		'from_email' => 'shop@example.com', 'from_name' => 'Shop', 'smtp_host' => '127.0.0.1', 'smtp_port' => %s,
		'smtp_auth' => 'yes', 'smtp_username' => 'wp-user', 'smtp_password' => %s, 'disable_logs' => false,
		'smtp_secure' => '', 'is_active' => false ),
	'66a1b2c3d4e5f' => array( 'id' => '66a1b2c3d4e5f', 'name' => 'sendgrid', 'description' => '',
		'from_email' => 'news@example.com', 'from_name' => 'News', 'smtp_host' => 'smtp.sendgrid.net', 'smtp_port' => 587,
		'smtp_auth' => 'yes', 'smtp_username' => 'apikey', 'smtp_password' => 'SG.solid-key', 'disable_logs' => false,
		'smtp_secure' => 'tls', 'is_active' => true ),
)`, wpsite.PHPString(fmt.Sprint(sink.Port())), wpsite.PHPString(password)))
	want = map[string]wantConn{
		"legacy_smtp_id": {status: "ready", from: "other", to: "smtp"},
		"66a1b2c3d4e5f":  {status: "ready", from: "sendgrid", to: "smtp", def: true},
	}
	res := s.mustImport(t, `{"source":"wp-smtp"}`)
	after := checkConns(t, res, want, true)
	if after["legacy_smtp_id"] != ids["legacy_smtp_id"] || len(s.connections(t)) != 2 {
		t.Errorf("after Solid Mail: legacy id %d (was %d), %d connections; want it updated and one added",
			after["legacy_smtp_id"], ids["legacy_smtp_id"], len(s.connections(t)))
	}
	checkDefault(t, s, after["66a1b2c3d4e5f"], 0)

	logs := importLogsInTwoChunks(t, s, "wp-smtp", rows)
	for i := 1; i <= rows; i++ {
		l := logs[fmt.Sprintf("WP #%d", i)]
		wantStatus, wantTo := core.StatusDelivered, 1
		if i%7 == 0 {
			wantStatus = core.StatusFailed
		}
		if i%4 == 0 {
			wantTo = 2
		}
		at := time.Unix(base+int64(i)*600, 0)
		if l.Status != wantStatus || !l.CreatedAt.Equal(at) || len(l.Message.To) != wantTo {
			t.Errorf("row %d: %s at %s to %v; want %s at %s, %d recipients", i, l.Status, l.CreatedAt, l.Message.To, wantStatus, at.UTC(), wantTo)
		}
	}
	html := s.log(t, logs["WP #2"].ID)
	if html.Message.HTML != "<p>WP 2</p>" || len(html.Message.Cc) != 1 {
		t.Errorf("html row %+v", html.Message)
	}
	if failed := logs["WP #7"]; failed.LastError != "Could not instantiate mail function (7)." {
		t.Errorf("failed row last_error %q", failed.LastError)
	}
}
