package migration

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mailsvc/mailsvc/core"
)

// WP SMTP by yehudah, now Solid Mail by SolidWP (plugin folder wp-smtp).
// Up to 1.x it kept one SMTP server in wp_smtp_options (wp-smtp.php), the
// username and password base64 since 1.2.4 and plain text before, which
// the plugin itself cannot tell apart. Solid Mail 2.x keeps SMTP
// providers in solid_smtp_providers (src/Mail/Repository/
// ProvidersRepository.php, src/Mail/Connectors/ConnectorSMTP.php) with
// the password in plain text; its migration creates the provider
// legacy_smtp_id from the old option. Both log every wp_mail() call to
// the table wpsmtp_logs (inc/Logger/Table.php, Process.php): the row is
// written before sending and gets the error text when sending fails.
const (
	wpSMTPLegacyOption   = "wp_smtp_options"
	wpSMTPProvidersOpt   = "solid_smtp_providers"
	wpSMTPMigrationError = "solid_mail_migration_error"
	wpSMTPTable          = "wpsmtp_logs"
	wpSMTPLegacyKey      = "legacy_smtp_id"
)

// wpSMTPHosts are the submission servers of Solid Mail's named providers,
// for a provider saved without a host.
var wpSMTPHosts = map[string]string{
	"mailgun":  "smtp.mailgun.org",
	"sendgrid": "smtp.sendgrid.net",
	"brevo":    "smtp-relay.brevo.com",
}

// init registers the source: it detects either option, the log table and
// the active plugin.
func init() {
	Register(wpSMTPSource{plugin{id: SourceWPSMTP, name: "WP SMTP / Solid Mail", logs: wpSMTPLogs,
		option: wpSMTPProvidersOpt, legacy: wpSMTPLegacyOption, table: wpSMTPTable, dir: "wp-smtp/"}})
}

// wpSMTPSource reads WP SMTP and Solid Mail.
type wpSMTPSource struct{ plugin }

// Connections converts Solid Mail's providers, or the legacy server when
// Solid Mail never migrated it.
func (wpSMTPSource) Connections(ctx context.Context, site Site) (*Setup, error) {
	setup := &Setup{}
	providers, _, err := setup.readDict(ctx, site, "wp smtp", wpSMTPProvidersOpt)
	if err != nil {
		return nil, err
	}
	legacy, _, err := setup.readDict(ctx, site, "wp smtp", wpSMTPLegacyOption)
	if err != nil {
		return nil, err
	}
	_, migrationFailed, err := site.Option(ctx, wpSMTPMigrationError)
	if err != nil && !isUnreadable(err) {
		return nil, fmt.Errorf("wp smtp: %w", err)
	}
	out := WPSMTPSetup(providers, legacy, migrationFailed)
	out.Errors = append(setup.Errors, out.Errors...)
	return out, nil
}

// WPSMTPSetup converts solid_smtp_providers (may be nil) and, when it
// has no provider, wp_smtp_options (may be nil). migrationFailed tells
// that Solid Mail could not verify the legacy credentials and copied them
// unchanged (the option solid_mail_migration_error exists).
func WPSMTPSetup(providers, legacy Dict, migrationFailed bool) *Setup {
	setup := &Setup{}
	ids := providers.Keys()
	for _, id := range ids {
		p := providers.Dict(id)
		if p == nil {
			continue
		}
		c := WPSMTPProviderCandidate(id, p)
		if id == wpSMTPLegacyKey && migrationFailed {
			c.Review = true
			c.Issues = append(c.Issues, "Solid Mail could not verify the credentials it migrated from WP SMTP and kept them as stored (possibly base64): check the username and password.")
		}
		setup.Candidates = append(setup.Candidates, c)
		if p.Bool("is_active") {
			setup.DefaultKey = c.Key
		}
	}
	if len(setup.Candidates) == 0 && legacy != nil {
		c := WPSMTPLegacyCandidate(legacy)
		setup.addDefault(c)
	}
	if setup.DefaultKey == "" && len(setup.Candidates) > 0 {
		setup.DefaultKey = setup.Candidates[0].Key
	}
	if legacy.Str("disable_logs") == "yes" {
		setup.Issues = append(setup.Issues, "WP SMTP's email log was off: its log may be empty or stop early.")
	}
	sort.SliceStable(setup.Candidates, func(i, j int) bool {
		return setup.Candidates[i].Key == setup.DefaultKey && setup.Candidates[j].Key != setup.DefaultKey
	})
	return setup
}

