package migration

import "strings"

// apiField is one setting of an API provider as a plugin keeps it: our
// settings key, the plugin's field, and whether the plugin encodes or
// encrypts it (its secret).
type apiField struct {
	ours, theirs string
	secret       bool
}

// apiMailer is how a plugin keeps the settings of one API provider that
// a mailsvc driver serves: the driver and its fields.
type apiMailer struct {
	driver string
	fields []apiField
}

// withKey returns an apiMailer of driver whose API key is the plugin's
// secret field key, followed by the other fields.
func withKey(driver, key string, other ...apiField) apiMailer {
	return apiMailer{driver: driver, fields: append([]apiField{{"api_key", key, true}}, other...)}
}

// fill sets c's driver and settings from m. read returns a field's value
// (decoded when secret) and false when a secret field holds a value that
// cannot be read, which makes the setting missing. A region is kept when
// it is us or eu, in lower case.
func (m apiMailer) fill(c *Candidate, read func(field string, secret bool) (string, bool)) {
	c.Driver = m.driver
	if c.Settings == nil {
		c.Settings = map[string]any{}
	}
	for _, f := range m.fields {
		v, ok := read(f.theirs, f.secret)
		switch {
		case !ok:
			c.Missing = append(c.Missing, f.ours)
		case f.ours == "region":
			if r := strings.ToLower(v); r == "us" || r == "eu" {
				c.Settings["region"] = r
			}
		case v != "":
			c.Settings[f.ours] = v
		}
	}
}

// constants returns, for a plugin whose constants are named
// prefix + MAILER + "_" + FIELD (WPMS_SPARKPOST_REGION,
// FLUENTMAIL_CLOUDFLARE_ACCOUNT_ID), each field's constant and our key.
func (m apiMailer) constants(prefix, mailer string) [][2]string {
	var out [][2]string
	for _, f := range m.fields {
		out = append(out, [2]string{strings.ToUpper(prefix + mailer + "_" + f.theirs), f.ours})
	}
	return out
}

// wpmsAPIMailers are WP Mail SMTP's (and Easy WP SMTP 2's) API mailer
// groups that mailsvc's drivers serve, by mailer slug. WP Mail SMTP keeps
// their keys in plain text.
var wpmsAPIMailers = map[string]apiMailer{
	"sendinblue":   withKey("brevo", "api_key"),
	"sparkpost":    withKey("sparkpost", "api_key", apiField{"region", "region", false}),
	"mailjet":      withKey("mailjet", "api_key", apiField{"api_secret", "secret_key", true}),
	"resend":       withKey("resend", "api_key"),
	"smtp2go":      withKey("smtp2go", "api_key"),
	"mailersend":   withKey("mailersend", "api_key"),
	"elasticemail": withKey("elasticemail", "api_key"),
	"mandrill":     withKey("mandrill", "api_key"),
	"sendlayer":    withKey("sendlayer", "api_key"),
	"smtpcom":      withKey("smtpcom", "api_key", apiField{"channel", "channel", false}),
}

// fluentAPIMailers are FluentSMTP's API providers that mailsvc's drivers
// serve, by provider slug. FluentSMTP encrypts their api_key.
var fluentAPIMailers = map[string]apiMailer{
	"sendinblue":  withKey("brevo", "api_key"),
	"sparkpost":   withKey("sparkpost", "api_key"),
	"smtp2go":     withKey("smtp2go", "api_key"),
	"elasticmail": withKey("elasticemail", "api_key"),
	"cloudflare":  withKey("cloudflare", "api_key", apiField{"account_id", "account_id", false}),
}

// postSMTPAPIMailers are Post SMTP's API transports that mailsvc's
// drivers serve beside those of postSMTPAPIKeys, by transport slug. Post
// SMTP keeps their keys base64-encoded.
var postSMTPAPIMailers = map[string]apiMailer{
	"sendinblue_api":   withKey("brevo", "sendinblue_api_key"),
	"sparkpost_api":    withKey("sparkpost", "sparkpost_api_key"),
	"mailjet_api":      withKey("mailjet", "mailjet_api_key", apiField{"api_secret", "mailjet_secret_key", true}),
	"resend_api":       withKey("resend", "resend_api_key"),
	"smtp2go_api":      withKey("smtp2go", "smtp2go_api_key"),
	"mailersend_api":   withKey("mailersend", "mailersend_api_key"),
	"elasticemail_api": withKey("elasticemail", "elasticemail_api_key"),
	"mandrill_api":     withKey("mandrill", "mandrill_api_key"),
	"mailtrap_api":     withKey("mailtrap", "mailtrap_api_key"),
	"emailit_api":      withKey("emailit", "emailit_api_key"),
}

// sureMailsAPIMailers are SureMails' API connection types that mailsvc's
// drivers serve. SureMails keeps their keys as unpadded base64.
var sureMailsAPIMailers = map[string]apiMailer{
	"BREVO":      withKey("brevo", "api_key"),
	"SPARKPOST":  withKey("sparkpost", "api_key", apiField{"region", "region", false}),
	"MAILJET":    withKey("mailjet", "api_key", apiField{"api_secret", "secret_key", true}),
	"SMTP2GO":    withKey("smtp2go", "api_key"),
	"MAILERSEND": withKey("mailersend", "api_key"),
	"ELASTIC":    withKey("elasticemail", "api_key"),
	"EMAILIT":    withKey("emailit", "api_key"),
}

// elasticMarketingIssue is said of an Elastic Email connection the
// plugin sent as marketing mail.
const elasticMarketingIssue = "The plugin sent through Elastic Email as marketing mail; mailsvc sends through its transactional API."

func init() {
	for slug, m := range wpmsAPIMailers {
		wpmsConstants[slug] = m.constants("WPMS_", slug)
	}
	for slug, m := range fluentAPIMailers {
		fluentConstants[slug] = m.constants("FLUENTMAIL_", slug)
	}
}
