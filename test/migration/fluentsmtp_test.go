package migration

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// fluentEncryptPHP is FluentSMTP's fluentMailEncryptDecrypt() encrypt
// branch (app/Functions/helpers.php): AES-256-CTR of value‖salt with
// FLUENTMAIL_ENCRYPT_KEY/_SALT, else LOGGED_IN_KEY/LOGGED_IN_SALT, stored
// as base64(IV ‖ openssl's base64 output). $key and $salt override the
// site's, to write a value encrypted before the site's salts changed.
const fluentEncryptPHP = `function fx_fluent_encrypt( $value, $key = null, $salt = null ) {
	if ( null === $salt ) {
		$salt = defined( 'FLUENTMAIL_ENCRYPT_SALT' ) ? FLUENTMAIL_ENCRYPT_SALT : ( ( defined( 'LOGGED_IN_SALT' ) && '' !== LOGGED_IN_SALT ) ? LOGGED_IN_SALT : 'this-is-a-fallback-salt-but-not-secure' );
	}
	if ( null === $key ) {
		$key = defined( 'FLUENTMAIL_ENCRYPT_KEY' ) ? FLUENTMAIL_ENCRYPT_KEY : ( ( defined( 'LOGGED_IN_KEY' ) && '' !== LOGGED_IN_KEY ) ? LOGGED_IN_KEY : 'this-is-a-fallback-key-but-not-secure' );
	}
	$method = 'aes-256-ctr';
	$iv = openssl_random_pseudo_bytes( openssl_cipher_iv_length( $method ) );
	$raw = openssl_encrypt( $value . $salt, $method, $key, 0, $iv );
	if ( ! $raw ) {
		wpsite_fail( 'openssl_encrypt failed' );
	}
	return base64_encode( $iv . $raw );
}
`

// fluentLogTable is FluentSMTP's database/migrations/EmailLogs.php table.
const fluentLogTable = "CREATE TABLE `{prefix}fsmpt_email_logs` (\n" +
	"`id` INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,\n" +
	"`site_id` INT UNSIGNED NULL,\n" +
	"`to` VARCHAR(255),\n" +
	"`from` VARCHAR(255),\n" +
	"`subject` VARCHAR(255),\n" +
	"`body` LONGTEXT NULL,\n" +
	"`headers` LONGTEXT NULL,\n" +
	"`attachments` LONGTEXT NULL,\n" +
	"`status` VARCHAR(20) DEFAULT 'pending',\n" +
	"`response` TEXT NULL,\n" +
	"`extra` TEXT NULL,\n" +
	"`retries` INT UNSIGNED NULL DEFAULT 0,\n" +
	"`resent_count` INT UNSIGNED NULL DEFAULT 0,\n" +
	"`source` VARCHAR(255) NULL,\n" +
	"`created_at` TIMESTAMP NULL,\n" +
	"`updated_at` TIMESTAMP NULL\n" +
	") {charset};"

// fluentLogBase is the Unix time of the first fixture log row (row i is
// logged at fluentLogBase + i days): 2024-01-15 09:02:17 UTC, so the rows
// cross both Berlin offsets (CET +1, CEST +2).
const fluentLogBase = 1705309337

// fluentRows is the number of rows of the fixture log; the last one has a
// cut-off `to` column and cannot be imported.
const fluentRows = 450

// fluentKey is FluentSMTP's connection key: md5 of the sender address.
func fluentKey(sender string) string {
	sum := md5.Sum([]byte(sender))
	return hex.EncodeToString(sum[:])
}

// The fixture's FluentSMTP connections, by sender address.
const (
	fluentSMTPSender     = "shop@example.com"
	fluentSendGridSender = "news@example.com"
	fluentGmailSender    = "owner@gmail.example"
	fluentElasticSender  = "promo@example.com"
	fluentOldKeySender   = "legacy@example.com"
	fluentMailgunSender  = "mg@example.com"
)

