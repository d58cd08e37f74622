package smtp

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	gosmtp "github.com/wneessen/go-mail/smtp"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
)

// encryptionOpportunistic is the internal encryption of an XOAUTH2
// transport to a loopback server: STARTTLS when offered, plain otherwise.
const encryptionOpportunistic = "opportunistic"

// XOAUTH2 is SMTP AUTH XOAUTH2 for the OAuth drivers: the mailbox and where
// its access token comes from.
type XOAUTH2 struct {
	// Username is the mailbox the token was granted for (the XOAUTH2 user).
	Username string
	// Tokens gives the access token and refreshes it when the server
	// refuses it.
	Tokens core.TokenSource
	// ConnectionID is the connection whose token Tokens gives; zero means
	// the ID of the connection passed to NewXOAUTH2.
	ConnectionID int64
}

// NewXOAUTH2 builds an SMTP transport to host:port (STARTTLS required
// unless the host is loopback, where it is used when offered) that
// authenticates each new session with XOAUTH2 using auth.Tokens'
// AccessToken; when the server refuses the token (535), it calls
// Tokens.Refreshed and retries the session once (oauthdriver.WithToken).
// A second refusal is a Permanent error. The connection's from_email,
// from_name and force_from settings, when present, override the sender as
// in the smtp driver; timeout, helo and insecure_skip_verify apply too.
// Sessions are pooled as by NewTransport; the token is masked in
// transcripts like a password.
func NewXOAUTH2(conn *core.Connection, env core.DriverEnv, host string, port int, auth XOAUTH2, opts Options) (core.Transport, error) {
	return newXOAUTH2Transport(conn, env, host, port, auth, opts)
}

func newXOAUTH2Transport(conn *core.Connection, env core.DriverEnv, host string, port int, auth XOAUTH2, opts Options) (*Transport, error) {
	host = strings.TrimSpace(host)
	fields := map[string]string{}
	if !validHost(host) {
		fields[oauthdriver.KeySMTPHost] = "Must be a host name or IP address, without scheme, port or path."
	}
	if port < 1 || port > 65535 {
		fields[oauthdriver.KeySMTPPort] = "Must be between 1 and 65535."
	}
	if strings.TrimSpace(auth.Username) == "" {
		fields[KeyFromEmail] = "The mailbox to authenticate as is required for SMTP with XOAUTH2."
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	if auth.ConnectionID == 0 {
		auth.ConnectionID = conn.ID
	}
	cfg := config{host: host, port: port, encryption: EncryptionTLS, username: auth.Username}
	if isLocalhost(host) {
		cfg.encryption = encryptionOpportunistic
	}
	cfg.readSession(conn.Settings)
	t := newTransport(cfg, conn.ID, env, opts)
	t.oauth = &auth
	return t, nil
}

// dialXOAUTH2 opens a session authenticated with the connection's access
// token, refreshing the token once when the server refuses it.
func (t *Transport) dialXOAUTH2(ctx context.Context) (*session, error) {
	var s *session
	err := oauthdriver.WithToken(ctx, t.oauth.Tokens, t.oauth.ConnectionID, func(token string) error {
		var err error
		s, err = t.dialAuth(ctx, gosmtp.XOAuth2Auth(t.oauth.Username, token), xoauth2Secrets(t.oauth.Username, token)...)
		if err != nil && replyCode(err) == 535 {
			return oauthdriver.Unauthorized(fmt.Errorf("smtp: XOAUTH2 at %s: %w", t.addr(), err))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// xoauth2Secrets are the forms in which an access token can appear in an
// SMTP conversation: as is, base64-encoded, and inside the base64 XOAUTH2
// initial response.
func xoauth2Secrets(user, token string) []string {
	if token == "" {
		return nil
	}
	b64 := base64.StdEncoding.EncodeToString
	return []string{token, b64([]byte(token)), b64([]byte("user=" + user + "\x01auth=Bearer " + token + "\x01\x01"))}
}
