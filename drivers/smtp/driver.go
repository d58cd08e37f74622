// Package smtp is the mail transport for any SMTP submission server. It
// registers itself as the driver "smtp" when imported, connects and
// authenticates with github.com/wneessen/go-mail, renders messages without
// attachments itself (the bytes drivers/mime and go-mail would write, see
// letter.go) and builds the others with drivers/mime, and keeps a small
// pool of authenticated connections per transport so that a burst of
// messages does not pay for a TCP, TLS and AUTH handshake each.
package smtp

import (
	"net"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Slug is the driver name of SMTP connections.
const Slug = "smtp"

// Settings keys of an SMTP connection.
const (
	KeyHost               = "host"
	KeyPort               = "port"
	KeyEncryption         = "encryption"
	KeyAuth               = "auth"
	KeyUsername           = "username"
	KeyPassword           = "password"
	KeyFromEmail          = "from_email"
	KeyFromName           = "from_name"
	KeyForceFrom          = "force_from"
	KeyTimeout            = "timeout"
	KeyInsecureSkipVerify = "insecure_skip_verify"
	KeyHelo               = "helo"
)

// Values of the encryption setting.
const (
	EncryptionNone = "none" // plain SMTP, no TLS at all
	EncryptionSSL  = "ssl"  // implicit TLS from the first byte (port 465)
	EncryptionTLS  = "tls"  // STARTTLS, required (port 587)
)

// Defaults of the optional settings.
const (
	DefaultPort       = 587
	DefaultEncryption = EncryptionTLS
	DefaultTimeout    = 30 // seconds
)

// DefaultMaxConcurrency is the default max_concurrency of an SMTP
// connection: a ceiling, below which the delivery engine finds how many
// sessions the server takes at once.
const DefaultMaxConcurrency = 100

func init() {
	core.Register(Driver())
}

// Driver returns the SMTP driver description: schema, presets, rules and
// constructor.
func Driver() core.Driver {
	return core.Driver{
		Slug: Slug,
		// The ceiling of the sessions used at once per connection; the
		// engine finds the level below it (adaptive_concurrency).
		DefaultConcurrency: DefaultMaxConcurrency,
		Name:               "Other SMTP",
		Description:        "Send through any SMTP server with STARTTLS, implicit TLS or plain SMTP, with or without authentication.",
		SetupHelp:          "Your mail host or provider lists its SMTP server, port and encryption in its help pages or account settings; the username is usually your full email address and the password your mailbox password or an app password.",
		Fields: []core.Field{
			{Key: KeyHost, Label: "SMTP host", Type: core.FieldString, Required: true, Destination: true,
				Help: "Host name or IP address of the SMTP server, without scheme or port."},
			{Key: KeyPort, Label: "SMTP port", Type: core.FieldInteger, Default: int64(DefaultPort), Destination: true,
				Min: core.Int64(1), Max: core.Int64(65535),
				Help: "Usually 587 with TLS (STARTTLS), 465 with SSL, 25 without encryption."},
			{Key: KeyEncryption, Label: "Encryption", Type: core.FieldSelect, Default: DefaultEncryption, Destination: true,
				Options: []string{EncryptionNone, EncryptionSSL, EncryptionTLS},
				Help:    "TLS: STARTTLS, usually port 587; SSL: encrypted from the first byte, usually port 465; None: no encryption, only for a server on this machine or network."},
			{Key: KeyAuth, Label: "Authentication", Type: core.FieldBoolean, Default: true, Advanced: true,
				Help: "Log in with a username and password."},
			{Key: KeyUsername, Label: "Username", Type: core.FieldString,
				RequiredWhen: map[string]string{KeyAuth: "true"}},
			{Key: KeyPassword, Label: "Password", Type: core.FieldPassword,
				RequiredWhen: map[string]string{KeyAuth: "true"}},
			{Key: KeyFromEmail, Label: "From email", Type: core.FieldEmail,
				Help: "Sender address used when a message has none, or always when Force from is on."},
			{Key: KeyFromName, Label: "From name", Type: core.FieldString,
				Help: "Sender name that goes with From email."},
			{Key: KeyForceFrom, Label: "Force from", Type: core.FieldBoolean, Default: false, Advanced: true,
				Help: "Replace the sender of every message with From email and From name."},
			{Key: KeyTimeout, Label: "Timeout (seconds)", Type: core.FieldInteger, Default: int64(DefaultTimeout), Advanced: true,
				Min: core.Int64(1), Max: core.Int64(300),
				Help: "How long to wait for the server at each step."},
			{Key: KeyInsecureSkipVerify, Label: "Skip certificate verification", Type: core.FieldBoolean, Default: false, Advanced: true,
				Help: "Accept any TLS certificate, for servers with a self-signed one. Unsafe on the internet."},
			{Key: KeyHelo, Label: "HELO name", Type: core.FieldString, Advanced: true,
				Help: "Name to give in EHLO. Empty: this machine's host name."},
		},
		Presets: presets(),
		Rules: []string{
			"username and password are required when auth is true.",
			"from_email is required when force_from is true.",
			"host is a bare host name or IP address: no scheme, path, port or spaces.",
			"helo, when set, is a host name without spaces.",
			"Credentials are only sent over an encrypted connection (ssl or tls), or to a server on localhost.",
		},
		Validate: validate,
		New:      New,
	}
}

// presets are well-known submission servers.
func presets() []core.Preset {
	p := func(slug, name, host string, port int64, enc string, extra ...string) core.Preset {
		s := core.Settings{KeyHost: host, KeyPort: port, KeyEncryption: enc, KeyAuth: true}
		for i := 0; i+1 < len(extra); i += 2 {
			s[extra[i]] = extra[i+1]
		}
		return core.Preset{Slug: slug, Name: name, Settings: s}
	}
	return []core.Preset{
		p("gmail", "Gmail / Google Workspace", "smtp.gmail.com", 587, EncryptionTLS),
		p("outlook", "Outlook / Office 365", "smtp.office365.com", 587, EncryptionTLS),
		p("zoho", "Zoho Mail", "smtp.zoho.com", 465, EncryptionSSL),
		p("ses-us-east-1", "Amazon SES SMTP (us-east-1)", "email-smtp.us-east-1.amazonaws.com", 587, EncryptionTLS),
		p("mailgun", "Mailgun SMTP", "smtp.mailgun.org", 587, EncryptionTLS),
		p("sendgrid", "SendGrid SMTP", "smtp.sendgrid.net", 587, EncryptionTLS, KeyUsername, "apikey"),
		p("postmark", "Postmark SMTP", "smtp.postmarkapp.com", 587, EncryptionTLS),
		p("brevo", "Brevo SMTP", "smtp-relay.brevo.com", 587, EncryptionTLS),
		p("mailjet", "Mailjet SMTP", "in-v3.mailjet.com", 587, EncryptionTLS),
		p("sparkpost", "SparkPost SMTP (US)", "smtp.sparkpostmail.com", 587, EncryptionTLS, KeyUsername, "SMTP_Injection"),
		p("sparkpost-eu", "SparkPost SMTP (EU)", "smtp.eu.sparkpostmail.com", 587, EncryptionTLS, KeyUsername, "SMTP_Injection"),
		p("resend", "Resend SMTP", "smtp.resend.com", 465, EncryptionSSL, KeyUsername, "resend"),
		p("smtp2go", "SMTP2GO SMTP", "mail.smtp2go.com", 587, EncryptionTLS),
		p("mailersend", "MailerSend SMTP", "smtp.mailersend.net", 587, EncryptionTLS),
		p("elasticemail", "Elastic Email SMTP", "smtp.elasticemail.com", 587, EncryptionTLS),
		p("mandrill", "Mailchimp Transactional (Mandrill) SMTP", "smtp.mandrillapp.com", 587, EncryptionTLS),
		p("mailtrap", "Mailtrap SMTP (transactional stream)", "live.smtp.mailtrap.io", 587, EncryptionTLS, KeyUsername, "api"),
		p("sendlayer", "SendLayer SMTP", "smtp.sendlayer.net", 587, EncryptionTLS),
		p("smtpcom", "SMTP.com", "send.smtp.com", 587, EncryptionTLS),
		p("emailit", "Emailit SMTP", "smtp.emailit.com", 587, EncryptionTLS),
		p("cloudflare", "Cloudflare Email Service SMTP", "smtp.mx.cloudflare.net", 465, EncryptionSSL, KeyUsername, "api_token"),
	}
}

// validate checks the rules that span fields, on settings that passed the
// schema.
func validate(s core.Settings) map[string]string {
	fields := map[string]string{}
	if s.Bool(KeyAuth, true) {
		if strings.TrimSpace(s.String(KeyUsername)) == "" {
			fields[KeyUsername] = "Required when authentication is on."
		}
		if s.String(KeyPassword) == "" {
			fields[KeyPassword] = "Required when authentication is on."
		}
	}
	if s.Bool(KeyForceFrom, false) && s.String(KeyFromEmail) == "" {
		fields[KeyFromEmail] = "Required when Force from is on."
	}
	if !validHost(s.String(KeyHost)) {
		fields[KeyHost] = "Must be a host name or IP address, without scheme, port or path."
	}
	if h := s.String(KeyHelo); h != "" && !validHost(h) {
		fields[KeyHelo] = "Must be a host name without spaces."
	}
	return fields
}

// validHost reports whether h is a bare host name or IP address.
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if net.ParseIP(h) != nil {
		return true
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		ok := c == '.' || c == '-' || c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !ok {
			return false
		}
	}
	return h[0] != '.' && h[0] != '-'
}
