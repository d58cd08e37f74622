package migration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

func init() {
	Register(wpMailSMTP{plugin{id: SourceWPMailSMTP, name: "WP Mail SMTP", logs: WPMailSMTPLogs("", ""),
		option: wpmsOption, table: wpmsTable, dir: "wp-mail-smtp"}})
}

// wpMailSMTP reads WP Mail SMTP Lite and Pro: the option wp_mail_smtp
// (the primary connection), Pro's wp_mail_smtp_additional_connections
// and backup connection, and Pro's wpmailsmtp_emails_log table.
type wpMailSMTP struct{ plugin }

const (
	wpmsOption     = "wp_mail_smtp"
	wpmsAdditional = "wp_mail_smtp_additional_connections"
	wpmsTable      = "wpmailsmtp_emails_log"
)

// Detect adds the plugin's version to what plugin.Detect finds.
func (w wpMailSMTP) Detect(ctx context.Context, site Site) (Detection, error) {
	d, err := w.plugin.Detect(ctx, site)
	if err == nil && d.Found {
		if v, ok, _ := site.Option(ctx, "wp_mail_smtp_version"); ok {
			d.Version = PHPString(v)
		}
	}
	return d, err
}

func (wpMailSMTP) Connections(ctx context.Context, site Site) (*Setup, error) {
	setup := &Setup{}
	v, found, err := site.Option(ctx, wpmsOption)
	if errors.Is(err, ErrUnreadable) {
		setup.Errors = append(setup.Errors, fmt.Sprintf("The option %s cannot be read (its serialized value is damaged).", wpmsOption))
		return setup, nil
	}
	if err != nil {
		return nil, err
	}
	constOn := false
	if c, ok := site.Constant("WPMS_ON"); ok && PHPBool(c) {
		constOn = true
	}
	if found {
		opt := AsDict(v)
		c := wpmsCandidate(ctx, site, "primary", "", opt, constOn)
		setup.Candidates = append(setup.Candidates, c)
		setup.DefaultKey = "primary"
		if b := opt.Dict("backup_connection").Str("connection_id"); b != "" {
			setup.FallbackKey = b
		}
	}
	av, found, err := site.Option(ctx, wpmsAdditional)
	if errors.Is(err, ErrUnreadable) {
		setup.Errors = append(setup.Errors, fmt.Sprintf("The option %s cannot be read (its serialized value is damaged).", wpmsAdditional))
	} else if err != nil {
		return nil, err
	} else if found {
		add := AsDict(av)
		for _, id := range add.Keys() {
			conn := add.Dict(id)
			setup.Candidates = append(setup.Candidates, wpmsCandidate(ctx, site, id, conn.Dict("connection").Str("name"), conn, false))
		}
	}
	return setup, nil
}

// wpmsConstants maps a mailer's plugin constants to our settings keys.
var wpmsConstants = map[string][][2]string{
	"smtp":      {{"WPMS_SMTP_HOST", "host"}, {"WPMS_SMTP_PORT", "port"}, {"WPMS_SMTP_USER", "username"}, {"WPMS_SMTP_PASS", "password"}},
	"mailgun":   {{"WPMS_MAILGUN_API_KEY", "api_key"}, {"WPMS_MAILGUN_DOMAIN", "domain"}},
	"sendgrid":  {{"WPMS_SENDGRID_API_KEY", "api_key"}},
	"postmark":  {{"WPMS_POSTMARK_SERVER_API_TOKEN", "api_key"}},
	"amazonses": {{"WPMS_AMAZONSES_CLIENT_ID", "access_key"}, {"WPMS_AMAZONSES_CLIENT_SECRET", "secret"}},
	"gmail":     {{"WPMS_GMAIL_CLIENT_ID", "client_id"}, {"WPMS_GMAIL_CLIENT_SECRET", "client_secret"}},
	"outlook":   {{"WPMS_OUTLOOK_CLIENT_ID", "client_id"}, {"WPMS_OUTLOOK_CLIENT_SECRET", "client_secret"}},
	"zoho":      {{"WPMS_ZOHO_CLIENT_ID", "client_id"}, {"WPMS_ZOHO_CLIENT_SECRET", "client_secret"}},
}

