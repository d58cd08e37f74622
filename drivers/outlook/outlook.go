// Package outlook is the mail transport for Microsoft 365 and Outlook.com
// mailboxes. It registers itself as the driver "outlook" when imported.
// It sends through Microsoft Graph (POST /me/sendMail, or
// /users/{id}/sendMail; messages with attachments too large for one
// request go as a draft with upload sessions), or, in SMTP mode, through
// smtp.office365.com with AUTH XOAUTH2. Either way it authenticates with
// the connection's OAuth access token, which the host's token service
// (core.DriverEnv.Tokens) keeps fresh.
package outlook

import (
	"regexp"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
	"github.com/mailsvc/mailsvc/drivers/smtp"
)

// Slug is the driver name of Outlook connections.
const Slug = "outlook"

// Defaults of an Outlook connection.
const (
	DefaultBaseURL      = "https://graph.microsoft.com/v1.0"
	DefaultOAuthBaseURL = "https://login.microsoftonline.com"
	DefaultTenant       = "common"
	DefaultSMTPHost     = "smtp.office365.com"
	DefaultSMTPPort     = 587
)

// Settings keys of an Outlook connection (the OAuth ones are
// oauthdriver's).
const (
	KeyTenantID  = "tenant_id"
	KeyFromEmail = apidriver.KeyFromEmail
	KeyFromName  = apidriver.KeyFromName
	KeyUserID    = "user_id"
	KeyBaseURL   = apidriver.KeyBaseURL
)

func init() {
	core.Register(Driver())
}

// Driver returns the Outlook driver description: schema, rules and
// constructor.
func Driver() core.Driver {
	fields := oauthdriver.AppFields(
		"Application (client) ID of the app registered in Microsoft Entra ID (App registrations).",
		"A client secret of that app (Certificates & secrets).")
	fields = append(fields,
		core.Field{Key: KeyTenantID, Label: "Tenant", Type: core.FieldString, Default: DefaultTenant, Advanced: true,
			Help: "common (any account), organizations, consumers, or your tenant's ID or domain."},
		oauthdriver.ModeField("api: Microsoft Graph sendMail (scope Mail.Send); smtp: smtp.office365.com with XOAUTH2 (scope SMTP.Send)."),
		core.Field{Key: KeyFromEmail, Label: "From email", Type: core.FieldEmail,
			RequiredWhen: map[string]string{oauthdriver.KeyDeliveryMode: oauthdriver.ModeSMTP},
			Help:         "The mailbox to send as (the signed-in one, or one it may send as). Required in SMTP mode, where it is the login. Empty in API mode: the signed-in mailbox."},
		core.Field{Key: KeyFromName, Label: "From name", Type: core.FieldString,
			Help: "Sender display name. Empty: the message's own sender name."},
		core.Field{Key: KeyUserID, Label: "User ID", Type: core.FieldString, Advanced: true,
			Help: "API mode: send through /users/{id}/sendMail (an object ID or user principal name) instead of /me/sendMail."},
	)
	fields = append(fields, oauthdriver.TokenFields()...)
	fields = append(fields, oauthdriver.AppChoiceField())
	fields = append(fields,
		// Graph and the identity platform of the global service and of
		// the national clouds (US Government L4 and L5/DoD, China).
		apidriver.BaseURLField("Microsoft Graph base URL. Leave empty for "+DefaultBaseURL+".",
			"graph.microsoft.com", "graph.microsoft.us", "dod-graph.microsoft.us", "microsoftgraph.chinacloudapi.cn"),
		oauthdriver.OAuthBaseURLField(DefaultOAuthBaseURL,
			"login.microsoftonline.com", "login.microsoftonline.us", "login.chinacloudapi.cn"),
	)
	fields = append(fields, oauthdriver.SMTPFields(DefaultSMTPHost, DefaultSMTPPort)...)
	return core.Driver{
		Slug: Slug,
		// Graph allows four concurrent requests per mailbox.
		DefaultConcurrency: 4,
		// Exchange Online's default limit: 500 recipients per message.
		RecipientCaps: core.RecipientCaps{PerMessage: 500},
		Name:          "Microsoft 365 / Outlook",
		Description:   "Send from a Microsoft 365 or Outlook.com mailbox through Microsoft Graph, or SMTP with OAuth (XOAUTH2).",
		SetupHelp:     "In the Microsoft Entra admin center, App registrations → New registration gives the Application (client) ID; Certificates & secrets → New client secret gives the secret (copy its Value). Save, then authorize the mailbox from the Connections screen.",
		Fields:        fields,
		OAuthProvider: core.ProviderMicrosoft,
		Rules: []string{
			"from_email is required when delivery_mode is smtp: it is the mailbox that logs in.",
			"from_email, when set, is the sender of every message; from_name, when set, its display name.",
			"tenant_id is common, organizations, consumers, a tenant ID or a domain.",
			"user_id, when set, is an object ID or user principal name (no /, ?, # or spaces).",
			"smtp_host is a bare host name: no scheme, port or path.",
			"base_url, when empty, is " + DefaultBaseURL + ".",
			"Messages whose attachments do not fit in one 4 MB Graph request are sent as a draft with upload sessions, which needs the Mail.ReadWrite permission.",
		},
		Validate: validate,
		New:      New,
	}
}

