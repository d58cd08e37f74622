package migration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Post SMTP (wpexpertsio/Post-SMTP) keeps one transport and an optional
// SMTP fallback in the flat option postman_options
// (Postman/PostmanOptions.php). Passwords and API keys are base64; the
// OAuth token of Gmail / SMTP-OAuth is in postman_auth_token. Its email
// log is the table post_smtp_logs since 2.5 (Postman/PostmanEmailLogs.php)
// and, before, private posts of type postman_sent_mail with their fields
// in postmeta (Postman/Postman-Email-Log/PostmanEmailLogService.php). The
// plugin's own migration copies old posts into the table and marks each
// copied post with pinged = 1.
const (
	postSMTPOption      = "postman_options"
	postSMTPTokenOption = "postman_auth_token"
	postSMTPO365Option  = "postman_office365_oauth"
	postSMTPProOption   = "post_smtp_pro"
	postSMTPTable       = "post_smtp_logs"
	postSMTPPostType    = "postman_sent_mail"
	// postSMTPTableBase offsets the table's ids so that every legacy post
	// (ordered first, being older) has a smaller position.
	postSMTPTableBase = int64(1) << 40
)

// init registers the source, whose Logs read both log stores.
func init() {
	Register(postSMTPSource{plugin{id: SourcePostSMTP, name: "Post SMTP", logs: postSMTPLogs{},
		option: postSMTPOption, table: postSMTPTable, dir: "post-smtp/"}})
}

// postSMTPSource reads Post SMTP.
type postSMTPSource struct{ plugin }

// Connections converts the transport and the fallback SMTP server.
func (s postSMTPSource) Connections(ctx context.Context, site Site) (*Setup, error) {
	return s.fromOption(ctx, site, "post smtp", func(setup *Setup, opts Dict) (*Setup, error) {
		in := PostSMTPInput{
			Options:  opts,
			Constant: site.Constant,
			Decode:   func(v string) (string, error) { return site.Decrypt(ctx, SchemeBase64, v) },
		}
		var err error
		if in.Token, _, err = setup.readDict(ctx, site, "post smtp", postSMTPTokenOption); err != nil {
			return nil, err
		}
		if in.Office365, _, err = setup.readDict(ctx, site, "post smtp", postSMTPO365Option); err != nil {
			return nil, err
		}
		pro, _, err := setup.readDict(ctx, site, "post smtp", postSMTPProOption)
		if err != nil {
			return nil, err
		}
		for _, ext := range pro.Dict("extensions") {
			if PHPString(ext) == "gmail-oneclick" {
				in.GmailOneClick = true
			}
		}
		out := PostSMTPSetup(in)
		out.Errors = append(setup.Errors, out.Errors...)
		return out, nil
	})
}

// PostSMTPInput is what PostSMTPSetup reads: the options as Site.Option
// decodes them, and the site's constants and base64 decoder.
type PostSMTPInput struct {
	Options   Dict // postman_options
	Token     Dict // postman_auth_token (nil when absent)
	Office365 Dict // postman_office365_oauth (nil when absent)
	// GmailOneClick is set when the Pro extension "gmail-oneclick" (the
	// vendor's OAuth app) is enabled.
	GmailOneClick bool
	Constant      func(name string) (string, bool)
	Decode        func(base64 string) (string, error)
}

// postSMTPAPIKeys maps a Post SMTP API transport to our driver and the
// option holding its base64 API key.
var postSMTPAPIKeys = map[string]struct{ driver, option string }{
	"sendgrid_api": {"sendgrid", "sendgrid_api_key"},
	"mailgun_api":  {"mailgun", "mailgun_api_key"},
	"postmark_api": {"postmark", "postmark_api_key"},
}

