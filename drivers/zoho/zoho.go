// Package zoho is the mail transport for Zoho Mail mailboxes authorized
// with OAuth 2.0 (scopes ZohoMail.messages.CREATE and
// ZohoMail.accounts.READ). It registers itself as the driver "zoho" (OAuth
// provider zoho) when imported and speaks the Zoho Mail REST API with the
// "Authorization: Zoho-oauthtoken" header.
//
// Zoho sends from an account id, which is looked up once with
// GET /api/accounts: when the connection is authorized (the driver's
// Authorized hook stores it as account_id), or else lazily at the first send
// and kept in the transport. Attachments are uploaded first
// (POST /api/accounts/{id}/messages/attachments, raw body) and the send
// (POST /api/accounts/{id}/messages) refers to them.
//
// What the Zoho Mail send API cannot carry is dropped: custom headers and
// Reply-To (Zoho uses the mailbox's own Reply-To setting), the text part of
// a message that also has HTML (Zoho builds its own plain-text
// alternative), and attachment content types (Zoho derives them from the
// file name). Inline images are uploaded as inline and the HTML's
// "cid:<id>" references are replaced by the URL Zoho returns for them.
package zoho

import (
	"context"
	"fmt"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
)

// Slug is the driver name of Zoho Mail connections.
const Slug = "zoho"

// Settings keys of a Zoho Mail connection.
const (
	KeyDataCenter = "data_center"
	KeyFromEmail  = apidriver.KeyFromEmail
	KeyFromName   = apidriver.KeyFromName
	KeyAccountID  = "account_id"
	KeyBaseURL    = apidriver.KeyBaseURL
)

// DefaultDataCenter is the data centre of a connection that names none.
const DefaultDataCenter = "com"

// dataCenter is one Zoho data centre: its Mail API and accounts server.
type dataCenter struct {
	mail, accounts string
}

// dataCenters are the Zoho data centres, by the setting's value.
var dataCenters = map[string]dataCenter{
	"com":    {"https://mail.zoho.com", "https://accounts.zoho.com"},
	"eu":     {"https://mail.zoho.eu", "https://accounts.zoho.eu"},
	"in":     {"https://mail.zoho.in", "https://accounts.zoho.in"},
	"com.au": {"https://mail.zoho.com.au", "https://accounts.zoho.com.au"},
	"jp":     {"https://mail.zoho.jp", "https://accounts.zoho.jp"},
	"ca":     {"https://mail.zohocloud.ca", "https://accounts.zohocloud.ca"},
	"sa":     {"https://mail.zoho.sa", "https://accounts.zoho.sa"},
}

// DataCenters returns the data centre names a connection may choose, in
// the schema's order.
func DataCenters() []string {
	return []string{"com", "eu", "in", "com.au", "jp", "ca", "sa"}
}

// MailURL returns the Zoho Mail API base URL of a data centre
// (https://mail.zoho.<dc>; Canada is https://mail.zohocloud.ca). An unknown
// or empty name gives the default data centre's.
func MailURL(dc string) string {
	if d, ok := dataCenters[dc]; ok {
		return d.mail
	}
	return dataCenters[DefaultDataCenter].mail
}

// AccountsURL returns the OAuth accounts server of a data centre
// (https://accounts.zoho.<dc>; Canada is https://accounts.zohocloud.ca).
// An unknown or empty name gives the default data centre's.
func AccountsURL(dc string) string {
	if d, ok := dataCenters[dc]; ok {
		return d.accounts
	}
	return dataCenters[DefaultDataCenter].accounts
}

// hostsOf returns the host of url(dc) for every data centre, in the
// schema's order: the hosts an endpoint field takes.
func hostsOf(url func(dc string) string) []string {
	out := make([]string, 0, len(dataCenters))
	for _, dc := range DataCenters() {
		out = append(out, strings.TrimPrefix(url(dc), "https://"))
	}
	return out
}

// BaseURL returns the Mail API base URL of a connection's settings: its
// base_url, or the one of its data centre.
func BaseURL(s core.Settings) string {
	return apidriver.BaseURL(s, MailURL(s.String(KeyDataCenter)))
}

func init() {
	core.Register(Driver())
}

