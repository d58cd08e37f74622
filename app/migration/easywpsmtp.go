package migration

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Easy WP SMTP comes in two incompatible generations, both in the plugin
// folder easy-wp-smtp:
//
//   - v1.x (Arsenal21/easy-wp-smtp, easy-wp-smtp.php): one SMTP server in
//     swpsmtp_options.smtp_settings. The password is AES-256-CTR keyed by
//     SHA-256 of the option swpsmtp_enc_key when swpsmtp_pass_encrypted is
//     set (inc/Cryptor.php), else base64, or as typed on very old sites.
//     No constants, no email log.
//   - v2.x (Awesome Motive's rewrite on WP Mail SMTP's code): the option
//     easy_wp_smtp with WP Mail SMTP's groups, the SMTP password sealed
//     with libsodium secretbox (key EASY_WP_SMTP_CRYPTO_KEY or the option
//     easy_wp_smtp_mail_key), constants EASY_WP_SMTP_* active when
//     EASY_WP_SMTP_ON is true, and Pro's log table easywpsmtp_emails_log
//     in WP Mail SMTP Pro's layout.
//
// v2 converts the v1 option on first load, so when both exist v2 wins.
// Both generations convert to the key "primary": importing before and
// after the plugin's upgrade updates one connection.
const (
	easyV1Option     = "swpsmtp_options"
	easyV1Encrypted  = "swpsmtp_pass_encrypted"
	easyV2Option     = "easy_wp_smtp"
	easyLogTable     = "easywpsmtp_emails_log"
	easyConstOn      = "EASY_WP_SMTP_ON"
	easyConstPrefix  = "EASY_WP_SMTP_"
	easyConstPrefix2 = "EasyWPSMTP_" // one intermediate 2.x build's spelling
)

// init registers the source: it detects either generation's option, Pro's
// log table (WP Mail SMTP Pro's layout, which its Logs read) and the
// active plugin (free or Pro).
func init() {
	Register(easyWPSMTPSource{plugin{id: SourceEasyWPSMTP, name: "Easy WP SMTP",
		logs:   WPMailSMTPLogs(easyLogTable, "Easy WP SMTP"),
		option: easyV2Option, legacy: easyV1Option, table: easyLogTable, dir: "easy-wp-smtp"}})
}

// easyWPSMTPSource reads Easy WP SMTP v1 and v2.
type easyWPSMTPSource struct{ plugin }

// Connections converts v2's option when it exists, else v1's.
func (easyWPSMTPSource) Connections(ctx context.Context, site Site) (*Setup, error) {
	setup := &Setup{}
	v2, found2, err := setup.readDict(ctx, site, "easy wp smtp", easyV2Option)
	if err != nil {
		return nil, err
	}
	v1, found1, err := setup.readDict(ctx, site, "easy wp smtp", easyV1Option)
	if err != nil {
		return nil, err
	}
	switch {
	case found2 && v2 != nil:
		c := easyV2Candidate(ctx, site, v2)
		setup.addDefault(c)
		if found1 {
			setup.Issues = append(setup.Issues, "Easy WP SMTP 1.x settings are still stored; the 2.x settings, which replaced them, were used.")
		}
	case found1 && v1 != nil:
		encrypted := false
		if v, ok, err := site.Option(ctx, easyV1Encrypted); err != nil && !errors.Is(err, ErrUnreadable) {
			return nil, fmt.Errorf("easy wp smtp: read option %s: %w", easyV1Encrypted, err)
		} else if ok {
			encrypted = PHPBool(v)
		}
		c := EasyWPSMTPv1Candidate(v1, encrypted, func(v string) (string, error) {
			return site.Decrypt(ctx, SchemeEasyWPSMTPv1, v)
		})
		setup.addDefault(c)
	}
	return setup, nil
}

// EasyWPSMTPv1Candidate converts swpsmtp_options. encrypted is the option
// swpsmtp_pass_encrypted; decrypt opens the AES-CTR password
// (Site.Decrypt with SchemeEasyWPSMTPv1).
func EasyWPSMTPv1Candidate(o Dict, encrypted bool, decrypt func(string) (string, error)) Candidate {
	s := o.Dict("smtp_settings")
	srv := SMTPServer{
		Host:       s.Str("host"),
		Port:       s.Int("port", 0),
		Encryption: s.Str("type_encryption"),
		Auth:       s.Str("autentication") == "yes", // sic, the plugin's key
		Username:   s.Str("username"),
		FromEmail:  o.Str("from_email_field"),
		FromName:   o.Str("from_name_field"),
		// v1 always replaces the sender address with its From email.
		ForceFrom:          o.Str("from_email_field") != "",
		InsecureSkipVerify: PHPBool(s["insecure_ssl"]),
	}
	var issues []string
	if srv.Auth {
		raw := s.Str("password")
		switch {
		case raw == "":
			srv.PasswordMissing = true
		case encrypted:
			pw, err := decrypt(raw)
			if err != nil {
				srv.PasswordMissing = true
				issues = append(issues, "The SMTP password is encrypted with a key this site no longer has (the option swpsmtp_enc_key): enter it again.")
			} else {
				srv.Password = pw
			}
		default:
			srv.Password = easyV1PlainPassword(raw)
		}
	}
	if !PHPBool(o["force_from_name_replace"]) && srv.ForceFrom {
		issues = append(issues, "Easy WP SMTP replaced only the sender address and kept the message's sender name; our Force from replaces both.")
	}
	if o.Str("reply_to_email") != "" || o.Str("bcc_email") != "" {
		issues = append(issues, "Easy WP SMTP added a Reply-To or BCC address to every message; mailsvc does not, so it is not carried over.")
	}
	name := "Easy WP SMTP"
	if srv.Host != "" {
		name += " (" + srv.Host + ")"
	}
	c := srv.Candidate("primary", name, "smtp")
	c.Issues = append(c.Issues, issues...)
	return c
}