// PostSMTPSetup converts Post SMTP's transport (key "primary", the
// default) and its fallback SMTP server (key "fallback").
func PostSMTPSetup(in PostSMTPInput) *Setup {
	o := in.Options
	setup := &Setup{}
	slug := o.Str("transport_type")
	if slug == "" {
		slug = "smtp" // PostmanOptions::DEFAULT_TRANSPORT_TYPE
	}
	primary := postSMTPPrimary(in, slug)
	setup.Candidates = append(setup.Candidates, primary)
	setup.DefaultKey = primary.Key
	if o.Str("fallback_smtp_enabled") == "yes" {
		fb := postSMTPFallback(in)
		setup.Candidates = append(setup.Candidates, fb)
		setup.FallbackKey = fb.Key
	}
	mode := o.Str("run_mode")
	if v, ok := in.constant("POST_SMTP_RUN_MODE"); ok {
		mode = v
	}
	switch mode {
	case "log_only":
		setup.Issues = append(setup.Issues, "Post SMTP was in log-only mode: it logged messages without sending them.")
	case "ignore":
		setup.Issues = append(setup.Issues, "Post SMTP was in ignore mode: it neither sent nor logged messages.")
	}
	if o.Str("mail_log_enabled") == "false" {
		setup.Issues = append(setup.Issues, "Post SMTP's email log was off: its log may be empty or stop early.")
	}
	return setup
}

// constant reads a constant when the input has a reader.
func (in PostSMTPInput) constant(name string) (string, bool) {
	if in.Constant == nil {
		return "", false
	}
	return in.Constant(name)
}

// secret decodes a base64 option; ok is false when it is empty or cannot
// be decoded.
func (in PostSMTPInput) secret(option string) (string, bool) {
	raw := in.Options.Str(option)
	if raw == "" || in.Decode == nil {
		return "", false
	}
	v, err := in.Decode(raw)
	if err != nil || v == "" {
		return "", false
	}
	return v, true
}

// pin applies one of the plugin's constants: when it is defined, the
// plugin used it instead of the stored value, so the stored value is
// dropped, the key is missing and the issue names our constant.
func (in PostSMTPInput) pin(c *Candidate, constant, key string) {
	if _, ok := in.constant(constant); !ok {
		return
	}
	c.Issues = append(c.Issues, PinnedIssue(constant, c.Driver, key))
	delete(c.Settings, key)
	if !contains(c.Missing, key) {
		c.Missing = append(c.Missing, key)
	}
}

