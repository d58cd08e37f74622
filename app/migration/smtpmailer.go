package migration

import (
	"context"
)

// SMTP Mailer (naa986/smtp-mailer, smtp-mailer/main.php) keeps one SMTP
// connection in the flat option smtp_mailer_options. The password is
// base64; there are no wp-config constants and no email log (only a paid
// add-on logs).
const smtpMailerOption = "smtp_mailer_options"

// init registers the source; SMTP Mailer keeps no log in the database.
func init() {
	Register(smtpMailerSource{plugin{id: SourceSMTPMailer, name: "SMTP Mailer", option: smtpMailerOption, dir: "smtp-mailer/"}})
}

// smtpMailerSource reads SMTP Mailer.
type smtpMailerSource struct{ plugin }

func (s smtpMailerSource) Connections(ctx context.Context, site Site) (*Setup, error) {
	return s.fromOption(ctx, site, "smtp mailer", func(setup *Setup, opts Dict) (*Setup, error) {
		setup.addDefault(SMTPMailerCandidate(opts, func(v string) (string, error) {
			return site.Decrypt(ctx, SchemeBase64, v)
		}))
		return setup, nil
	})
}

// SMTPMailerCandidate converts the smtp_mailer_options array. decodeB64
// opens the base64 password (Site.Decrypt with SchemeBase64).
func SMTPMailerCandidate(opts Dict, decodeB64 func(string) (string, error)) Candidate {
	// The plugin sends with SMTPAuth only when smtp_auth is the string
	// "true", and forces the sender address with force_from_email or
	// force_from_address (the latter also forces the name).
	srv := SMTPServer{
		Host:               opts.Str("smtp_host"),
		Port:               opts.Int("smtp_port", 0),
		Encryption:         opts.Str("type_of_encryption"),
		Auth:               opts.Str("smtp_auth") == "true",
		Username:           opts.Str("smtp_username"),
		FromEmail:          opts.Str("from_email"),
		FromName:           opts.Str("from_name"),
		ForceFrom:          opts.Bool("force_from_email") || opts.Bool("force_from_address"),
		InsecureSkipVerify: opts.Bool("disable_ssl_verification"),
	}
	var issues []string
	if srv.Auth {
		if raw := opts.Str("smtp_password"); raw != "" {
			pw, err := decodeB64(raw)
			if err != nil {
				srv.PasswordMissing = true
			} else {
				srv.Password = pw
			}
		} else {
			srv.PasswordMissing = true
		}
	}
	if opts.Bool("force_from_name") && !srv.ForceFrom {
		issues = append(issues, "SMTP Mailer forced only the sender name; our Force from replaces name and address together, so it is left off.")
	}
	name := "SMTP Mailer"
	if srv.Host != "" {
		name = "SMTP Mailer (" + srv.Host + ")"
	}
	c := srv.Candidate("primary", name, "smtp")
	c.Issues = append(c.Issues, issues...)
	if srv.Host == "" {
		c.Review = true
		c.Issues = append(c.Issues, "SMTP Mailer has no SMTP host saved.")
	}
	return c
}