// wpmsCandidate converts one WP Mail SMTP connection (the main option or
// an additional connection: same groups).
func wpmsCandidate(ctx context.Context, site Site, key, name string, opt Dict, constOn bool) Candidate {
	mail := opt.Dict("mail")
	slug := mail.Str("mailer")
	if slug == "" {
		slug = "mail"
	}
	g := opt.Dict(slug)
	c := Candidate{Key: key, SourceSlug: slug, Settings: map[string]any{}}
	c.Name = strings.TrimSpace(fmt.Sprintf("%s (%s)", firstNonEmpty(name, "WP Mail SMTP "+slug), mail.Str("from_email")))
	set := func(k, v string) {
		if v != "" {
			c.Settings[k] = v
		}
	}
	set("from_email", mail.Str("from_email"))
	set("from_name", mail.Str("from_name"))
	switch slug {
	case "smtp", "pepipost":
		c.Driver = "smtp"
		set("host", g.Str("host"))
		if p := g.Int("port", 0); p > 0 {
			c.Settings["port"] = p
		}
		enc := g.Str("encryption")
		if enc != "ssl" && enc != "tls" {
			enc = "none"
		}
		c.Settings["encryption"] = enc
		c.Settings["auth"] = g.Bool("auth")
		c.Settings["force_from"] = mail.Bool("from_email_force")
		if g.Bool("auth") {
			set("username", g.Str("user"))
			if pass := g.Str("pass"); pass != "" {
				if slug == "pepipost" {
					set("password", pass) // the legacy Pepipost SMTP password is plaintext
				} else if plain, ok := wpmsPassword(ctx, site, SchemeWPMailSMTP, pass); ok {
					set("password", plain)
				} else {
					c.Missing = append(c.Missing, "password")
					c.Issues = append(c.Issues, "The SMTP password is encrypted with a key this site no longer has (wp_mail_smtp_mail_key or WPMS_CRYPTO_KEY): enter it again.")
				}
			}
		}
	case "amazonses":
		c.Driver = "ses"
		c.Settings["delivery_mode"] = "api"
		set("access_key", g.Str("client_id"))
		set("secret", g.Str("client_secret"))
		set("region", g.Str("region"))
	case "mailgun":
		c.Driver = "mailgun"
		set("api_key", g.Str("api_key"))
		set("domain", g.Str("domain"))
		if r := strings.ToLower(g.Str("region")); r == "eu" || r == "us" {
			c.Settings["region"] = r
		}
	case "sendgrid":
		c.Driver = "sendgrid"
		set("api_key", g.Str("api_key"))
	case "postmark":
		c.Driver = "postmark"
		set("api_key", g.Str("server_api_token"))
		set("message_stream", g.Str("message_stream"))
	case "gmail", "outlook", "zoho":
		c.Driver = slug
		set("client_id", g.Str("client_id"))
		set("client_secret", g.Str("client_secret"))
		if slug == "zoho" {
			set("data_center", g.Str("domain"))
		}
		if !g.Bool("one_click_setup_enabled") {
			// The site owner's own app issued the token: it refreshes.
			set("refresh_token", g.Str("refresh_token"))
			if at := g.Dict("access_token"); at != nil {
				set("access_token", at.Str("access_token"))
				if created, in := at.Int("created", 0), at.Int("expires_in", 0); created > 0 && in > 0 {
					c.Settings["expires_at"] = time.Unix(created+in, 0).UTC().Format(time.RFC3339)
				}
			}
		} else {
			c.Issues = append(c.Issues, "This connection used WP Mail SMTP's one-click setup (its vendor's app): create your own OAuth app and authorize again.")
		}
		if slug == "zoho" && c.Settings["from_email"] == nil {
			set("from_email", g.Dict("user_details").Str("email"))
		}
	default:
		m, ok := wpmsAPIMailers[slug]
		if !ok {
			c.Settings = nil
			break
		}
		m.fill(&c, func(field string, _ bool) (string, bool) { return g.Str(field), true })
		c.Settings["force_from"] = mail.Bool("from_email_force")
	}
	if constOn && c.Driver != "" {
		for _, pc := range wpmsConstants[slug] {
			if _, ok := site.Constant(pc[0]); ok {
				c.Issues = append(c.Issues, PinnedIssue(pc[0], c.Driver, pc[1]))
				if _, have := c.Settings[pc[1]]; !have && !contains(c.Missing, pc[1]) {
					c.Missing = append(c.Missing, pc[1])
				}
			}
		}
	}
	return c
}