// postSMTPPrimary converts the main transport.
func postSMTPPrimary(in PostSMTPInput, slug string) Candidate {
	o := in.Options
	from := strings.TrimSpace(o.Str("sender_email"))
	name := "Post SMTP (" + slug + ")"
	if from != "" {
		name = fmt.Sprintf("Post SMTP %s (%s)", slug, from)
	}
	sender := func(c *Candidate) {
		if from != "" {
			c.Settings["from_email"] = from
		}
		if n := o.Str("sender_name"); n != "" {
			c.Settings["from_name"] = n
		}
	}
	authType := strings.ToLower(o.Str("auth_type"))
	switch {
	case slug == "smtp" && authType == "oauth2":
		return postSMTPOAuthSMTP(in, name)
	case slug == "smtp":
		auth := authType != "" && authType != "none"
		srv := SMTPServer{
			Host:       o.Str("hostname"),
			Port:       o.Int("port", 0),
			Encryption: o.Str("enc_type"),
			Auth:       auth,
			Username:   o.Str("basic_auth_username"),
			FromEmail:  from,
			FromName:   o.Str("sender_name"),
			ForceFrom:  o.Bool("prevent_sender_email_override"),
		}
		if auth {
			srv.Password, _ = in.secret("basic_auth_password")
			srv.PasswordMissing = srv.Password == ""
		}
		c := srv.Candidate("primary", name, slug)
		if auth {
			in.pin(&c, "POST_SMTP_AUTH_USERNAME", smtpKeyUsername)
			in.pin(&c, "POST_SMTP_AUTH_PASSWORD", smtpKeyPassword)
		}
		if o.Bool("prevent_sender_name_override") && !srv.ForceFrom {
			c.Issues = append(c.Issues, "Post SMTP forced only the sender name; our Force from replaces name and address together, so it is left off.")
		}
		return c
	case slug == "gmail_api":
		c := Candidate{Key: "primary", Name: name, SourceSlug: slug, Driver: gmailDriver, Settings: map[string]any{oauthKeyMode: "api"}}
		sender(&c)
		postSMTPOAuthApp(in, &c, "google", in.GmailOneClick)
		return c
	case slug == "office365_api":
		c := Candidate{Key: "primary", Name: name, SourceSlug: slug, Driver: "outlook", Settings: map[string]any{}}
		sender(&c)
		id, _ := in.secret("office365_app_id")
		secret, _ := in.secret("office365_app_password")
		postSMTPClient(&c, id, secret)
		if rt := in.Office365.Str("refresh_token"); rt != "" && id != "" && secret != "" {
			c.Settings[core.KeyRefreshToken] = rt
		}
		return c
	case slug == "aws_ses_api":
		c := Candidate{Key: "primary", Name: name, SourceSlug: slug, Driver: "ses", Settings: map[string]any{"delivery_mode": "api"}}
		sender(&c)
		if r := o.Str("ses_region"); r != "" {
			c.Settings["region"] = r
		}
		if v, ok := in.secret("ses_access_key_id"); ok {
			c.Settings["access_key"] = v
		} else {
			c.Missing = append(c.Missing, "access_key")
		}
		if v, ok := in.secret("ses_secret_access_key"); ok {
			c.Settings["secret"] = v
		} else {
			c.Missing = append(c.Missing, "secret")
		}
		return c
	case slug == "zohomail_api":
		c := Candidate{Key: "primary", Name: name, SourceSlug: slug, Driver: "zoho", Settings: map[string]any{}}
		sender(&c)
		c.Review = true
		c.Issues = append(c.Issues, "Post SMTP Pro's Zoho settings are not public: enter the Zoho client id and secret and authorize the connection.")
		return c
	}
	if api, ok := postSMTPAPIKeys[slug]; ok {
		c := Candidate{Key: "primary", Name: name, SourceSlug: slug, Driver: api.driver, Settings: map[string]any{}}
		sender(&c)
		if v, ok := in.secret(api.option); ok {
			c.Settings["api_key"] = v
		} else {
			c.Missing = append(c.Missing, "api_key")
		}
		switch slug {
		case "mailgun_api":
			if d := o.Str("mailgun_domain_name"); d != "" {
				c.Settings["domain"] = d
			}
			c.Settings["region"] = "us"
			if o.Bool("mailgun_region") {
				c.Settings["region"] = "eu"
			}
		case "sendgrid_api":
			if r := strings.ToLower(o.Str("sendgrid_region")); r != "" && r != "us" && r != "global" {
				c.Review = true
				c.Issues = append(c.Issues, fmt.Sprintf("Post SMTP sent through SendGrid's %s region: set the connection's API base URL to that region's endpoint.", strings.ToUpper(r)))
			}
		}
		in.pin(&c, "POST_SMTP_API_KEY", "api_key")
		return c
	}
	if m, ok := postSMTPAPIMailers[slug]; ok {
		c := Candidate{Key: "primary", Name: name, SourceSlug: slug, Settings: map[string]any{}}
		sender(&c)
		m.fill(&c, func(field string, secret bool) (string, bool) {
			if !secret {
				return o.Str(field), true
			}
			return in.secret(field)
		})
		c.Settings["force_from"] = o.Bool("prevent_sender_email_override")
		in.pin(&c, "POST_SMTP_API_KEY", "api_key")
		return c
	}
	// PHP mail() and the API providers we have no driver for.
	return Candidate{Key: "primary", Name: name, SourceSlug: slug}
}

// postSMTPOAuthSMTP converts SMTP with OAuth 2.0: the vendor follows the
// host (PostmanAuthenticationManagerFactory).
func postSMTPOAuthSMTP(in PostSMTPInput, name string) Candidate {
	o := in.Options
	host := strings.ToLower(o.Str("hostname"))
	from := strings.TrimSpace(o.Str("sender_email"))
	var c Candidate
	switch {
	case strings.Contains(host, "gmail.com") || strings.Contains(host, "google"):
		c = Candidate{Key: "primary", Name: name, SourceSlug: "smtp", Driver: gmailDriver, Settings: map[string]any{
			oauthKeyMode: oauthModeSMTP, oauthKeySMTPHost: gmailSMTPHost, oauthKeySMTPPort: gmailSMTPSubmitTLS,
		}}
		postSMTPOAuthApp(in, &c, "google", false)
	case strings.Contains(host, "office365") || strings.Contains(host, "outlook"):
		c = Candidate{Key: "primary", Name: name, SourceSlug: "smtp", Driver: "outlook", Settings: map[string]any{}}
		postSMTPOAuthApp(in, &c, "microsoft", false)
	default:
		return Candidate{Key: "primary", Name: name, SourceSlug: "smtp", Issues: []string{
			"Post SMTP signed in to " + host + " with OAuth 2.0, which mailsvc does not offer for this server.",
		}}
	}
	if from != "" {
		c.Settings[oauthKeyFromEmail] = from
	}
	if n := o.Str("sender_name"); n != "" {
		c.Settings[oauthKeyFromName] = n
	}
	return c
}