// writeFluentSMTP stores FluentSMTP's settings as Settings::store() saves
// them (six connections, encrypted secrets, the test value), creates its
// log table and logs fluentRows messages in site-local time.
func writeFluentSMTP(t *testing.T, s *migrationSite, sink *smtpsink.Sink, smtpPassword, sendgridKey string) {
	t.Helper()
	s.setTimezone(t, "Europe/Berlin")
	s.activatePlugins(t, "fluent-smtp/fluent-smtp.php")
	s.php(t, fluentEncryptPHP+fmt.Sprintf(`
$settings = array(
	'mappings'    => array(),
	'connections' => array(),
	'misc'        => array(
		'log_emails'              => 'yes',
		'log_saved_interval_days' => '14',
		'disable_fluentcrm_logs'  => 'no',
		'default_connection'      => '',
		'fallback_connection'     => '',
	),
	'use_encrypt' => 'yes',
	'test'        => fx_fluent_encrypt( 'test' ),
);
$add = function ( $title, $ps ) use ( &$settings ) {
	$ps = array_merge( array(
		'sender_name'      => 'Shop',
		'force_from_name'  => 'no',
		'force_from_email' => 'yes',
		'return_path'      => 'yes',
		'key_store'        => 'db',
	), $ps );
	$key = md5( $ps['sender_email'] );
	$settings['connections'][ $key ] = array( 'title' => $title, 'provider_settings' => $ps );
	$settings['mappings'][ $ps['sender_email'] ] = $key;
	return $key;
};
$smtp = $add( 'SMTP server', array(
	'provider' => 'smtp', 'sender_email' => %[1]s, 'host' => '127.0.0.1', 'port' => %[2]s,
	'auth' => 'yes', 'username' => 'shop-user', 'password' => fx_fluent_encrypt( %[3]s ),
	'auto_tls' => 'no', 'encryption' => 'none',
) );
$sendgrid = $add( 'SendGrid', array( 'provider' => 'sendgrid', 'sender_email' => %[4]s, 'api_key' => fx_fluent_encrypt( %[5]s ) ) );
$add( 'Gmail or Google Workspace', array(
	'provider' => 'gmail', 'sender_email' => %[6]s, 'client_id' => '1234-abc.apps.googleusercontent.com',
	'client_secret' => fx_fluent_encrypt( 'gmail-client-secret' ), 'auth_token' => '', 'access_token' => '',
	'refresh_token' => '', 'expire_stamp' => '', 'expires_in' => '', 'version' => 2,
) );
$add( 'Elastic Email', array( 'provider' => 'elasticmail', 'sender_email' => %[7]s, 'api_key' => fx_fluent_encrypt( 'elastic-key' ), 'mail_type' => 'transactional' ) );
$add( 'SMTP (old salts)', array(
	'provider' => 'smtp', 'sender_email' => %[8]s, 'host' => 'smtp.example.com', 'port' => '587',
	'auth' => 'yes', 'username' => 'legacy', 'password' => fx_fluent_encrypt( 'old-password', 'a-key-the-site-no-longer-has', 'an-old-salt' ),
	'auto_tls' => 'yes', 'encryption' => 'tls',
) );
$add( 'Mailgun', array( 'provider' => 'mailgun', 'sender_email' => %[9]s, 'key_store' => 'wp_config', 'api_key' => '', 'domain_name' => '', 'region' => 'us' ) );
$settings['misc']['default_connection'] = $smtp;
$settings['misc']['fallback_connection'] = $sendgrid;
update_option( 'fluentmail-settings', $settings, false );
`, wpsite.PHPString(fluentSMTPSender), wpsite.PHPString(fmt.Sprint(sink.Port())), wpsite.PHPString(smtpPassword),
		wpsite.PHPString(fluentSendGridSender), wpsite.PHPString(sendgridKey), wpsite.PHPString(fluentGmailSender),
		wpsite.PHPString(fluentElasticSender), wpsite.PHPString(fluentOldKeySender), wpsite.PHPString(fluentMailgunSender)))
	s.CreateTable(t, fluentLogTable)
	// Logger::add() as BaseHandler::writeLog() calls it; created_at is
	// current_time('mysql') at the moment of sending, i.e. wp_date().
	n := s.insertRows(t, "fsmpt_email_logs", fmt.Sprintf(`array_map( function ( $i ) {
	$ts   = %d + $i * DAY_IN_SECONDS;
	$html = 0 === $i %% 2;
	$fail = 0 === $i %% 10;
	return array(
		'to'           => %d === $i ? 'a:3:{i:0;a:2:{s:5:"email";s:22:"cut-off@example.com' : maybe_serialize( array( array( 'email' => "customer$i@example.com", 'name' => "Customer $i" ) ) ),
		'from'         => 'Shop <shop@example.com>',
		'subject'      => "Order #$i",
		'body'         => $html ? "<p>Thanks for order $i</p>" : "Thanks for order $i",
		'headers'      => maybe_serialize( $html && %d !== $i ? array( 'content-type' => 'text/html', 'cc' => array( array( 'email' => 'boss@example.com', 'name' => 'Boss' ) ) ) : array() ),
		'attachments'  => maybe_serialize( array() ),
		'status'       => $fail ? 'failed' : 'sent',
		'response'     => maybe_serialize( $fail ? array( 'code' => 535, 'message' => "SMTP Error: Could not authenticate ($i)." ) : array( 'code' => 200, 'message' => 'OK' ) ),
		'extra'        => maybe_serialize( array( 'provider' => 'smtp' ) ),
		'retries'      => 0,
		'resent_count' => 0,
		'created_at'   => wp_date( 'Y-m-d H:i:s', $ts ),
		'updated_at'   => wp_date( 'Y-m-d H:i:s', $ts ),
	);
}, range( 1, %d ) )`, fluentLogBase, fluentRows, fluentRows, fluentRows))
	if n != fluentRows {
		t.Fatalf("inserted %d log rows, want %d", n, fluentRows)
	}
}

