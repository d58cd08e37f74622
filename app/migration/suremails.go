package migration

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// SureMails (Brainstorm Force) keeps its connections in the option
// suremails_connections: {connections: {id: {type, from_email, …}},
// default_connection: {id, …}, log_emails} (inc/settings.php). The fields
// a provider marks "encrypt" are stored as base64 with the '=' padding
// stripped (Settings::encrypt). A message goes to the default
// connection; on failure to the next connection with the same sender, in
// priority order (inc/connection-manager.php). The log is the table
// suremails_email_log (inc/db/email-log.php), created_at written with
// current_time('mysql'): site-local time.
const (
	sureMailsOption = "suremails_connections"
	sureMailsTable  = "suremails_email_log"
)

func init() {
	Register(sureMailsSource{plugin{id: SourceSureMails, name: "SureMails", logs: sureMailsLogs,
		option: sureMailsOption, table: sureMailsTable, dir: "suremails/"}})
}

// sureMailsSource reads SureMails.
type sureMailsSource struct{ plugin }

// Connections converts every connection; the default and fallback follow
// the plugin's choice.
func (s sureMailsSource) Connections(ctx context.Context, site Site) (*Setup, error) {
	return s.fromOption(ctx, site, "suremails", func(_ *Setup, opts Dict) (*Setup, error) {
		return SureMailsSetup(opts, func(v string) (string, error) {
			return site.Decrypt(ctx, SchemeBase64Unpadded, v)
		}), nil
	})
}

// SureMailsSetup converts suremails_connections. decode opens an
// unpadded base64 field (Site.Decrypt with SchemeBase64Unpadded).
func SureMailsSetup(opts Dict, decode func(string) (string, error)) *Setup {
	setup := &Setup{}
	conns := opts.Dict("connections")
	type ranked struct {
		key      string
		priority int64
		from     string
	}
	var order []ranked
	for _, id := range conns.Keys() {
		c := conns.Dict(id)
		if c == nil {
			continue
		}
		key := firstNonEmpty(c.Str("id"), id)
		setup.Candidates = append(setup.Candidates, SureMailsCandidate(key, c, decode))
		order = append(order, ranked{key, c.Int("priority", 0), strings.ToLower(strings.TrimSpace(c.Str("from_email")))})
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].priority < order[j].priority })
	def := opts.Dict("default_connection").Str("id")
	for i, r := range order {
		if r.key != def {
			continue
		}
		setup.DefaultKey = def
		for _, next := range order[i+1:] {
			if next.from == r.from {
				setup.FallbackKey = next.key
				break
			}
		}
	}
	if setup.DefaultKey == "" && len(order) > 0 {
		setup.DefaultKey = order[0].key
	}
	if strings.EqualFold(opts.Str("log_emails"), "no") {
		setup.Issues = append(setup.Issues, "SureMails' email log was off: its log may be empty or stop early.")
	}
	if strings.EqualFold(opts.Str("email_simulation"), "yes") {
		setup.Issues = append(setup.Issues, "SureMails was simulating emails (logging without sending).")
	}
	return setup
}