// Driver returns the Zoho Mail driver description: schema, rules,
// constructor and the Authorized hook that looks up the account id.
func Driver() core.Driver {
	var fields []core.Field
	fields = append(fields, oauthdriver.AppFields(
		"Client ID of a Server-based Application in the Zoho API Console (api-console.zoho.com) of the mailbox's data centre.",
		"The application's client secret.")...)
	fields = append(fields,
		core.Field{Key: KeyDataCenter, Label: "Data centre", Type: core.FieldSelect, Options: DataCenters(),
			Default: DefaultDataCenter,
			Help:    "Where the Zoho account lives: com (US), eu, in, com.au, jp, ca (zohocloud.ca) or sa. Chooses the Mail API and accounts hosts."},
		core.Field{Key: KeyFromEmail, Label: "From email", Type: core.FieldEmail, Required: true,
			Help: "The Zoho mailbox (or one of its send-as addresses) every message is sent from."},
		apidriver.FromNameField(),
		core.Field{Key: KeyAccountID, Label: "Account ID", Type: core.FieldString, Advanced: true,
			Help: "Zoho Mail's id of the mailbox; looked up and stored when the connection is authorized."},
	)
	fields = append(fields, oauthdriver.TokenFields()...)
	fields = append(fields,
		apidriver.BaseURLField("Leave empty for the data centre's Mail API (https://mail.zoho.<dc>).",
			hostsOf(MailURL)...),
		oauthdriver.OAuthBaseURLField("https://accounts.zoho.com (per data centre)", hostsOf(AccountsURL)...),
	)
	return core.Driver{
		Slug: Slug,
		// Zoho Mail API limits are per account.
		DefaultConcurrency: 10,
		// 100 external recipients per message (to, cc and bcc) for free
		// accounts, 150 for paid ones: the lower, and a To in every call.
		RecipientCaps: core.RecipientCaps{PerMessage: 100, NeedsTo: true},
		Name:          "Zoho Mail",
		Description:   "Send as a Zoho Mail mailbox authorized with OAuth, through the Zoho Mail API.",
		SetupHelp:     "In the Zoho API Console (api-console.zoho.com) of your data centre, add a Server-based Application: its Client Secret tab shows the client ID and secret; save, then authorize the mailbox from the Connections screen.",
		Fields:        fields,
		Rules: []string{
			"from_email is required: every message is sent from it; from_name, when set, replaces the sender name.",
			"base_url, when empty, is the data centre's Mail API: https://mail.zoho.<dc> (ca: https://mail.zohocloud.ca).",
			"account_id, when empty, is looked up once from the mailbox list: the account of from_email, else the first listed.",
			"Custom headers, Reply-To and the text part of an HTML message are not sent: the Zoho Mail send API has no place for them.",
		},
		New:           New,
		OAuthProvider: core.ProviderZoho,
		Authorized:    authorized,
	}
}

// authorized is the driver's Authorized hook: it looks up the account id
// of the connection's mailbox with the new token and returns it to store.
func authorized(ctx context.Context, conn *core.Connection, accessToken string, env core.DriverEnv) (core.Settings, error) {
	c := &client{base: BaseURL(conn.Settings), http: apidriver.HTTPClient(env)}
	id, err := c.lookupAccount(ctx, accessToken, conn.Settings.String(KeyFromEmail))
	if err != nil {
		return nil, apidriver.Scrub(fmt.Errorf("zoho: look up the account id: %w", err), accessToken)
	}
	return core.Settings{KeyAccountID: id}, nil
}

// New builds the transport of a Zoho Mail connection from its effective
// settings.
func New(conn *core.Connection, env core.DriverEnv) (core.Transport, error) {
	s := conn.Settings
	from := strings.TrimSpace(s.String(KeyFromEmail))
	if from == "" {
		return nil, core.InvalidField(KeyFromEmail, "This field is required.")
	}
	if dc := s.String(KeyDataCenter); dc != "" {
		if _, ok := dataCenters[dc]; !ok {
			return nil, core.InvalidField(KeyDataCenter, "Must be one of: "+strings.Join(DataCenters(), ", ")+".")
		}
	}
	return &Transport{
		connID:    conn.ID,
		tokens:    env.Tokens,
		client:    &client{base: BaseURL(s), http: apidriver.HTTPClient(env)},
		from:      core.Address{Email: from, Name: s.String(KeyFromName)},
		accountID: s.String(KeyAccountID),
	}, nil
}