// wpmsPassword opens a secretbox-sealed SMTP password. A value that is
// not a sealed box (too short, not base64) is the plaintext the plugin
// stored when encryption was off; a sealed box that does not open means
// the key is gone.
func wpmsPassword(ctx context.Context, site Site, scheme Scheme, v string) (string, bool) {
	plain, err := site.Decrypt(ctx, scheme, v)
	if err == nil {
		return plain, true
	}
	if looksSealed(v) {
		return "", false
	}
	return v, true
}

// looksSealed reports whether v is base64 of at least nonce+tag bytes
// (24 + 16), the shape of a secretbox.
func looksSealed(v string) bool {
	if len(v) < 56 || len(v)%4 != 0 {
		return false
	}
	for _, r := range v {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=') {
			return false
		}
	}
	return true
}

// Pro's wpmailsmtp_emails_log (date_sent in UTC) is read by the logTable
// of WPMailSMTPLogs, which the Easy WP SMTP source uses as well.
// WPMailSMTPLogs returns the reader of a WP-Mail-SMTP-Pro-shaped log
// table (Easy WP SMTP Pro keeps the same layout under its own name);
// empty table and pluginName are WP Mail SMTP's own.
func WPMailSMTPLogs(table, pluginName string) LogSource {
	return logTable{table: firstNonEmpty(table, wpmsTable),
		missing: fmt.Sprintf("%s keeps no email log on this site (only the Pro plugin logs emails).", firstNonEmpty(pluginName, "WP Mail SMTP")),
		since:   "date_sent >= ?", clock: utcText, key: "id",
		columns: []string{"id", "subject", "people", "headers", "error_text", "content_plain", "content_html", "status", "date_sent", "mailer"},
		entry:   func(_ Site, r Row, _ *time.Location) LogEntry { return wpmsEntry(r) }}
}

func wpmsEntry(r Row) LogEntry {
	pos, _ := strconv.ParseInt(r["id"], 10, 64)
	e := LogEntry{Position: pos, Provider: r["mailer"]}
	e.Time, _ = LocalTime(r["date_sent"], time.UTC) // UTC since Pro 2.6.0
	var people struct {
		To   []string `json:"to"`
		Cc   []string `json:"cc"`
		Bcc  []string `json:"bcc"`
		From string   `json:"from"`
	}
	_ = json.Unmarshal([]byte(r["people"]), &people)
	e.Message.To = SplitAddresses(strings.Join(people.To, ","))
	e.Message.Cc = SplitAddresses(strings.Join(people.Cc, ","))
	e.Message.Bcc = SplitAddresses(strings.Join(people.Bcc, ","))
	if from, err := core.ParseAddress(people.From); err == nil {
		e.Message.From = from
	}
	e.Message.Subject = r["subject"]
	e.Message.HTML = r["content_html"]
	e.Message.Text = r["content_plain"]
	switch r["status"] {
	case "1", "3":
		e.Status = core.StatusDelivered
	case "2":
		e.Status = core.StatusDelivered // sent, waiting for the API's delivery check
	default:
		e.Status = core.StatusFailed
		e.Error = r["error_text"]
	}
	if len(e.Message.Recipients()) == 0 {
		e.Skip, e.SkipReason = true, "no readable recipient"
	}
	if e.Time.IsZero() {
		e.Skip, e.SkipReason = true, "no readable time"
	}
	return e
}