// TestFluentSMTP imports FluentSMTP from data its own code paths wrote:
// scan, dry run, import with decrypted secrets that really authenticate,
// re-import, and the log in chunks with times converted to UTC.
func TestFluentSMTP(t *testing.T) {
	const smtpPassword = "s3cret-Pa$$ 'word\\"
	const sendgridKey = "SG.fluent-live-key-0123456789"
	s := newSiteConfig(t, `define( 'FLUENTMAIL_MAILGUN_API_KEY', 'key-from-wp-config' );
define( 'FLUENTMAIL_MAILGUN_DOMAIN', 'mg.example.com' );`)
	sink := smtpsink.Start(t, smtpsink.WithAuth("shop-user", smtpPassword))
	writeFluentSMTP(t, s, sink, smtpPassword, sendgridKey)

	type want struct {
		status, from, to  string
		id, def, fallback bool
	}
	wants := map[string]want{
		fluentKey(fluentSMTPSender):     {status: "ready", from: "smtp", to: "smtp", id: true, def: true},
		fluentKey(fluentSendGridSender): {status: "ready", from: "sendgrid", to: "sendgrid", id: true, fallback: true},
		fluentKey(fluentGmailSender):    {status: "needs_authorization", from: "gmail", to: "gmail", id: true},
		fluentKey(fluentElasticSender):  {status: "ready", from: "elasticmail", to: "elasticemail", id: true},
		fluentKey(fluentOldKeySender):   {status: "needs_password", from: "smtp", to: "smtp"},
		fluentKey(fluentMailgunSender):  {status: "needs_password", from: "mailgun", to: "mailgun"},
	}
	secrets := []string{smtpPassword, sendgridKey, "gmail-client-secret", "elastic-key", "key-from-wp-config"}
	noSecrets := func(t *testing.T, what string, b []byte) {
		t.Helper()
		for _, sec := range secrets {
			if strings.Contains(string(b), sec) || strings.Contains(string(b), strings.ReplaceAll(sec, "'", `\u0027`)) {
				t.Errorf("%s shows the secret %q unmasked: %s", what, sec, b)
			}
		}
	}
	checkReport := func(t *testing.T, res *importResult, written bool) {
		t.Helper()
		if len(res.Connections) != len(wants) {
			t.Fatalf("%d connections, want %d: %+v", len(res.Connections), len(wants), res.Connections)
		}
		for key, w := range wants {
			c := res.connection(t, key)
			if c.Status != w.status || c.Conversion.From != w.from || c.Conversion.To != w.to {
				t.Errorf("%s: status %q conversion %q→%q, want %q %q→%q (issues %v, missing %v)",
					c.Name, c.Status, c.Conversion.From, c.Conversion.To, w.status, w.from, w.to, c.Issues, c.Missing)
			}
			if c.WasDefault != w.def || c.WasFallback != w.fallback {
				t.Errorf("%s: was_default %v was_fallback %v, want %v %v", c.Name, c.WasDefault, c.WasFallback, w.def, w.fallback)
			}
			if got := c.ConnectionID != nil; got != (written && w.id) {
				t.Errorf("%s: connection_id %v, want one: %v", c.Name, c.ConnectionID, written && w.id)
			}
		}
		old := res.connection(t, fluentKey(fluentOldKeySender))
		if strings.Join(old.Missing, ",") != "password" {
			t.Errorf("undecryptable password: missing %v, want [password]", old.Missing)
		}
		if _, ok := old.Settings["password"]; ok {
			t.Errorf("undecryptable password imported as a value: %v", old.Settings)
		}
		mg := res.connection(t, fluentKey(fluentMailgunSender))
		issues := strings.Join(mg.Issues, "\n")
		for _, name := range []string{"FLUENTMAIL_MAILGUN_API_KEY", "MAILSVC_MAILGUN_API_KEY", "FLUENTMAIL_MAILGUN_DOMAIN", "MAILSVC_MAILGUN_DOMAIN"} {
			if !strings.Contains(issues, name) {
				t.Errorf("mailgun issues do not name %s: %v", name, mg.Issues)
			}
		}
		smtp := res.connection(t, fluentKey(fluentSMTPSender))
		if smtp.Settings["host"] != "127.0.0.1" || smtp.Settings["username"] == nil || smtp.Settings["from_email"] != fluentSMTPSender {
			t.Errorf("smtp settings %v", smtp.Settings)
		}
		if pw, _ := smtp.Settings["password"].(string); pw == "" || pw == smtpPassword {
			t.Errorf("smtp password %q: want it present and masked", pw)
		}
		if smtp.Settings["force_from"] != true {
			t.Errorf("force_from_email yes: force_from %v, want true", smtp.Settings["force_from"])
		}
	}

	t.Run("scan", func(t *testing.T) {
		found := s.scan(t, true)
		e, ok := found["fluent-smtp"]
		if !ok || len(found) != 1 {
			t.Fatalf("scan found %v, want fluent-smtp alone", found)
		}
		if !e.Active || e.Name != "FluentSMTP" || !e.LogsAvailable || e.LogRowsEstimated {
			t.Errorf("scan entry %+v", e)
		}
		if e.Connections == nil || *e.Connections != len(wants) || e.LogRows == nil || *e.LogRows != fluentRows {
			t.Errorf("scan counts: connections %v log_rows %v, want %d and %d", e.Connections, e.LogRows, len(wants), fluentRows)
		}
		quick := s.scan(t, false)["fluent-smtp"]
		if quick.Source != "fluent-smtp" || quick.Connections != nil || quick.LogRows != nil || !quick.LogsAvailable {
			t.Errorf("scan counts=false: %+v, want found without counts", quick)
		}
	})

	t.Run("cli dry run", func(t *testing.T) {
		r := s.cli(t, "import", "fluent-smtp", "--dry-run")
		if r.Code != 0 {
			t.Fatalf("mailsvc import --dry-run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		for _, line := range []string{"Would import from fluent-smtp:", "ready", "smtp → smtp", "sendgrid → sendgrid", "needs_authorization",
			"elasticmail → elasticemail", "needs_password", "missing: password", "(default)", "(fallback)", fmt.Sprintf("Logs: %d rows", fluentRows)} {
			if !strings.Contains(r.Stdout, line) {
				t.Errorf("dry run output lacks %q:\n%s", line, r.Stdout)
			}
		}
		noSecrets(t, "mailsvc import --dry-run", []byte(r.Stdout+r.Stderr))
	})

	t.Run("dry run writes nothing", func(t *testing.T) {
		noSecrets(t, "dry run answer", s.importAnswer(t, "dry run", `{"source":"fluent-smtp","dry_run":true,"import_logs":true,"retention_days":100}`))
		res := s.mustImport(t, `{"source":"fluent-smtp","dry_run":true,"import_logs":true,"retention_days":100}`)
		if !res.DryRun || res.Source != "fluent-smtp" {
			t.Errorf("dry run answer: %+v", res)
		}
		checkReport(t, res, false)
		if !res.Logs.Available || res.Logs.Total != fluentRows || !res.Logs.Done || res.Logs.Imported != 0 {
			t.Errorf("dry run logs %+v", res.Logs)
		}
		cutoff := time.Now().Add(-100 * 24 * time.Hour).Unix()
		var inRetention int64
		for i := int64(1); i <= fluentRows; i++ {
			if fluentLogBase+i*86400 >= cutoff {
				inRetention++
			}
		}
		if res.Logs.InRetention == nil || *res.Logs.InRetention != inRetention {
			t.Errorf("in_retention %v, want %d", res.Logs.InRetention, inRetention)
		}
		if c := s.connections(t); len(c) != 0 {
			t.Errorf("dry run created connections: %+v", c)
		}
		if l := s.logs(t); len(l) != 0 {
			t.Errorf("dry run wrote %d logs", len(l))
		}
		if st := s.settings(t); st["default_connection_id"] != nil || st["fallback_connection_id"] != nil {
			t.Errorf("dry run set the default: %v", st)
		}
	})

	ids := map[string]int64{}
	t.Run("import", func(t *testing.T) {
		noSecrets(t, "import answer", s.importAnswer(t, "import", `{"source":"fluent-smtp"}`))
		res := s.mustImport(t, `{"source":"fluent-smtp","import_connections":true}`) // the same again: updates
		checkReport(t, res, true)
		for key, w := range wants {
			if c := res.connection(t, key); w.id {
				ids[key] = *c.ConnectionID
			}
		}
		conns := s.connections(t)
		if len(conns) != 4 {
			t.Fatalf("%d connections after import, want 4 (smtp, sendgrid, gmail, elasticemail): %+v", len(conns), conns)
		}
		byID := map[int64]connectionRecord{}
		for _, c := range conns {
			byID[c.ID] = c
		}
		for key, id := range ids {
			if byID[id].Driver != wants[key].to {
				t.Errorf("connection %d: driver %q, want %q", id, byID[id].Driver, wants[key].to)
			}
		}
		st := s.settings(t)
		if fmt.Sprint(st["default_connection_id"]) != fmt.Sprint(ids[fluentKey(fluentSMTPSender)]) ||
			fmt.Sprint(st["fallback_connection_id"]) != fmt.Sprint(ids[fluentKey(fluentSendGridSender)]) {
			t.Errorf("settings default %v fallback %v, want %d and %d", st["default_connection_id"], st["fallback_connection_id"],
				ids[fluentKey(fluentSMTPSender)], ids[fluentKey(fluentSendGridSender)])
		}
		_, lb := s.call(t, "GET", "/connections", "")
		noSecrets(t, "GET /connections", lb)
	})

	t.Run("re-import creates no duplicates", func(t *testing.T) {
		res := s.mustImport(t, `{"source":"fluent-smtp"}`)
		for key, id := range ids {
			c := res.connection(t, key)
			if c.ConnectionID == nil || *c.ConnectionID != id || !c.Updated {
				t.Errorf("%s: connection_id %v updated %v, want %d updated", c.Name, c.ConnectionID, c.Updated, id)
			}
		}
		if n := len(s.connections(t)); n != 4 {
			t.Errorf("%d connections after re-import, want 4", n)
		}
	})

	t.Run("decrypted password authenticates", func(t *testing.T) {
		id := ids[fluentKey(fluentSMTPSender)]
		if id == 0 {
			t.Skip("no imported smtp connection")
		}
		var res struct {
			Success bool   `json:"success"`
			Message string `json:"message"`
		}
		s.callJSON(t, "POST", "/test-email", fmt.Sprintf(`{"to":"check@example.com","connection_id":%d}`, id), http.StatusOK, &res)
		if !res.Success {
			t.Fatalf("test email through the imported connection failed: %s", res.Message)
		}
		msgs, err := sink.WaitFor(1, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if msgs[0].Username != "shop-user" || len(msgs[0].To) != 1 || msgs[0].To[0] != "check@example.com" {
			t.Errorf("sink got %+v, want check@example.com authenticated as shop-user", msgs[0])
		}
		if sink.AuthFailures() != 0 {
			t.Errorf("%d failed authentications at the sink", sink.AuthFailures())
		}
	})

	t.Run("logs in chunks", func(t *testing.T) {
		runs := s.importAllLogs(t, "fluent-smtp", "")
		if len(runs) != 3 {
			t.Fatalf("%d calls for %d rows, want 3", len(runs), fluentRows)
		}
		for i, wantImported := range []int{200, 200, 49} {
			l := runs[i].Logs
			if l.Imported != wantImported || l.Total != fluentRows || l.Done != (i == 2) {
				t.Errorf("call %d: %+v, want %d imported of %d", i+1, l, wantImported, fluentRows)
			}
		}
		last := runs[2].Logs
		if last.Skipped != 1 || last.ImportedTotal != fluentRows-1 {
			t.Errorf("last call: skipped %d imported_total %d, want 1 and %d", last.Skipped, last.ImportedTotal, fluentRows-1)
		}
		again := s.importAllLogs(t, "fluent-smtp", "")
		if len(again) != 1 || again[0].Logs.Imported != 0 || !again[0].Logs.Done {
			t.Errorf("second run: %+v, want one call importing nothing", again[0].Logs)
		}
		restart := s.importAllLogs(t, "fluent-smtp", `"restart_logs":true`)
		imported := 0
		for _, r := range restart {
			imported += r.Logs.Imported
		}
		if imported != 0 || len(restart) != 3 {
			t.Errorf("restart_logs: %d calls imported %d, want 3 calls importing nothing", len(restart), imported)
		}
	})

	t.Run("imported logs", func(t *testing.T) {
		logs := map[string]core.Log{}
		for _, l := range s.logs(t) {
			if l.Source == "import:fluent-smtp" {
				logs[l.Message.Subject] = l
			}
		}
		if len(logs) != fluentRows-1 {
			t.Fatalf("%d imported logs, want %d", len(logs), fluentRows-1)
		}
		for i := int64(1); i < fluentRows; i++ {
			l, ok := logs[fmt.Sprintf("Order #%d", i)]
			if !ok {
				t.Errorf("row %d not imported", i)
				continue
			}
			want := time.Unix(fluentLogBase+i*86400, 0).UTC()
			if !l.CreatedAt.Equal(want) {
				t.Errorf("row %d: created_at %s, want %s (Berlin local time converted to UTC)", i, l.CreatedAt, want)
			}
			wantStatus := core.StatusDelivered
			if i%10 == 0 {
				wantStatus = core.StatusFailed
				if !strings.Contains(l.LastError, fmt.Sprintf("Could not authenticate (%d)", i)) {
					t.Errorf("row %d: last_error %q", i, l.LastError)
				}
			}
			if l.Status != wantStatus {
				t.Errorf("row %d: status %q, want %q", i, l.Status, wantStatus)
			}
			if len(l.Message.To) != 1 || l.Message.To[0].Email != fmt.Sprintf("customer%d@example.com", i) || l.Message.To[0].Name != fmt.Sprintf("Customer %d", i) {
				t.Errorf("row %d: to %v", i, l.Message.To)
			}
		}
		html := s.log(t, logs["Order #2"].ID)
		if html.Message.HTML != "<p>Thanks for order 2</p>" || len(html.Message.Cc) != 1 || html.Message.Cc[0].Email != "boss@example.com" ||
			html.Message.From.Email != "shop@example.com" || html.Message.From.Name != "Shop" {
			t.Errorf("html row: %+v", html.Message)
		}
		text := s.log(t, logs["Order #3"].ID)
		if text.Message.Text != "Thanks for order 3" || text.Message.HTML != "" {
			t.Errorf("text row: text %q html %q", text.Message.Text, text.Message.HTML)
		}
	})
}
