package migration

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

func init() {
	Register(fluentSMTP{plugin{id: SourceFluentSMTP, name: "FluentSMTP", logs: fluentLogs,
		option: fluentOption, table: fluentTable, dir: "fluent-smtp/"}})
}

// fluentSMTP reads FluentSMTP: the option fluentmail-settings and the
// table fsmpt_email_logs.
type fluentSMTP struct{ plugin }

const (
	fluentOption = "fluentmail-settings"
	fluentTable  = "fsmpt_email_logs"
)

// fluentSecret is the one secret field per provider FluentSMTP encrypts.
var fluentSecret = map[string]string{
	"smtp": "password", "ses": "secret_key", "gmail": "client_secret", "outlook": "client_secret",
}

// fluentConstants are the constants a key_store=wp_config connection
// reads, per provider: plugin constant → our settings key.
var fluentConstants = map[string][][2]string{
	"smtp":     {{"FLUENTMAIL_SMTP_USERNAME", "username"}, {"FLUENTMAIL_SMTP_PASSWORD", "password"}},
	"ses":      {{"FLUENTMAIL_AWS_ACCESS_KEY_ID", "access_key"}, {"FLUENTMAIL_AWS_SECRET_ACCESS_KEY", "secret"}},
	"mailgun":  {{"FLUENTMAIL_MAILGUN_API_KEY", "api_key"}, {"FLUENTMAIL_MAILGUN_DOMAIN", "domain"}},
	"sendgrid": {{"FLUENTMAIL_SENDGRID_API_KEY", "api_key"}},
	"postmark": {{"FLUENTMAIL_POSTMARK_API_KEY", "api_key"}},
	"gmail":    {{"FLUENTMAIL_GMAIL_CLIENT_ID", "client_id"}, {"FLUENTMAIL_GMAIL_CLIENT_SECRET", "client_secret"}},
	"outlook":  {{"FLUENTMAIL_OUTLOOK_CLIENT_ID", "client_id"}, {"FLUENTMAIL_OUTLOOK_CLIENT_SECRET", "client_secret"}},
}

func (fluentSMTP) Connections(ctx context.Context, site Site) (*Setup, error) {
	setup := &Setup{}
	v, found, err := site.Option(ctx, fluentOption)
	if errors.Is(err, ErrUnreadable) {
		setup.Errors = append(setup.Errors, fmt.Sprintf("The option %s cannot be read (its serialized value is damaged).", fluentOption))
		return setup, nil
	}
	if err != nil || !found {
		return setup, err
	}
	opt := AsDict(v)
	misc := opt.Dict("misc")
	conns := opt.Dict("connections")
	setup.DefaultKey = misc.Str("default_connection")
	if _, ok := conns[setup.DefaultKey]; !ok {
		setup.DefaultKey = ""
		if keys := conns.Keys(); len(keys) > 0 {
			setup.DefaultKey = keys[0]
		}
	}
	setup.FallbackKey = misc.Str("fallback_connection")
	if !misc.Bool("log_emails") && misc.Str("log_emails") != "" {
		setup.Issues = append(setup.Issues, "FluentSMTP logged failures only (email logging was off): its log holds no delivered messages.")
	}
	if len(opt.Dict("mappings")) > 1 {
		setup.Issues = append(setup.Issues, "FluentSMTP chose the connection by From address; mailsvc sends through the default connection unless a message names one.")
	}
	// Keys usable for the encrypted fields: checked against the stored test value.
	keysOK := false
	encrypted := opt.Bool("use_encrypt")
	if encrypted {
		plain, err := site.Decrypt(ctx, SchemeFluentSMTP, opt.Str("test"))
		keysOK = err == nil && plain == "test"
		if !keysOK {
			setup.Issues = append(setup.Issues, "FluentSMTP's secrets cannot be decrypted: LOGGED_IN_KEY/LOGGED_IN_SALT (or FLUENTMAIL_ENCRYPT_KEY/_SALT) in wp-config.php do not match the ones it encrypted with. Enter the passwords and API keys again.")
		}
	}
	for _, key := range conns.Keys() {
		ps := conns.Dict(key).Dict("provider_settings")
		c := fluentCandidate(ctx, site, key, conns.Dict(key).Str("title"), ps, encrypted && !ps.Bool("disable_encryption"), keysOK)
		setup.Candidates = append(setup.Candidates, c)
	}
	return setup, nil
}