// postSMTPOAuthApp carries the site owner's OAuth client (plain text in
// the options) and the refresh token of postman_auth_token when it was
// issued by that client for this vendor. A vendor one-click app gives
// nothing reusable.
func postSMTPOAuthApp(in PostSMTPInput, c *Candidate, vendor string, oneClick bool) {
	if oneClick {
		c.Issues = append(c.Issues, "Post SMTP used its vendor's one-click Google app, whose authorization cannot be reused: set up your own OAuth client and authorize the connection.")
		return
	}
	id := strings.TrimSpace(in.Options.Str("oauth_client_id"))
	secret := strings.TrimSpace(in.Options.Str("oauth_client_secret"))
	postSMTPClient(c, id, secret)
	v := in.Token.Str("vendor_name")
	rt := in.Token.Str("refresh_token")
	if rt == "" || id == "" || secret == "" || (v != "" && v != vendor) {
		return
	}
	c.Settings[core.KeyRefreshToken] = rt
	if at := in.Token.Str("access_token"); at != "" {
		if exp := in.Token.Int("auth_token_expires", 0); exp > time.Now().Unix() {
			c.Settings[core.KeyAccessToken] = at
			c.Settings[core.KeyTokenExpiry] = time.Unix(exp, 0).UTC().Format(time.RFC3339)
		}
	}
	c.Issues = append(c.Issues, "The refresh token of your own OAuth client was imported. To authorize again later, add this service's redirect URI to that client.")
}

// postSMTPClient sets the OAuth client id and secret, or lists them as
// missing.
func postSMTPClient(c *Candidate, id, secret string) {
	if id != "" {
		c.Settings[oauthKeyClientID] = id
	} else {
		c.Missing = append(c.Missing, oauthKeyClientID)
	}
	if secret != "" {
		c.Settings[oauthKeySecret] = secret
	} else {
		c.Missing = append(c.Missing, oauthKeySecret)
	}
}

// postSMTPFallback converts the fallback SMTP server.
func postSMTPFallback(in PostSMTPInput) Candidate {
	o := in.Options
	auth := o.Str("fallback_smtp_use_auth") != "" && o.Str("fallback_smtp_use_auth") != "none"
	srv := SMTPServer{
		Host:       o.Str("fallback_smtp_hostname"),
		Port:       o.Int("fallback_smtp_port", 0),
		Encryption: o.Str("fallback_smtp_security"),
		Auth:       auth,
		Username:   o.Str("fallback_smtp_username"),
		FromEmail:  o.Str("fallback_from_email"),
		FromName:   o.Str("sender_name"),
	}
	if auth {
		srv.Password, _ = in.secret("fallback_smtp_password")
		srv.PasswordMissing = srv.Password == ""
	}
	name := "Post SMTP fallback"
	if srv.Host != "" {
		name += " (" + srv.Host + ")"
	}
	c := srv.Candidate("fallback", name, "smtp")
	if auth {
		in.pin(&c, "POST_SMTP_FALLBACK_AUTH_USERNAME", smtpKeyUsername)
		in.pin(&c, "POST_SMTP_FALLBACK_AUTH_PASSWORD", smtpKeyPassword)
	}
	return c
}

// postSMTPLogs reads the log table (positions id + postSMTPTableBase) and
// the legacy posts not yet copied into it (positions = post ID).
type postSMTPLogs struct{}

// postSMTPLegacyWhere selects the legacy log posts the plugin has not
// copied into its table.
const postSMTPLegacyWhere = "post_type = ? AND post_status = ? AND pinged <> ?"

// postSMTPLegacyArgs are the arguments of postSMTPLegacyWhere.
var postSMTPLegacyArgs = []any{postSMTPPostType, "private", "1"}