// SureMailsCandidate converts one SureMails connection by its type.
func SureMailsCandidate(key string, c Dict, decode func(string) (string, error)) Candidate {
	typ := strings.ToUpper(c.Str("type"))
	from := strings.TrimSpace(c.Str("from_email"))
	title := firstNonEmpty(c.Str("connection_title"), typ)
	name := "SureMails " + title
	if from != "" {
		name += " (" + from + ")"
	}
	cand := Candidate{Key: key, Name: name, SourceSlug: typ, Settings: map[string]any{}}
	// secret decodes an encrypted field into our key, or marks it missing.
	secret := func(field, ours string, required bool) {
		raw := c.Str(field)
		if raw == "" {
			if required {
				cand.Missing = append(cand.Missing, ours)
			}
			return
		}
		v, err := decode(raw)
		if err != nil || v == "" {
			cand.Missing = append(cand.Missing, ours)
			return
		}
		cand.Settings[ours] = v
	}
	set := func(k, v string) {
		if v != "" {
			cand.Settings[k] = v
		}
	}
	sender := func() {
		set("from_email", from)
		set("from_name", c.Str("from_name"))
	}
	switch typ {
	case "SMTP":
		user := c.Str("username")
		srv := SMTPServer{
			Host:       c.Str("host"),
			Port:       c.Int("port", 0),
			Encryption: c.Str("encryption"),
			// The plugin logs in only when a username or password is set.
			Auth:      user != "" || c.Str("password") != "",
			Username:  user,
			FromEmail: from,
			FromName:  c.Str("from_name"),
			ForceFrom: c.Bool("force_from_email"),
		}
		if srv.Auth {
			if raw := c.Str("password"); raw != "" {
				pw, err := decode(raw)
				srv.Password, srv.PasswordMissing = pw, err != nil || pw == ""
			}
		}
		return srv.Candidate(key, name, typ)
	case "AWS":
		cand.Driver = "ses"
		cand.Settings["delivery_mode"] = "api"
		sender()
		secret("username", "access_key", true)
		secret("password", "secret", true)
		region := c.Str("region")
		if r := c.Dict("region"); r != nil {
			region = r.Str("value")
		}
		set("region", region)
	case "SENDGRID":
		cand.Driver = "sendgrid"
		sender()
		secret("api_key", "api_key", true)
	case "MAILGUN":
		cand.Driver = "mailgun"
		sender()
		secret("api_key", "api_key", true)
		set("domain", c.Str("domain"))
		if r := strings.ToLower(c.Str("region")); r == "eu" || r == "us" {
			cand.Settings["region"] = r
		}
	case "POSTMARK":
		cand.Driver = "postmark"
		sender()
		if c.Str("server_token") != "" {
			secret("server_token", "api_key", true)
		} else {
			secret("api_key", "api_key", true)
		}
		set("message_stream", c.Str("message_stream"))
	case "GMAIL", "ZOHO":
		cand.Driver = strings.ToLower(typ)
		sender()
		if typ == "GMAIL" {
			cand.Settings[oauthKeyMode] = "api"
		}
		set(oauthKeyClientID, c.Str("client_id"))
		if c.Str("client_id") == "" {
			cand.Missing = append(cand.Missing, oauthKeyClientID)
		}
		secret("client_secret", oauthKeySecret, true)
		if typ == "ZOHO" {
			if dc := strings.ToLower(c.Str("region")); dc != "" {
				cand.Settings["data_center"] = dc
			}
			set("account_id", c.Str("account_id"))
		}
		// The site owner's own OAuth client issued the token: it refreshes
		// with the same client id and secret.
		// An unreadable token is not a password to ask for: without it
		// the connection is authorized again.
		if _, ok := cand.Settings[oauthKeySecret]; ok && c.Str("refresh_token") != "" {
			if rt, err := decode(c.Str("refresh_token")); err == nil && rt != "" {
				cand.Settings[core.KeyRefreshToken] = rt
			}
		}
	case "OUTLOOK":
		cand.Driver = "outlook"
		sender()
		secret("client_id", oauthKeyClientID, false)
		secret("client_secret", oauthKeySecret, false)
		cand.Review = true
		cand.Issues = append(cand.Issues, "SureMails listed Outlook as coming soon and never sent through it: enter the Microsoft app and authorize the connection.")
	default:
		m, ok := sureMailsAPIMailers[typ]
		if !ok {
			// PHPMAIL, NETCORE, SURECONTACT: no driver of ours.
			cand.Settings = nil
			break
		}
		sender()
		m.fill(&cand, func(field string, secret bool) (string, bool) {
			raw := c.Str(field)
			if !secret {
				return raw, true
			}
			if raw == "" {
				return "", false
			}
			v, err := decode(raw)
			return v, err == nil && v != ""
		})
		cand.Settings["force_from"] = c.Bool("force_from_email")
		if typ == "ELASTIC" && strings.EqualFold(c.Str("mail_type"), "marketing") {
			cand.Issues = append(cand.Issues, elasticMarketingIssue)
		}
	}
	return cand
}

// sureMailsLogs reads suremails_email_log.
// created_at is site-local.
var sureMailsLogs = logTable{table: sureMailsTable, missing: "SureMails' log table does not exist.",
	since: "created_at >= ?", clock: siteLocal, key: "id",
	columns: []string{"id", "email_from", "email_to", "subject", "body", "headers", "status", "response", "connection", "created_at"},
	entry:   sureMailsEntry}

// sureMailsEntry converts one row.
func sureMailsEntry(site Site, r Row, loc *time.Location) LogEntry {
	pos, _ := strconv.ParseInt(r["id"], 10, 64)
	var to string
	switch t := unserialize(site, r["email_to"]).(type) {
	case string:
		to = t
	default:
		d := AsDict(t)
		parts := make([]string, 0, len(d))
		for _, k := range d.Keys() {
			if item := d.Dict(k); item != nil {
				parts = append(parts, core.Address{Name: item.Str("name"), Email: item.Str("email")}.String())
			} else {
				parts = append(parts, d.Str(k))
			}
		}
		to = strings.Join(parts, ",")
	}
	w := WPMail{From: r["email_from"], To: to, HeaderLines: HeaderLines(unserialize(site, r["headers"])), Subject: r["subject"], Body: r["body"]}
	e := LogEntry{Position: pos, Message: w.Message(), Provider: r["connection"]}
	e.Time, _ = LocalTime(r["created_at"], loc)
	switch r["status"] {
	case "sent":
		e.Status = core.StatusDelivered
	case "pending":
		e.Status = core.StatusQueued
	case "blocked":
		e.Status = core.StatusFailed
		e.Error = "Blocked by SureMails' Content Guard."
	default:
		e.Status = core.StatusFailed
		e.Error = firstNonEmpty(sureMailsError(site, r["response"]), "Failed in SureMails.")
	}
	e.skipUnreadable()
	return e
}

// sureMailsError is the last attempt's message of a response column (a
// serialized list of {retry, Message, Connection, timestamp}).
func sureMailsError(site Site, s string) string {
	d := AsDict(unserialize(site, s))
	keys := d.Keys()
	for i := len(keys) - 1; i >= 0; i-- {
		if m := d.Dict(keys[i]).Str("Message"); m != "" {
			return m
		}
	}
	if _, isString := unserialize(site, s).(string); isString {
		return strings.TrimSpace(s)
	}
	return ""
}