// WPSMTPProviderCandidate converts one Solid Mail provider: every one is
// SMTP relay credentials (SendGrid's user "apikey" and key as password,
// SES SMTP credentials), so each becomes our smtp driver.
func WPSMTPProviderCandidate(id string, p Dict) Candidate {
	kind := firstNonEmpty(p.Str("name"), "other")
	srv := SMTPServer{
		Host:       p.Str("smtp_host"),
		Port:       p.Int("smtp_port", 0),
		Encryption: p.Str("smtp_secure"),
		Auth:       p.Str("smtp_auth") == "yes",
		Username:   p.Str("smtp_username"),
		Password:   p.Str("smtp_password"),
		FromEmail:  p.Str("from_email"),
		FromName:   p.Str("from_name"),
	}
	if srv.Auth && srv.Password == "" {
		srv.PasswordMissing = true
	}
	if srv.Host == "" {
		srv.Host = wpSMTPHosts[kind]
	}
	name := "Solid Mail " + kind
	if srv.FromEmail != "" {
		name += " (" + srv.FromEmail + ")"
	}
	c := srv.Candidate(id, name, kind)
	if srv.Host == "" {
		c.Review = true
		c.Issues = append(c.Issues, "Solid Mail has no SMTP host for this provider: enter it (for Amazon SES, email-smtp.<region>.amazonaws.com).")
	}
	return c
}

// WPSMTPLegacyCandidate converts wp_smtp_options. Its key is the id Solid
// Mail gives the migrated server, so importing before and after the
// plugin's upgrade updates one connection.
func WPSMTPLegacyCandidate(o Dict) Candidate {
	srv := SMTPServer{
		Host:       o.Str("host"),
		Port:       o.Int("port", 0),
		Encryption: o.Str("smtpsecure"),
		Auth:       o.Str("smtpauth") == "yes",
		FromEmail:  o.Str("from"),
		FromName:   o.Str("fromname"),
	}
	var issues []string
	review := false
	if srv.Auth {
		user, userB64 := wpSMTPCredential(o.Str("username"))
		pass, passB64 := wpSMTPCredential(o.Str("password"))
		srv.Username, srv.Password = user, pass
		srv.PasswordMissing = pass == ""
		switch {
		case userB64 && passB64:
			issues = append(issues, "WP SMTP stored the username and password in base64 (version 1.2.4 and later); they were decoded. Send a test email to confirm them.")
		case !userB64 && !passB64:
			issues = append(issues, "WP SMTP stored the username and password as typed (before version 1.2.4). Send a test email to confirm them.")
		default:
			review = true
			issues = append(issues, "WP SMTP's username and password are not stored the same way (one looks base64, the other not): check them.")
		}
	}
	name := "WP SMTP"
	if srv.Host != "" {
		name += " (" + srv.Host + ")"
	}
	c := srv.Candidate(wpSMTPLegacyKey, name, "smtp")
	c.Issues = append(c.Issues, issues...)
	c.Review = review
	return c
}

// wpSMTPCredential reads a legacy credential: base64 (1.2.4+) when the
// value is canonical padded base64 of printable UTF-8 text, else the
// value as typed (≤ 1.2.3).
func wpSMTPCredential(v string) (string, bool) {
	if v == "" || len(v)%4 != 0 {
		return v, false
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) == 0 || base64.StdEncoding.EncodeToString(b) != v || !utf8.Valid(b) {
		return v, false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) {
			return v, false
		}
	}
	return string(b), true
}

// wpSMTPLogs reads wpsmtp_logs. timestamp is a TIMESTAMP DEFAULT
// CURRENT_TIMESTAMP column: a real instant, read as Unix seconds.
var wpSMTPLogs = logTable{table: wpSMTPTable, missing: "WP SMTP's log table does not exist.",
	since: "`timestamp` >= FROM_UNIXTIME(?)", clock: unixTime, key: "mail_id",
	columns:     []string{"mail_id", "to", "subject", "message", "headers", "error"},
	unixColumns: []string{"timestamp"},
	entry:       func(site Site, r Row, _ *time.Location) LogEntry { return wpSMTPEntry(site, r) }}

// wpSMTPEntry converts one row: to and headers are strings, or
// serialized arrays when wp_mail() was given arrays.
func wpSMTPEntry(site Site, r Row) LogEntry {
	pos, _ := strconv.ParseInt(r["mail_id"], 10, 64)
	to := unserialize(site, r["to"])
	var toList string
	switch t := to.(type) {
	case string:
		toList = t
	default:
		d := AsDict(t)
		parts := make([]string, 0, len(d))
		for _, k := range d.Keys() {
			parts = append(parts, d.Str(k))
		}
		toList = strings.Join(parts, ",")
	}
	w := WPMail{To: toList, HeaderLines: HeaderLines(unserialize(site, r["headers"])), Subject: r["subject"], Body: r["message"]}
	e := LogEntry{Position: pos, Message: w.Message(), Status: core.StatusDelivered}
	if msg := strings.TrimSpace(r["error"]); msg != "" {
		e.Status, e.Error = core.StatusFailed, msg
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(r["timestamp"]), 10, 64); err == nil && n > 0 {
		e.Time = time.Unix(n, 0).UTC()
	}
	e.skipUnreadable()
	return e
}