// Available is true when the table exists or legacy log posts remain.
func (postSMTPLogs) Available(ctx context.Context, site Site) (bool, string, error) {
	ok, err := site.HasTable(ctx, postSMTPTable)
	if err != nil || ok {
		return ok, "", err
	}
	n, err := site.CountRows(ctx, "posts", postSMTPLegacyWhere, postSMTPLegacyArgs...)
	if err != nil {
		return false, "", err
	}
	if n > 0 {
		return true, "", nil
	}
	return false, "Post SMTP has no log table and no logged posts.", nil
}

// EstimateLogs adds the table's estimate and the legacy posts.
func (postSMTPLogs) EstimateLogs(ctx context.Context, site Site) (int64, error) {
	var total int64
	ok, err := site.HasTable(ctx, postSMTPTable)
	if err != nil {
		return 0, err
	}
	if ok {
		if total, err = site.EstimateRows(ctx, postSMTPTable); err != nil {
			return 0, err
		}
	}
	n, err := site.CountRows(ctx, "posts", "post_type = ? AND post_status = ?", postSMTPPostType, "private")
	return total + n, err
}

// CountLogs counts both stores.
func (postSMTPLogs) CountLogs(ctx context.Context, site Site, since time.Time) (int64, error) {
	where, args := postSMTPLegacyWhere, postSMTPLegacyArgs
	if !since.IsZero() {
		where += " AND post_date_gmt >= ?"
		args = append(append([]any{}, args...), since.UTC().Format("2006-01-02 15:04:05"))
	}
	total, err := site.CountRows(ctx, "posts", where, args...)
	if err != nil {
		return 0, err
	}
	ok, err := site.HasTable(ctx, postSMTPTable)
	if err != nil || !ok {
		return total, err
	}
	var n int64
	if since.IsZero() {
		n, err = site.CountRows(ctx, postSMTPTable, "")
	} else {
		loc, lerr := site.Location(ctx)
		if lerr != nil {
			return 0, lerr
		}
		n, err = site.CountRows(ctx, postSMTPTable, "`time` >= ?", shiftUnix(since, loc))
	}
	return total + n, err
}

// shiftUnix is the inverse of ShiftedUnix: the current_time('timestamp')
// number of an instant.
func shiftUnix(t time.Time, loc *time.Location) int64 {
	if loc == nil {
		loc = time.UTC
	}
	w := t.In(loc)
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, time.UTC).Unix()
}