// fluentCandidate converts one FluentSMTP connection.
func fluentCandidate(ctx context.Context, site Site, key, title string, ps Dict, encrypted, keysOK bool) Candidate {
	slug := ps.Str("provider")
	c := Candidate{Key: key, SourceSlug: slug, Settings: map[string]any{}}
	sender := ps.Str("sender_email")
	c.Name = strings.TrimSpace(fmt.Sprintf("%s (%s)", firstNonEmpty(title, slug), sender))
	set := func(k string, v any) {
		if s, ok := v.(string); ok && s == "" {
			return
		}
		c.Settings[k] = v
	}
	secret := func(field string) string {
		v := ps.Str(field)
		encField := fluentSecret[slug]
		if encField == "" {
			encField = "api_key" // every API provider encrypts its key
		}
		if v == "" || !encrypted || field != encField {
			return v
		}
		if !keysOK {
			return ""
		}
		plain, err := site.Decrypt(ctx, SchemeFluentSMTP, v)
		if err != nil {
			return ""
		}
		return plain
	}
	need := func(ourKey, field string) {
		v := secret(field)
		if v == "" && ps.Str(field) != "" {
			c.Missing = append(c.Missing, ourKey)
			return
		}
		set(ourKey, v)
	}
	set("from_email", sender)
	set("from_name", ps.Str("sender_name"))
	switch slug {
	case "smtp":
		c.Driver = "smtp"
		set("host", ps.Str("host"))
		if p := ps.Int("port", 0); p > 0 {
			c.Settings["port"] = p
		}
		enc := strings.ToLower(ps.Str("encryption"))
		if enc != "ssl" && enc != "tls" {
			enc = "none"
		}
		c.Settings["encryption"] = enc
		auth := ps.Bool("auth")
		c.Settings["auth"] = auth
		c.Settings["force_from"] = ps.Str("force_from_email") == "yes"
		if auth {
			set("username", ps.Str("username"))
			need("password", "password")
		}
	case "ses":
		c.Driver = "ses"
		c.Settings["delivery_mode"] = "api"
		set("region", ps.Str("region"))
		set("access_key", ps.Str("access_key"))
		need("secret", "secret_key")
	case "mailgun":
		c.Driver = "mailgun"
		need("api_key", "api_key")
		set("domain", ps.Str("domain_name"))
		if r := strings.ToLower(ps.Str("region")); r == "eu" || r == "us" {
			c.Settings["region"] = r
		}
	case "sendgrid":
		c.Driver = "sendgrid"
		need("api_key", "api_key")
	case "postmark":
		c.Driver = "postmark"
		need("api_key", "api_key")
		set("message_stream", ps.Str("message_stream"))
	case "gmail", "outlook":
		c.Driver = slug
		set("client_id", ps.Str("client_id"))
		need("client_secret", "client_secret")
		if slug == "outlook" {
			set("tenant_id", ps.Str("tenant_id"))
		}
		// The site owner's own OAuth app issued the token: it refreshes
		// with the same client id and secret.
		set("refresh_token", ps.Str("refresh_token"))
		set("access_token", ps.Str("access_token"))
		if exp := ps.Int("expire_stamp", 0); exp > 0 {
			c.Settings["expires_at"] = time.Unix(exp, 0).UTC().Format(time.RFC3339)
		}
	default:
		m, ok := fluentAPIMailers[slug]
		if !ok {
			c.Settings = nil
			break
		}
		m.fill(&c, func(field string, _ bool) (string, bool) {
			v := secret(field)
			return v, v != "" || ps.Str(field) == ""
		})
		c.Settings["force_from"] = ps.Str("force_from_email") == "yes"
		if slug == "elasticmail" && ps.Str("mail_type") == "marketing" {
			c.Issues = append(c.Issues, elasticMarketingIssue)
		}
	}
	if c.Driver != "" && ps.Str("key_store") == "wp_config" {
		for _, pc := range fluentConstants[slug] {
			if _, ok := site.Constant(pc[0]); ok {
				c.Issues = append(c.Issues, PinnedIssue(pc[0], c.Driver, pc[1]))
				if _, have := c.Settings[pc[1]]; !have && !contains(c.Missing, pc[1]) {
					c.Missing = append(c.Missing, pc[1])
				}
			}
		}
	}
	if c.Driver == "smtp" && ps.Str("force_from_name") == "yes" {
		c.Issues = append(c.Issues, "FluentSMTP forced the From name; mailsvc's force_from forces the From address and name together.")
	}
	return c
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fluentLogs reads fsmpt_email_logs. created_at is a TIMESTAMP column
// holding current_time('mysql'): site-local wall clock, read as text.
var fluentLogs = logTable{table: fluentTable, missing: "FluentSMTP's log table does not exist.",
	since: "created_at >= ?", clock: siteLocal, key: "id",
	columns: []string{"id", "to", "from", "subject", "body", "headers", "status", "response", "extra", "created_at"},
	entry:   fluentEntry}

func fluentEntry(site Site, r Row, loc *time.Location) LogEntry {
	pos, _ := strconv.ParseInt(r["id"], 10, 64)
	e := LogEntry{Position: pos}
	e.Time, _ = LocalTime(r["created_at"], loc)
	e.Message.Subject = r["subject"]
	body := r["body"]
	if from, err := core.ParseAddress(r["from"]); err == nil {
		e.Message.From = from
	}
	e.Message.To = phpAddressList(site, r["to"])
	headers := AsDict(unserialize(site, r["headers"]))
	e.Message.Cc = dictAddresses(headers["cc"])
	e.Message.Bcc = dictAddresses(headers["bcc"])
	e.Message.ReplyTo = dictAddresses(headers["reply-to"])
	if strings.Contains(strings.ToLower(headers.Str("content-type")), "html") || looksHTML(body) {
		e.Message.HTML = body
	} else {
		e.Message.Text = body
	}
	e.Provider = AsDict(unserialize(site, r["extra"])).Str("provider")
	switch r["status"] {
	case "sent":
		e.Status = core.StatusDelivered
	case "failed":
		e.Status = core.StatusFailed
		resp := AsDict(unserialize(site, r["response"]))
		e.Error = firstNonEmpty(resp.Str("message"), "Failed in FluentSMTP.")
	default:
		e.Status = core.StatusQueued
	}
	if len(e.Message.Recipients()) == 0 {
		e.Skip, e.SkipReason = true, "no readable recipient (the to column may be cut off)"
	}
	if e.Time.IsZero() {
		e.Skip, e.SkipReason = true, "no readable time"
	}
	return e
}
