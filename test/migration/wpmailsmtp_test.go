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

// wpmsEncryptPHP is WP Mail SMTP's Crypto::encrypt() (src/Helpers/Crypto.php):
// the key is WPMS_CRYPTO_KEY, else the option wp_mail_smtp_mail_key
// (base64 of a sodium_crypto_secretbox_keygen() key, created on first
// use); stored = base64(nonce ‖ secretbox). $key overrides the key, to
// write a value sealed with a key the site no longer has.
const wpmsEncryptPHP = `function fx_wpms_secret_key() {
	if ( defined( 'WPMS_CRYPTO_KEY' ) ) {
		return WPMS_CRYPTO_KEY;
	}
	$secret_key = get_option( 'wp_mail_smtp_mail_key' );
	if ( false === $secret_key ) {
		$secret_key = sodium_crypto_secretbox_keygen();
		add_option( 'wp_mail_smtp_mail_key', base64_encode( $secret_key ) );
		return $secret_key;
	}
	return base64_decode( $secret_key );
}
function fx_wpms_encrypt( $message, $key = null ) {
	$secret_key = null === $key ? fx_wpms_secret_key() : $key;
	$nonce = random_bytes( SODIUM_CRYPTO_SECRETBOX_NONCEBYTES );
	return base64_encode( $nonce . sodium_crypto_secretbox( $message, $nonce, $secret_key ) );
}
`

// wpmsLogTable is WP Mail SMTP Pro's email log (src/Pro/Emails/Logs/Migration.php).
const wpmsLogTable = "CREATE TABLE `{prefix}wpmailsmtp_emails_log` (\n" +
	"`id` INT UNSIGNED NOT NULL AUTO_INCREMENT,\n" +
	"`message_id` VARCHAR(255) NULL,\n" +
	"`subject` VARCHAR(191) NOT NULL,\n" +
	"`people` TEXT NOT NULL,\n" +
	"`headers` TEXT NOT NULL,\n" +
	"`error_text` TEXT NULL,\n" +
	"`content_plain` LONGTEXT NOT NULL,\n" +
	"`content_html` LONGTEXT NOT NULL,\n" +
	"`status` TINYINT UNSIGNED NOT NULL DEFAULT 0,\n" +
	"`date_sent` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,\n" +
	"`mailer` VARCHAR(255) NOT NULL,\n" +
	"`attachments` TINYINT UNSIGNED NOT NULL DEFAULT 0,\n" +
	"`initiator_name` VARCHAR(255) NULL,\n" +
	"`initiator_file` TEXT NULL,\n" +
	"PRIMARY KEY (id)\n" +
	") {charset};"

// wpmsLogBase is the Unix time of the first fixture log row; row i is at
// wpmsLogBase + i hours, written in UTC as Pro ≥ 2.6.0 writes date_sent.
const wpmsLogBase = 1717232400 // 2024-06-01 09:00:00 UTC

// wpmsRows is the number of rows of the fixture log.
const wpmsRows = 250

// Additional connection ids of the Pro fixture.
const (
	wpmsSendGridID = "65a1f0c2b3d4e"
	wpmsGmailID    = "65a1f0c2b3d4f"
	wpmsLayerID    = "65a1f0c2b3d50"
	wpmsOldKeyID   = "65a1f0c2b3d51"
)