// easyV1PlainPassword reads a password Easy WP SMTP v1 stored without
// encryption: base64 when the value round-trips through base64 and
// decodes to text, else as typed; then PHP's stripslashes, as the plugin
// does (EasyWPSMTP::get_password).
func easyV1PlainPassword(raw string) string {
	pw := raw
	if b, err := base64.StdEncoding.DecodeString(raw); err == nil && base64.StdEncoding.EncodeToString(b) == raw && utf8.Valid(b) {
		pw = string(b)
	}
	return stripSlashes(pw)
}

// stripSlashes is PHP's stripslashes: a backslash escapes the next
// character, "\\" becomes "\" and "\0" a NUL byte.
func stripSlashes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) {
			i++
			if s[i] == '0' {
				b.WriteByte(0)
			} else {
				b.WriteByte(s[i])
			}
		}
	}
	return b.String()
}

// easyV2Candidate converts the v2 option with WP Mail SMTP's converter
// (the same groups and keys), seen through easySite: the secretbox key and
// the constants are Easy WP SMTP's own.
func easyV2Candidate(ctx context.Context, site Site, opt Dict) Candidate {
	es := &easySite{Site: site}
	constOn := false
	if v, ok := site.Constant(easyConstOn); ok && PHPBool(v) {
		constOn = true
	}
	slug := firstNonEmpty(opt.Dict("mail").Str("mailer"), "mail")
	c := wpmsCandidate(ctx, es, "primary", "Easy WP SMTP "+slug, opt, constOn)
	for i, issue := range c.Issues {
		c.Issues[i] = es.rename(issue)
	}
	if slug == "gmail" && opt.Dict("gmail").Dict("relay_credentials") != nil {
		delete(c.Settings, "refresh_token")
		delete(c.Settings, "access_token")
		delete(c.Settings, "expires_at")
		c.Issues = append(c.Issues, "Easy WP SMTP sent Gmail through its vendor's relay, whose authorization cannot be reused: set up your own Google OAuth client and authorize the connection.")
	}
	return c
}

// easySite shows a site to WP Mail SMTP's converter as if Easy WP SMTP's
// secrets and constants were WP Mail SMTP's: the secretbox scheme becomes
// Easy WP SMTP's, and a WPMS_* constant is looked up as EASY_WP_SMTP_*
// (or the intermediate EasyWPSMTP_* spelling). rename puts the real
// names back into the converter's messages.
type easySite struct {
	Site
	names map[string]string // WPMS_* name → Easy WP SMTP's defined name
}

// Decrypt opens WP Mail SMTP-scheme values with Easy WP SMTP's key.
func (s *easySite) Decrypt(ctx context.Context, scheme Scheme, value string) (string, error) {
	if scheme == SchemeWPMailSMTP {
		scheme = SchemeEasyWPSMTP
	}
	return s.Site.Decrypt(ctx, scheme, value)
}

// Constant maps WPMS_<X> to EASY_WP_SMTP_<X>, then EasyWPSMTP_<X>.
func (s *easySite) Constant(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "WPMS_")
	if !ok {
		return s.Site.Constant(name)
	}
	for _, prefix := range []string{easyConstPrefix, easyConstPrefix2} {
		if v, ok := s.Site.Constant(prefix + rest); ok {
			if s.names == nil {
				s.names = map[string]string{}
			}
			s.names[name] = prefix + rest
			return v, true
		}
	}
	return "", false
}

// rename replaces WP Mail SMTP's constant and option names in a message
// by Easy WP SMTP's.
func (s *easySite) rename(msg string) string {
	for from, to := range s.names {
		msg = strings.ReplaceAll(msg, from, to)
	}
	msg = strings.ReplaceAll(msg, "wp_mail_smtp_mail_key", "easy_wp_smtp_mail_key")
	return strings.ReplaceAll(msg, "WPMS_CRYPTO_KEY", "EASY_WP_SMTP_CRYPTO_KEY")
}
