package migration

import (
	"testing"
)

// gmailSMTPOptionPHP is gmail_smtp_options as Gmail SMTP saves it after
// the OAuth grant: GmailXOAuth2::resetCredentials stores the Google
// client's token array json_encode()d. tokenPHP is the token array.
func gmailSMTPOptionPHP(tokenPHP string) string {
	return `array(
	'oauth_client_id' => '1234-gmail.apps.googleusercontent.com', 'oauth_client_secret' => 'GOCSPX-gmail-smtp-secret',
	'oauth_user_email' => 'owner@gmail.com', 'oauth_access_token' => ` + tokenPHP + `,
	'from_email' => 'owner@gmail.com', 'from_name' => 'Owner', 'type_of_encryption' => 'tls', 'smtp_port' => '587',
	'disable_ssl_verification' => '',
)`
}

// TestGmailSMTP imports Gmail SMTP: ready with the refresh token of the
// owner's own Google client, needs_authorization without one.
func TestGmailSMTP(t *testing.T) {
	const refresh = "1//gmail-smtp-refresh-token"
	s := newSite(t)
	s.activatePlugins(t, "gmail-smtp/main.php")
	s.setOption(t, "gmail_smtp_options", gmailSMTPOptionPHP(`json_encode( array(
	'access_token' => 'ya29.expired', 'expires_in' => 3599, 'refresh_token' => '`+refresh+`',
	'scope' => 'https://mail.google.com/', 'token_type' => 'Bearer', 'created' => time() - 7200,
) )`))

	e, ok := s.scan(t, true)["gmail-smtp"]
	if !ok || !e.Active || e.Connections == nil || *e.Connections != 1 || e.LogsAvailable {
		t.Fatalf("scan entry %+v (found %v)", e, ok)
	}
	want := map[string]wantConn{"primary": {status: "ready", from: "gmail", to: "gmail", def: true}}
	noSecret(t, "dry run", s.importAnswer(t, "dry run", `{"source":"gmail-smtp","dry_run":true}`), refresh, "GOCSPX-gmail-smtp-secret")
	checkConns(t, s.mustImport(t, `{"source":"gmail-smtp","dry_run":true}`), want, false)

	res := s.mustImport(t, `{"source":"gmail-smtp"}`)
	ids := checkConns(t, res, want, true)
	c := res.connection(t, "primary")
	if c.Settings["delivery_mode"] != "smtp" || c.Settings["from_email"] != "owner@gmail.com" || c.Settings["refresh_token"] == nil || c.Settings["refresh_token"] == refresh {
		t.Errorf("settings %v: want SMTP mode as owner@gmail.com with a masked refresh token", c.Settings)
	}
	if _, has := c.Settings["access_token"]; has {
		t.Errorf("an expired access token was imported: %v", c.Settings)
	}
	checkDefault(t, s, ids["primary"], 0)
	conns := s.connections(t)
	if len(conns) != 1 || conns[0].Driver != "gmail" {
		t.Fatalf("connections %+v", conns)
	}

	// The owner revokes access: the plugin empties the token.
	s.setOption(t, "gmail_smtp_options", gmailSMTPOptionPHP(`''`))
	res = s.mustImport(t, `{"source":"gmail-smtp"}`)
	want["primary"] = wantConn{status: "needs_authorization", from: "gmail", to: "gmail", def: true}
	again := checkConns(t, res, want, true)
	if again["primary"] != ids["primary"] || len(s.connections(t)) != 1 {
		t.Errorf("re-import: id %d (was %d), %d connections; want the same one", again["primary"], ids["primary"], len(s.connections(t)))
	}
}