// TestWPMailSMTPPro imports WP Mail SMTP Pro: the primary connection with
// its secretbox-sealed SMTP password, the additional connections and the
// backup connection, and the email log (UTC times on a Berlin site),
// through REST and `mailsvc import --logs --max-logs`.
func TestWPMailSMTPPro(t *testing.T) {
	const smtpPassword = "wpms-Pa$$word 'quoted'"
	const sendgridKey = "SG.wpms-backup-key-987654"
	s := newSite(t)
	sink := smtpsink.Start(t, smtpsink.WithAuth("wpms-user", smtpPassword))
	s.setTimezone(t, "Europe/Berlin")
	s.activatePlugins(t, "wp-mail-smtp-pro/wp_mail_smtp.php")
	s.php(t, wpmsEncryptPHP+fmt.Sprintf(`
$mail = function ( $from, $mailer ) {
	return array( 'from_email' => $from, 'from_name' => 'Site', 'mailer' => $mailer, 'return_path' => false, 'from_email_force' => true, 'from_name_force' => false );
};
update_option( 'wp_mail_smtp_version', '4.8.0' );
update_option( 'wp_mail_smtp', array(
	'mail'              => $mail( 'site@example.com', 'smtp' ),
	'smtp'              => array( 'autotls' => true, 'auth' => true, 'host' => '127.0.0.1', 'encryption' => 'none', 'port' => %[1]d, 'user' => 'wpms-user', 'pass' => fx_wpms_encrypt( %[2]s ) ),
	'general'           => array( 'summary_report_email_disabled' => false ),
	'backup_connection' => array( 'connection_id' => %[3]s ),
) );
update_option( 'wp_mail_smtp_additional_connections', array(
	%[3]s => array(
		'connection' => array( 'id' => %[3]s, 'name' => 'Backup SendGrid' ),
		'mail'       => $mail( 'backup@example.com', 'sendgrid' ),
		'sendgrid'   => array( 'api_key' => %[4]s, 'domain' => '' ),
	),
	%[5]s => array(
		'connection' => array( 'id' => %[5]s, 'name' => 'Workspace' ),
		'mail'       => $mail( 'owner@gmail.example', 'gmail' ),
		'gmail'      => array( 'client_id' => '42-wpms.apps.googleusercontent.com', 'client_secret' => 'wpms-gmail-secret', 'access_token' => array(), 'refresh_token' => '', 'user_details' => array() ),
	),
	%[6]s => array(
		'connection' => array( 'id' => %[6]s, 'name' => 'SendLayer' ),
		'mail'       => $mail( 'layer@example.com', 'sendlayer' ),
		'sendlayer'  => array( 'api_key' => 'sendlayer-key' ),
	),
	%[7]s => array(
		'connection' => array( 'id' => %[7]s, 'name' => 'Old relay' ),
		'mail'       => $mail( 'old@example.com', 'smtp' ),
		'smtp'       => array( 'autotls' => true, 'auth' => true, 'host' => 'relay.example.com', 'encryption' => 'tls', 'port' => 587, 'user' => 'old', 'pass' => fx_wpms_encrypt( 'old-pass', sodium_crypto_secretbox_keygen() ) ),
	),
) );
`, sink.Port(), wpsite.PHPString(smtpPassword), wpsite.PHPString(wpmsSendGridID), wpsite.PHPString(sendgridKey),
		wpsite.PHPString(wpmsGmailID), wpsite.PHPString(wpmsLayerID), wpsite.PHPString(wpmsOldKeyID)))
	s.CreateTable(t, wpmsLogTable)
	// Email::save(): people and headers as JSON, date_sent in UTC.
	s.insertRows(t, "wpmailsmtp_emails_log", fmt.Sprintf(`array_map( function ( $i ) {
	$fail = 0 === $i %% 7;
	return array(
		'message_id'     => "<msg$i@example.com>",
		'subject'        => "Report $i",
		'people'         => wp_json_encode( array( 'to' => array( "reader$i@example.com" ), 'cc' => array(), 'bcc' => 0 === $i %% 5 ? array( 'audit@example.com' ) : array(), 'from' => 'site@example.com' ) ),
		'headers'        => wp_json_encode( array( 'From: Site <site@example.com>', 'Content-Type: text/html; charset=UTF-8' ) ),
		'error_text'     => $fail ? "Mailer: SMTP connect() failed ($i)." : null,
		'content_plain'  => "Report $i",
		'content_html'   => "<b>Report $i</b>",
		'status'         => $fail ? 0 : ( 0 === $i %% 2 ? 3 : 1 ),
		'date_sent'      => gmdate( 'Y-m-d H:i:s', %d + $i * HOUR_IN_SECONDS ),
		'mailer'         => 'smtp',
		'attachments'    => 0,
		'initiator_name' => 'WooCommerce',
		'initiator_file' => '/var/www/wp-content/plugins/woocommerce/woocommerce.php',
	);
}, range( 1, %d ) )`, wpmsLogBase, wpmsRows))

	type want struct {
		status, from, to       string
		written, def, fallback bool
	}
	wants := map[string]want{
		"primary":      {status: "ready", from: "smtp", to: "smtp", written: true, def: true},
		wpmsSendGridID: {status: "ready", from: "sendgrid", to: "sendgrid", written: true, fallback: true},
		wpmsGmailID:    {status: "needs_authorization", from: "gmail", to: "gmail", written: true},
		wpmsLayerID:    {status: "ready", from: "sendlayer", to: "sendlayer", written: true},
		wpmsOldKeyID:   {status: "needs_password", from: "smtp", to: "smtp"},
	}
	check := func(t *testing.T, res *importResult, written bool) {
		t.Helper()
		if len(res.Connections) != len(wants) {
			t.Fatalf("%d connections, want %d: %+v", len(res.Connections), len(wants), res.Connections)
		}
		for key, w := range wants {
			c := res.connection(t, key)
			if c.Status != w.status || c.Conversion.From != w.from || c.Conversion.To != w.to || c.WasDefault != w.def || c.WasFallback != w.fallback {
				t.Errorf("%s: %s %s→%s default %v fallback %v, want %s %s→%s %v %v (issues %v)", c.Name, c.Status, c.Conversion.From, c.Conversion.To,
					c.WasDefault, c.WasFallback, w.status, w.from, w.to, w.def, w.fallback, c.Issues)
			}
			if (c.ConnectionID != nil) != (written && w.written) {
				t.Errorf("%s: connection_id %v", c.Name, c.ConnectionID)
			}
		}
		if old := res.connection(t, wpmsOldKeyID); strings.Join(old.Missing, ",") != "password" || old.Settings["password"] != nil {
			t.Errorf("password sealed with a lost key: missing %v settings %v", old.Missing, old.Settings)
		}
		if sg := res.connection(t, wpmsSendGridID); sg.Name != "Backup SendGrid (backup@example.com)" || sg.Settings["api_key"] == sendgridKey || sg.Settings["api_key"] == nil {
			t.Errorf("sendgrid: name %q api_key %v, want the connection's name and a masked key", sg.Name, sg.Settings["api_key"])
		}
	}

	t.Run("scan", func(t *testing.T) {
		e, ok := s.scan(t, true)["wp-mail-smtp"]
		if !ok || !e.Active || e.Version != "4.8.0" || !e.LogsAvailable {
			t.Fatalf("scan entry %+v (found %v)", e, ok)
		}
		if e.Connections == nil || *e.Connections != len(wants) || e.LogRows == nil || *e.LogRows != wpmsRows {
			t.Errorf("scan counts: connections %v log_rows %v", e.Connections, e.LogRows)
		}
	})

	t.Run("dry run writes nothing", func(t *testing.T) {
		res := s.mustImport(t, `{"source":"wp-mail-smtp","dry_run":true,"import_logs":true}`)
		check(t, res, false)
		if res.Logs.Total != wpmsRows || !res.Logs.Done {
			t.Errorf("dry run logs %+v", res.Logs)
		}
		if c := s.connections(t); len(c) != 0 {
			t.Errorf("dry run created %d connections", len(c))
		}
		if l := s.logs(t); len(l) != 0 {
			t.Errorf("dry run wrote %d logs", len(l))
		}
	})

	ids := map[string]int64{}
	t.Run("import", func(t *testing.T) {
		noSecret(t, "import answer", s.importAnswer(t, "import", `{"source":"wp-mail-smtp"}`), "wpms-Pa$$word", sendgridKey, "wpms-gmail-secret", "sendlayer-key")
		res := s.mustImport(t, `{"source":"wp-mail-smtp"}`)
		check(t, res, true)
		for key, w := range wants {
			if w.written {
				ids[key] = *res.connection(t, key).ConnectionID
			}
		}
		if n := len(s.connections(t)); n != 4 {
			t.Errorf("%d connections, want 4", n)
		}
		st := s.settings(t)
		if fmt.Sprint(st["default_connection_id"]) != fmt.Sprint(ids["primary"]) || fmt.Sprint(st["fallback_connection_id"]) != fmt.Sprint(ids[wpmsSendGridID]) {
			t.Errorf("default %v fallback %v, want %d %d", st["default_connection_id"], st["fallback_connection_id"], ids["primary"], ids[wpmsSendGridID])
		}
	})

	t.Run("decrypted password authenticates", func(t *testing.T) {
		if ids["primary"] == 0 {
			t.Skip("no imported primary connection")
		}
		sendThrough(t, s, sink, ids["primary"], "wpms-user")
	})

	t.Run("mailsvc import --logs --max-logs", func(t *testing.T) {
		r := s.cli(t, "import", "wp-mail-smtp", "--logs", "--max-logs", "120")
		if r.Code != 0 {
			t.Fatalf("mailsvc import: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		for _, line := range []string{"Imported from wp-mail-smtp:", "ready", "(default)", "(fallback)", "needs_password", "Logs: 120 imported, 0 skipped"} {
			if !strings.Contains(r.Stdout, line) {
				t.Errorf("output lacks %q:\n%s", line, r.Stdout)
			}
		}
		if strings.Contains(r.Stdout+r.Stderr, "wpms-Pa$$word") || strings.Contains(r.Stdout+r.Stderr, sendgridKey) {
			t.Errorf("output shows a secret:\n%s", r.Stdout)
		}
		if n := len(s.connections(t)); n != 4 {
			t.Errorf("%d connections after the command's import, want still 4", n)
		}
		if n := countSource(s.logs(t), "import:wp-mail-smtp"); n != 120 {
			t.Errorf("%d logs imported by --max-logs 120", n)
		}
		// The next run continues after the rows already imported.
		runs := s.importAllLogs(t, "wp-mail-smtp", `"max_logs":100`)
		if len(runs) != 1 || runs[0].Logs.Imported != 100 || !runs[0].Logs.Done {
			t.Errorf("max_logs 100: %d calls, first %+v", len(runs), runs[0].Logs)
		}
		runs = s.importAllLogs(t, "wp-mail-smtp", "")
		if len(runs) != 1 || runs[0].Logs.Imported != wpmsRows-220 || !runs[0].Logs.Done {
			t.Errorf("rest of the log: %d calls, first %+v", len(runs), runs[0].Logs)
		}
	})

	t.Run("imported logs", func(t *testing.T) {
		logs := map[string]core.Log{}
		for _, l := range s.logs(t) {
			if l.Source == "import:wp-mail-smtp" {
				logs[l.Message.Subject] = l
			}
		}
		if len(logs) != wpmsRows {
			t.Fatalf("%d imported logs, want %d", len(logs), wpmsRows)
		}
		for i := int64(1); i <= wpmsRows; i++ {
			l := logs[fmt.Sprintf("Report %d", i)]
			if want := time.Unix(wpmsLogBase+i*3600, 0).UTC(); !l.CreatedAt.Equal(want) {
				t.Errorf("row %d: created_at %s, want %s (date_sent is UTC: no site time zone shift)", i, l.CreatedAt, want)
			}
			wantStatus := core.StatusDelivered
			if i%7 == 0 {
				wantStatus = core.StatusFailed
				if !strings.Contains(l.LastError, fmt.Sprintf("SMTP connect() failed (%d)", i)) {
					t.Errorf("row %d: last_error %q", i, l.LastError)
				}
			}
			if l.Status != wantStatus || len(l.Message.To) != 1 || l.Message.To[0].Email != fmt.Sprintf("reader%d@example.com", i) {
				t.Errorf("row %d: status %q to %v, want %q", i, l.Status, l.Message.To, wantStatus)
			}
		}
		full := s.log(t, logs["Report 10"].ID)
		if full.Message.HTML != "<b>Report 10</b>" || full.Message.Text != "Report 10" || len(full.Message.Bcc) != 1 || full.Message.From.Email != "site@example.com" {
			t.Errorf("row 10: %+v", full.Message)
		}
	})
}

// countSource counts the logs marked with source.
func countSource(logs []core.Log, source string) int {
	n := 0
	for _, l := range logs {
		if l.Source == source {
			n++
		}
	}
	return n
}

// TestWPMailSMTPLiteConstants imports WP Mail SMTP Lite whose SMTP
// password is pinned in wp-config.php (WPMS_ON): the connection needs the
// password, the issue names the constant and its MAILSVC_* equivalent, and
// there is no log to import.
func TestWPMailSMTPLiteConstants(t *testing.T) {
	s := newSiteConfig(t, `define( 'WPMS_ON', true );
define( 'WPMS_SMTP_PASS', 'pinned-in-wp-config' );`)
	s.activatePlugins(t, "wp-mail-smtp/wp_mail_smtp.php")
	// With the constant defined, the plugin saves the DB copy blank.
	s.setOption(t, "wp_mail_smtp", `array(
	'mail' => array( 'from_email' => 'lite@example.com', 'from_name' => 'Lite', 'mailer' => 'smtp', 'return_path' => false, 'from_email_force' => false, 'from_name_force' => false ),
	'smtp' => array( 'autotls' => true, 'auth' => true, 'host' => 'smtp.example.com', 'encryption' => 'tls', 'port' => 587, 'user' => 'lite-user', 'pass' => '' ),
)`)
	e, ok := s.scan(t, true)["wp-mail-smtp"]
	if !ok || e.LogsAvailable || e.LogRows == nil || *e.LogRows != 0 || e.Connections == nil || *e.Connections != 1 {
		t.Fatalf("scan: %+v (found %v), want one connection and no log", e, ok)
	}
	res := s.mustImport(t, `{"source":"wp-mail-smtp","import_logs":true}`)
	c := res.connection(t, "primary")
	if c.Status != "needs_password" || strings.Join(c.Missing, ",") != "password" || c.ConnectionID != nil || !c.WasDefault {
		t.Errorf("pinned password: %+v", c)
	}
	issues := strings.Join(c.Issues, "\n")
	if !strings.Contains(issues, "WPMS_SMTP_PASS") || !strings.Contains(issues, "MAILSVC_SMTP_PASSWORD") {
		t.Errorf("issues do not name WPMS_SMTP_PASS and MAILSVC_SMTP_PASSWORD: %v", c.Issues)
	}
	if strings.Contains(fmt.Sprint(res), "pinned-in-wp-config") {
		t.Errorf("the constant's value is in the answer: %+v", res)
	}
	if res.Logs.Available || !res.Logs.Done || res.Logs.Reason == "" {
		t.Errorf("Lite logs: %+v, want unavailable with a reason", res.Logs)
	}
	if n := len(s.connections(t)); n != 0 {
		t.Errorf("%d connections written for a needs_password import", n)
	}
}
