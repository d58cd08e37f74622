package migration

import "strings"

// Settings keys and values of our smtp driver (drivers/smtp), named here
// because app never imports a driver.
const (
	smtpDriver        = "smtp"
	smtpKeyHost       = "host"
	smtpKeyPort       = "port"
	smtpKeyEncryption = "encryption"
	smtpKeyAuth       = "auth"
	smtpKeyUsername   = "username"
	smtpKeyPassword   = "password"
	smtpKeyFromEmail  = "from_email"
	smtpKeyFromName   = "from_name"
	smtpKeyForceFrom  = "force_from"
	smtpKeyInsecure   = "insecure_skip_verify"
)

// SMTPServer is a plugin's SMTP connection in neutral terms, before it
// becomes our smtp driver's settings.
type SMTPServer struct {
	Host string
	Port int64
	// Encryption is the plugin's word: "", "none", "ssl", "tls",
	// "starttls" (any case).
	Encryption string
	Auth       bool
	Username   string
	// Password is the decrypted password; PasswordMissing is set instead
	// when it could not be recovered.
	Password        string
	PasswordMissing bool
	FromEmail       string
	FromName        string
	ForceFrom       bool
	// InsecureSkipVerify is the plugin's "disable SSL verification".
	InsecureSkipVerify bool
}

// SMTPEncryption maps a plugin's encryption word to ours: ssl (implicit
// TLS), tls (STARTTLS) or none.
func SMTPEncryption(word string) string {
	switch strings.ToLower(strings.TrimSpace(word)) {
	case "ssl", "smtps":
		return "ssl"
	case "tls", "starttls":
		return "tls"
	}
	return "none"
}

// Candidate returns the server as a candidate of our smtp driver. The
// port defaults to the encryption's usual one when the plugin has none.
func (s SMTPServer) Candidate(key, name, sourceSlug string) Candidate {
	enc := SMTPEncryption(s.Encryption)
	port := s.Port
	if port <= 0 || port > 65535 {
		switch enc {
		case "ssl":
			port = 465
		case "tls":
			port = 587
		default:
			port = 25
		}
	}
	settings := map[string]any{
		smtpKeyHost:       strings.TrimSpace(s.Host),
		smtpKeyPort:       port,
		smtpKeyEncryption: enc,
		smtpKeyAuth:       s.Auth,
	}
	c := Candidate{Key: key, Name: name, SourceSlug: sourceSlug, Driver: smtpDriver, Settings: settings}
	if s.Auth {
		settings[smtpKeyUsername] = s.Username
		if s.PasswordMissing {
			c.Missing = append(c.Missing, smtpKeyPassword)
		} else {
			settings[smtpKeyPassword] = s.Password
		}
	}
	if s.FromEmail != "" {
		settings[smtpKeyFromEmail] = strings.TrimSpace(s.FromEmail)
	}
	if s.FromName != "" {
		settings[smtpKeyFromName] = s.FromName
	}
	if s.ForceFrom && s.FromEmail != "" {
		settings[smtpKeyForceFrom] = true
	}
	if s.InsecureSkipVerify {
		settings[smtpKeyInsecure] = true
	}
	return c
}
