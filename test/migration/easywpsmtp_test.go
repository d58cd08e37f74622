package migration

import (
	"fmt"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// easyV1EncryptPHP is Easy WP SMTP 1.x's password encryption
// (EasyWPSMTP_Utils + inc/Cryptor.php): the key is the option
// swpsmtp_enc_key, seeded from wp_salt(); AES-256-CTR keyed by its raw
// SHA-256, stored as base64(IV ‖ ciphertext); swpsmtp_pass_encrypted set.
const easyV1EncryptPHP = `function fx_easy_v1_encrypt( $pass ) {
	$key = get_option( 'swpsmtp_enc_key', false );
	if ( empty( $key ) ) {
		$key = wp_salt();
		update_option( 'swpsmtp_enc_key', $key );
	}
	$iv = openssl_random_pseudo_bytes( openssl_cipher_iv_length( 'aes-256-ctr' ) );
	$enc = openssl_encrypt( $pass, 'aes-256-ctr', openssl_digest( $key, 'sha256', true ), OPENSSL_RAW_DATA, $iv );
	if ( false === $enc ) {
		wpsite_fail( 'openssl_encrypt failed' );
	}
	update_option( 'swpsmtp_pass_encrypted', true );
	return base64_encode( $iv . $enc );
}
`

// easyV2EncryptPHP is Easy WP SMTP 2.x's Helpers\Crypto::encrypt: a
// secretbox key created once in the option easy_wp_smtp_mail_key
// (base64), stored as base64(nonce ‖ box).
const easyV2EncryptPHP = `function fx_easy_v2_encrypt( $message ) {
	$key = get_option( 'easy_wp_smtp_mail_key' );
	if ( false === $key ) {
		$raw = sodium_crypto_secretbox_keygen();
		add_option( 'easy_wp_smtp_mail_key', base64_encode( $raw ) );
	} else {
		$raw = base64_decode( $key );
	}
	$nonce = random_bytes( SODIUM_CRYPTO_SECRETBOX_NONCEBYTES );
	return base64_encode( $nonce . sodium_crypto_secretbox( $message, $nonce, $raw ) );
}
`

// easyLogTableDDL is Easy WP SMTP Pro's email log, in WP Mail SMTP Pro's
// layout (src/Pro/Emails/Logs/Migration.php).
const easyLogTableDDL = "CREATE TABLE `{prefix}easywpsmtp_emails_log` (\n" +
	"`id` INT UNSIGNED NOT NULL AUTO_INCREMENT,\n" +
	"`message_id` VARCHAR(255) NULL,\n" +
	"`subject` VARCHAR(191) NOT NULL,\n" +
	"`people` TEXT NOT NULL,\n" +
	"`headers` TEXT NOT NULL,\n" +
	"`error_text` TEXT NULL,\n" +
	"`content_plain` LONGTEXT NULL,\n" +
	"`content_html` LONGTEXT NULL,\n" +
	"`status` TINYINT UNSIGNED NOT NULL DEFAULT '0',\n" +
	"`date_sent` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,\n" +
	"`mailer` VARCHAR(255) NOT NULL,\n" +
	"`attachments` TINYINT UNSIGNED NOT NULL DEFAULT '0',\n" +
	"`initiator_name` VARCHAR(255) NULL,\n" +
	"`initiator_file` TEXT NULL,\n" +
	"PRIMARY KEY (`id`)\n" +
	") {charset};"

// TestEasyWPSMTP imports Easy WP SMTP 1.x (AES-encrypted password), then
// the same site after the upgrade to 2.x (secretbox password, converted
// option): one connection throughout, and Pro's log.
func TestEasyWPSMTP(t *testing.T) {
	const v1Pass, v2Pass = "v1 Pa$$word%", "v2 secretbox pass"
	s := newSite(t)
	sinkV1 := smtpsink.Start(t, smtpsink.WithAuth("v1-user", v1Pass))
	sinkV2 := smtpsink.Start(t, smtpsink.WithAuth("v2-user", v2Pass))
	s.activatePlugins(t, "easy-wp-smtp/easy-wp-smtp.php")
	s.php(t, easyV1EncryptPHP+fmt.Sprintf(`
update_option( 'swpsmtp_options', array(
	'from_email_field' => 'shop@example.com', 'from_name_field' => 'Shop', 'force_from_name_replace' => 1,
	'sub_mode' => 0, 'reply_to_email' => '', 'bcc_email' => '', 'email_ignore_list' => '',
	'enable_domain_check' => 0, 'allowed_domains' => base64_encode( 'example.com' ), 'block_all_emails' => 0,
	'smtp_settings' => array(
		'host' => '127.0.0.1', 'type_encryption' => 'none', 'port' => %s, 'autentication' => 'yes',
		'username' => 'v1-user', 'password' => fx_easy_v1_encrypt( %s ), 'encrypt_pass' => 1,
		'insecure_ssl' => false, 'enable_debug' => 0, 'log_file_name' => '5f1d_debug_log.txt',
	),
), 'yes' );
`, wpsite.PHPString(fmt.Sprint(sinkV1.Port())), wpsite.PHPString(v1Pass)))

	e, ok := s.scan(t, true)["easy-wp-smtp"]
	if !ok || !e.Active || e.Connections == nil || *e.Connections != 1 || e.LogsAvailable {
		t.Fatalf("v1 scan entry %+v (found %v): want active, 1 connection, no log", e, ok)
	}
	want := map[string]wantConn{"primary": {status: "ready", from: "smtp", to: "smtp", def: true}}
	ids := dryRunThenImport(t, s, "easy-wp-smtp", want, v1Pass)
	checkDefault(t, s, ids["primary"], 0)
	sendThrough(t, s, sinkV1, ids["primary"], "v1-user")

	// The upgrade to 2.x: DeprecatedOptionsConverter writes easy_wp_smtp
	// (WP Mail SMTP's groups) and the password is sealed again; the v1
	// option stays. Pro logs to its own table.
	s.php(t, easyV2EncryptPHP+fmt.Sprintf(`
update_option( 'easy_wp_smtp', array(
	'mail' => array( 'from_email' => 'shop@example.com', 'from_name' => 'Shop', 'mailer' => 'smtp', 'return_path' => true,
		'from_email_force' => true, 'from_name_force' => false, 'reply_to_email' => '', 'bcc_emails' => array() ),
	'smtp' => array( 'host' => '127.0.0.1', 'port' => %s, 'encryption' => 'none', 'autotls' => false, 'auth' => true,
		'user' => 'v2-user', 'pass' => fx_easy_v2_encrypt( %s ) ),
	'general' => array( 'domain_check_allowed_domains' => 'example.com' ),
) );
`, wpsite.PHPString(fmt.Sprint(sinkV2.Port())), wpsite.PHPString(v2Pass)))
	s.CreateTable(t, easyLogTableDDL)
	const base = 1767225600 // 2026-01-01 00:00:00 UTC
	n := s.insertRows(t, "easywpsmtp_emails_log", fmt.Sprintf(`array_map( function ( $i ) {
	return array(
		'subject'       => "Easy #$i",
		'people'        => wp_json_encode( array( 'to' => array( "to$i@example.org" ), 'cc' => array(), 'bcc' => array(), 'from' => 'shop@example.com' ) ),
		'headers'       => wp_json_encode( array( 'From: Shop <shop@example.com>', 'Content-Type: text/html' ) ),
		'error_text'    => 0 === $i %% 3 ? "Could not connect ($i)" : null,
		'content_plain' => '',
		'content_html'  => "<p>Easy $i</p>",
		'status'        => 0 === $i %% 3 ? 0 : 1,
		'date_sent'     => gmdate( 'Y-m-d H:i:s', %d + $i * HOUR_IN_SECONDS ),
		'mailer'        => 'smtp',
		'attachments'   => 0,
	);
}, range( 1, 230 ) )`, base))
	if n != 230 {
		t.Fatalf("inserted %d log rows, want 230", n)
	}
	e = s.scan(t, true)["easy-wp-smtp"]
	if !e.LogsAvailable || e.LogRows == nil || *e.LogRows != 230 {
		t.Errorf("v2 scan entry %+v: want 230 log rows", e)
	}
	noSecret(t, "v2 import", s.importAnswer(t, "v2 import", `{"source":"easy-wp-smtp"}`), v2Pass, v1Pass)
	res := s.mustImport(t, `{"source":"easy-wp-smtp"}`)
	again := checkConns(t, res, want, true)
	if again["primary"] != ids["primary"] || len(s.connections(t)) != 1 {
		t.Fatalf("after the upgrade: id %d (was %d), %d connections; want the same one", again["primary"], ids["primary"], len(s.connections(t)))
	}
	if !hasString(res.Suggestions, "1.x settings") {
		t.Errorf("suggestions %v lack the note on the v1 settings left behind", res.Suggestions)
	}
	sendThrough(t, s, sinkV2, again["primary"], "v2-user")

	logs := importLogsInTwoChunks(t, s, "easy-wp-smtp", 230)
	for _, i := range []int{1, 3, 230} {
		l := logs[fmt.Sprintf("Easy #%d", i)]
		wantStatus := core.StatusDelivered
		if i%3 == 0 {
			wantStatus = core.StatusFailed
		}
		if l.Status != wantStatus || !l.CreatedAt.Equal(time.Unix(base+int64(i)*3600, 0)) ||
			len(l.Message.To) != 1 || l.Message.To[0].Email != fmt.Sprintf("to%d@example.org", i) {
			t.Errorf("log %d: status %s at %s to %v; want %s at %s", i, l.Status, l.CreatedAt, l.Message.To, wantStatus, time.Unix(base+int64(i)*3600, 0).UTC())
		}
	}
	if again := s.importAllLogs(t, "easy-wp-smtp", ""); again[0].Logs.Imported != 0 {
		t.Errorf("second log run imported %d", again[0].Logs.Imported)
	}
}