// ReadLogs reads the legacy posts first, then the table.
func (postSMTPLogs) ReadLogs(ctx context.Context, site Site, after int64, limit int) ([]LogEntry, error) {
	loc, err := site.Location(ctx)
	if err != nil {
		return nil, err
	}
	var out []LogEntry
	if after < postSMTPTableBase {
		legacy, err := readPostSMTPLegacy(ctx, site, after, limit, loc)
		if err != nil {
			return nil, err
		}
		out = append(out, legacy...)
		if len(out) >= limit {
			return out, nil
		}
		after = postSMTPTableBase
	}
	ok, err := site.HasTable(ctx, postSMTPTable)
	if err != nil || !ok {
		return out, err
	}
	rows, err := site.Rows(ctx, RowQuery{
		Table: postSMTPTable,
		Columns: []string{"id", "success", "from_header", "to_header", "cc_header", "bcc_header", "reply_to_header",
			"transport_uri", "original_to", "original_subject", "original_message", "original_headers", "time"},
		Key: "id", After: after - postSMTPTableBase, Limit: limit - len(out),
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", postSMTPTable, err)
	}
	for _, r := range rows {
		id, _ := strconv.ParseInt(r["id"], 10, 64)
		e := postSMTPEntry(site, r)
		e.Position = postSMTPTableBase + id
		if n, err := strconv.ParseInt(strings.TrimSpace(r["time"]), 10, 64); err == nil && n > 0 {
			e.Time = ShiftedUnix(n, loc)
		}
		e.skipUnreadable()
		out = append(out, e)
	}
	return out, nil
}

// readPostSMTPLegacy reads legacy log posts after the post ID, with
// their postmeta.
func readPostSMTPLegacy(ctx context.Context, site Site, after int64, limit int, loc *time.Location) ([]LogEntry, error) {
	posts, err := site.Rows(ctx, RowQuery{
		Table:   "posts",
		Columns: []string{"ID", "post_title", "post_content", "post_excerpt", "post_date", "post_date_gmt"},
		Key:     "ID", After: after, Limit: limit,
		Where: postSMTPLegacyWhere, Args: postSMTPLegacyArgs,
	})
	if err != nil {
		return nil, fmt.Errorf("read %s posts: %w", postSMTPPostType, err)
	}
	if len(posts) == 0 {
		return nil, nil
	}
	ids := make([]any, 0, len(posts))
	marks := make([]string, 0, len(posts))
	for _, p := range posts {
		ids = append(ids, p["ID"])
		marks = append(marks, "?")
	}
	meta := map[string]Row{}
	const metaPage = 2000
	var afterMeta int64
	for {
		rows, err := site.Rows(ctx, RowQuery{
			Table:   "postmeta",
			Columns: []string{"meta_id", "post_id", "meta_key", "meta_value"},
			Key:     "meta_id", After: afterMeta, Limit: metaPage,
			Where: "post_id IN (" + strings.Join(marks, ",") + ")", Args: ids,
		})
		if err != nil {
			return nil, fmt.Errorf("read %s postmeta: %w", postSMTPPostType, err)
		}
		for _, m := range rows {
			r := meta[m["post_id"]]
			if r == nil {
				r = Row{}
				meta[m["post_id"]] = r
			}
			if _, seen := r[m["meta_key"]]; !seen {
				r[m["meta_key"]] = m["meta_value"]
			}
			afterMeta, _ = strconv.ParseInt(m["meta_id"], 10, 64)
		}
		if len(rows) < metaPage {
			break
		}
	}
	out := make([]LogEntry, 0, len(posts))
	for _, p := range posts {
		r := meta[p["ID"]]
		if r == nil {
			r = Row{}
		}
		if r["original_subject"] == "" {
			r["original_subject"] = p["post_title"]
		}
		if _, ok := r["original_message"]; !ok {
			r["original_message"] = p["post_content"]
		}
		// The post's meta success is "1", "" (failed) or a warning; the
		// excerpt holds the status message.
		if r["success"] != "1" {
			r["success"] = firstNonEmpty(p["post_excerpt"], "0")
		}
		e := postSMTPEntry(site, r)
		e.Position, _ = strconv.ParseInt(p["ID"], 10, 64)
		if t, ok := LocalTime(p["post_date_gmt"], time.UTC); ok {
			e.Time = t
		} else {
			e.Time, _ = LocalTime(p["post_date"], loc)
		}
		e.skipUnreadable()
		out = append(out, e)
	}
	return out, nil
}

// postSMTPEntry converts one log row (table columns, or a legacy post's
// meta under the same names) without its position and time.
func postSMTPEntry(site Site, r Row) LogEntry {
	to := r["to_header"]
	if strings.TrimSpace(to) == "" {
		to = r["original_to"]
	}
	w := WPMail{
		From: r["from_header"], To: to, Cc: r["cc_header"], Bcc: r["bcc_header"], ReplyTo: r["reply_to_header"],
		HeaderLines: HeaderLines(unserialize(site, r["original_headers"])),
		Subject:     r["original_subject"],
		Body:        r["original_message"],
	}
	e := LogEntry{Message: w.Message(), Provider: postSMTPProvider(r["transport_uri"])}
	status := strings.TrimSpace(r["success"])
	switch {
	case status == "1" || strings.HasPrefix(status, "Sent ( ** Fallback ** )"):
		e.Status = core.StatusDelivered
	case status == "In Queue":
		e.Status = core.StatusQueued
	default:
		e.Status = core.StatusFailed
		e.Error = status
		if status == "" || status == "0" {
			e.Error = "Failed in Post SMTP."
		}
	}
	return e
}

// postSMTPProvider names the transport of a transport URI
// ("smtp:tls:login://host:587" → "smtp", "https://api.sendgrid.com:443"
// → "api.sendgrid.com").
func postSMTPProvider(uri string) string {
	uri = strings.TrimSpace(uri)
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return ""
	}
	if strings.HasPrefix(scheme, "smtp") {
		return "smtp"
	}
	host, _, _ := strings.Cut(rest, "/")
	host, _, _ = strings.Cut(host, ":")
	return host
}
