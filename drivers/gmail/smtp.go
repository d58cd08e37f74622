package gmail

import (
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/smtp"
)

// newSMTP builds the SMTP transport of a connection in SMTP mode: smtp_host
// and smtp_port (smtp.gmail.com:587 by default, STARTTLS) with AUTH
// XOAUTH2 as from_email, the connection's access token refreshed once when
// the server refuses it (535). from_email is the sender of every message,
// as Gmail accepts only the mailbox or its aliases; from_name, when set,
// replaces the sender name.
func newSMTP(conn *core.Connection, env core.DriverEnv) (core.Transport, error) {
	s := conn.Settings.Clone()
	s[smtp.KeyForceFrom] = true
	c := *conn
	c.Settings = s
	host := s.String(KeySMTPHost)
	if host == "" {
		host = DefaultSMTPHost
	}
	port := s.Int(KeySMTPPort, DefaultSMTPPort)
	auth := smtp.XOAUTH2{Username: s.String(KeyFromEmail), Tokens: env.Tokens, ConnectionID: conn.ID}
	return smtp.NewXOAUTH2(&c, env, host, int(port), auth, smtp.Options{})
}