// The tenant (up to 254 characters) and the SMTP host (up to 253), their
// lengths checked apart from the patterns: a counted repetition compiles
// into a program of one step per character, kept for the process's life.
var (
	tenantPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.-]*$`)
	hostPattern   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)
)

// validate checks the rules that span fields, on settings that passed the
// schema.
func validate(s core.Settings) map[string]string {
	out := map[string]string{}
	if mode(s) == oauthdriver.ModeSMTP && strings.TrimSpace(s.String(KeyFromEmail)) == "" {
		out[KeyFromEmail] = "Required in SMTP mode: the mailbox that logs in."
	}
	if t := s.String(KeyTenantID); t != "" && (len(t) > 254 || !tenantPattern.MatchString(t)) {
		out[KeyTenantID] = "Must be common, organizations, consumers, a tenant ID or a domain."
	}
	if u := s.String(KeyUserID); u != "" && !validUserID(u) {
		out[KeyUserID] = "Must be an object ID or user principal name, without /, ?, # or spaces."
	}
	if h := s.String(oauthdriver.KeySMTPHost); h != "" && (len(h) > 253 || !hostPattern.MatchString(h)) {
		out[oauthdriver.KeySMTPHost] = "Must be a host name or IP address, without scheme, port or path."
	}
	return out
}

// validUserID reports whether u can name a user in a Graph path.
func validUserID(u string) bool {
	return len(u) <= 256 && !strings.ContainsAny(u, "/?#%\\ \t\r\n")
}

// mode returns the delivery mode of settings, ModeAPI by default.
func mode(s core.Settings) string {
	if m := s.String(oauthdriver.KeyDeliveryMode); m != "" {
		return m
	}
	return oauthdriver.ModeAPI
}

// New builds the transport of an Outlook connection from its effective
// settings: the Graph transport in API mode, an SMTP XOAUTH2 transport in
// SMTP mode.
func New(conn *core.Connection, env core.DriverEnv) (core.Transport, error) {
	s := conn.Settings
	if msgs := validate(s); len(msgs) > 0 {
		return nil, core.Invalid(msgs)
	}
	switch mode(s) {
	case oauthdriver.ModeSMTP:
		return newSMTP(conn, env, smtp.Options{})
	case oauthdriver.ModeAPI:
		return NewGraph(conn, env)
	}
	return nil, core.InvalidField(oauthdriver.KeyDeliveryMode, "Must be one of: api, smtp.")
}

// newSMTP builds the SMTP mode transport: XOAUTH2 as from_email, which is
// also the sender of every message.
func newSMTP(conn *core.Connection, env core.DriverEnv, opts smtp.Options) (core.Transport, error) {
	s := conn.Settings
	host := s.String(oauthdriver.KeySMTPHost)
	if host == "" {
		host = DefaultSMTPHost
	}
	port := int(s.Int(oauthdriver.KeySMTPPort, DefaultSMTPPort))
	forced := *conn
	forced.Settings = core.Settings{
		smtp.KeyFromEmail: s.String(KeyFromEmail),
		smtp.KeyFromName:  s.String(KeyFromName),
		smtp.KeyForceFrom: true,
	}
	return smtp.NewXOAUTH2(&forced, env, host, port,
		smtp.XOAUTH2{Username: s.String(KeyFromEmail), Tokens: env.Tokens, ConnectionID: conn.ID}, opts)
}
