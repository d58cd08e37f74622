// Package gmail is the mail transport for Gmail and Google Workspace
// mailboxes authorized with OAuth 2.0. It registers itself as the driver
// "gmail" (OAuth provider google) when imported.
//
// In API mode (the default) every message is built as RFC 5322 by
// drivers/mime and sent with the Gmail API's users.messages.send: the
// base64url "raw" JSON form, or the media upload endpoint (message/rfc822)
// when the message is larger than UploadThreshold. Gmail delivers to the
// To, Cc and Bcc headers of the raw message and removes the Bcc header, so
// the transport adds a Bcc header that drivers/mime leaves out. Gmail
// rewrites the sender to the authorized mailbox unless from_email is one of
// its "Send mail as" aliases.
//
// In SMTP mode the message goes to smtp.gmail.com with AUTH XOAUTH2 (scope
// https://mail.google.com/); from_email is the mailbox's address.
//
// Every call runs with the connection's access token through
// oauthdriver.WithToken: a 401 refreshes the token once and retries.
package gmail

import (
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
)

// Slug is the driver name of Gmail connections.
const Slug = "gmail"

// DefaultBaseURL is the real Gmail API, used when base_url is empty.
const DefaultBaseURL = "https://gmail.googleapis.com"

// DefaultOAuthBaseURL is Google's authorization server.
const DefaultOAuthBaseURL = "https://accounts.google.com"

// Google's SMTP submission endpoint, the defaults of SMTP mode.
const (
	DefaultSMTPHost = "smtp.gmail.com"
	DefaultSMTPPort = 587
)

// Settings keys of a Gmail connection.
const (
	KeyFromEmail    = apidriver.KeyFromEmail
	KeyFromName     = apidriver.KeyFromName
	KeyBaseURL      = apidriver.KeyBaseURL
	KeyDeliveryMode = oauthdriver.KeyDeliveryMode
	KeySMTPHost     = oauthdriver.KeySMTPHost
	KeySMTPPort     = oauthdriver.KeySMTPPort
)

func init() {
	core.Register(Driver())
}

// Driver returns the Gmail driver description: schema, rules and
// constructor.
func Driver() core.Driver {
	var fields []core.Field
	fields = append(fields, oauthdriver.AppFields(
		"OAuth client ID of a Google Cloud project with the Gmail API enabled (APIs & Services → Credentials → OAuth client ID, type Web application).",
		"The OAuth client's secret.")...)
	fields = append(fields,
		oauthdriver.ModeField("api: the Gmail API (scope gmail.send). smtp: smtp.gmail.com with XOAUTH2 (scope https://mail.google.com/)."),
		core.Field{Key: KeyFromEmail, Label: "From email", Type: core.FieldEmail,
			RequiredWhen: map[string]string{KeyDeliveryMode: oauthdriver.ModeSMTP},
			Help:         "The authorized mailbox or one of its Send mail as aliases (Gmail rewrites any other sender). Required in SMTP mode, where it is the login. Empty in API mode: the message's own sender."},
		apidriver.FromNameField(),
	)
	fields = append(fields, oauthdriver.TokenFields()...)
	fields = append(fields, oauthdriver.AppChoiceField())
	fields = append(fields,
		apidriver.BaseURLField("Leave empty for "+DefaultBaseURL+".", "gmail.googleapis.com", "www.googleapis.com"),
		oauthdriver.OAuthBaseURLField(DefaultOAuthBaseURL, "accounts.google.com", "oauth2.googleapis.com"),
	)
	fields = append(fields, oauthdriver.SMTPFields(DefaultSMTPHost, DefaultSMTPPort)...)
	return core.Driver{
		Slug: Slug,
		// Gmail API quotas are per user: a few concurrent sends.
		DefaultConcurrency: 10,
		// 500 recipients per message: Gmail's limit for consumer
		// accounts (Workspace also caps external recipients at 500).
		RecipientCaps: core.RecipientCaps{PerMessage: 500},
		Name:          "Gmail / Google Workspace",
		Description:   "Send as a Gmail or Google Workspace mailbox authorized with OAuth: through the Gmail API, or SMTP with XOAUTH2.",
		SetupHelp:     "In the Google Cloud console, enable the Gmail API (APIs & Services → Library), then APIs & Services → Credentials → Create credentials → OAuth client ID (Web application) gives the client ID and secret; save, then authorize the mailbox from the Connections screen.",
		Fields:        fields,
		Rules:         rules,
		New:           New,
		OAuthProvider: core.ProviderGoogle,
	}
}

var rules = []string{
	"from_email is required when delivery_mode is smtp (it is the SMTP login).",
	apidriver.SenderRule,
	"base_url, when empty, is " + DefaultBaseURL + ".",
	"API mode sends messages larger than 5 MB through the media upload endpoint.",
	"Verify reads the mailbox profile; a token limited to the gmail.send scope may not read it, and Google's insufficient-scope answer (403) still proves the token valid.",
}

// New builds the transport of a Gmail connection from its effective
// settings: the API transport, or the SMTP XOAUTH2 transport in SMTP mode.
func New(conn *core.Connection, env core.DriverEnv) (core.Transport, error) {
	if conn.Settings.String(KeyDeliveryMode) == oauthdriver.ModeSMTP {
		return newSMTP(conn, env)
	}
	return newAPI(conn, env), nil
}
