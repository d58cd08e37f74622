package domaincheck

import (
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Provider is a mail provider whose DNS records the check knows.
type Provider struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
	// SPFIncludes are the domains the provider's mail is authorised by in
	// SPF; any one of them in the domain's SPF (directly or through
	// nested includes) satisfies it. The first is the one to advise.
	SPFIncludes []string `json:"spf_includes"`
	// SPFOptional is true when the provider's mail does not need the
	// domain's SPF by default (its envelope sender is the provider's own
	// domain), so a missing include is only a warning.
	SPFOptional bool `json:"-"`
	// DKIMSelectors are the selectors the provider signs with; any one
	// published counts. Empty when they are per domain (DKIMNote says
	// where to find them).
	DKIMSelectors []string `json:"dkim_selectors"`
	DKIMNote      string   `json:"-"`
}

// Provider slugs.
const (
	ProviderSES       = "ses"
	ProviderSendGrid  = "sendgrid"
	ProviderMailgun   = "mailgun"
	ProviderPostmark  = "postmark"
	ProviderGoogle    = "google"
	ProviderMicrosoft = "microsoft"
	ProviderZoho      = "zoho"
)

// Providers are the providers the check knows, in report order.
var Providers = []Provider{
	{Slug: ProviderSES, Name: "Amazon SES", SPFIncludes: []string{"amazonses.com"}, SPFOptional: true,
		DKIMNote: "SES signs with three per-domain Easy DKIM selectors (the identity's tokens)."},
	{Slug: ProviderSendGrid, Name: "SendGrid", SPFIncludes: []string{"sendgrid.net"}, DKIMSelectors: []string{"s1", "s2"}},
	{Slug: ProviderMailgun, Name: "Mailgun", SPFIncludes: []string{"mailgun.org", "eu.mailgun.org"},
		DKIMSelectors: []string{"mx", "k1", "pic", "smtp", "krs", "mailo"}},
	{Slug: ProviderPostmark, Name: "Postmark", SPFIncludes: []string{"spf.mtasv.net"}, SPFOptional: true,
		DKIMNote: "Postmark's selector is per domain (a date followed by pm, e.g. 20240101000000pm): see the domain's DNS settings in Postmark."},
	{Slug: ProviderGoogle, Name: "Google Workspace / Gmail", SPFIncludes: []string{"_spf.google.com"}, DKIMSelectors: []string{"google"}},
	{Slug: ProviderMicrosoft, Name: "Microsoft 365 / Outlook", SPFIncludes: []string{"spf.protection.outlook.com"}, DKIMSelectors: []string{"selector1", "selector2"}},
	{Slug: ProviderZoho, Name: "Zoho Mail", SPFIncludes: []string{"zoho.com", "zoho.eu", "zoho.in", "zoho.com.au", "zoho.jp", "zohocloud.ca", "zoho.sa", "zoho.com.cn"},
		DKIMSelectors: []string{"zmail"}},
}

// LookupProvider returns the provider with slug.
func LookupProvider(slug string) (Provider, bool) {
	for _, p := range Providers {
		if p.Slug == slug {
			return p, true
		}
	}
	return Provider{}, false
}

// driverProviders maps a driver slug to its provider.
var driverProviders = map[string]string{
	"ses":      ProviderSES,
	"sendgrid": ProviderSendGrid,
	"mailgun":  ProviderMailgun,
	"postmark": ProviderPostmark,
	"gmail":    ProviderGoogle,
	"outlook":  ProviderMicrosoft,
	"zoho":     ProviderZoho,
}

// smtpHosts maps the SMTP host suffixes of the providers to them, for
// connections of the smtp driver.
var smtpHosts = []struct{ suffix, provider string }{
	{".amazonaws.com", ProviderSES},
	{"smtp.sendgrid.net", ProviderSendGrid},
	{".mailgun.org", ProviderMailgun},
	{".postmarkapp.com", ProviderPostmark},
	{"smtp.gmail.com", ProviderGoogle},
	{"smtp-relay.gmail.com", ProviderGoogle},
	{"smtp.googlemail.com", ProviderGoogle},
	{"smtp.office365.com", ProviderMicrosoft},
	{"smtp-mail.outlook.com", ProviderMicrosoft},
	{".protection.outlook.com", ProviderMicrosoft},
	{"smtp.zoho.", ProviderZoho},
	{"smtppro.zoho.", ProviderZoho},
}

// ProviderOf returns the provider a connection sends through: its driver's,
// or for the smtp driver the provider of its host.
func ProviderOf(c *core.Connection) (Provider, bool) {
	if slug, ok := driverProviders[c.Driver]; ok {
		return LookupProvider(slug)
	}
	if c.Driver != "smtp" {
		return Provider{}, false
	}
	host := strings.ToLower(strings.TrimSuffix(c.Settings.String("host"), "."))
	for _, h := range smtpHosts {
		if strings.HasSuffix(host, h.suffix) || strings.HasPrefix(host, h.suffix) || host == strings.TrimPrefix(h.suffix, ".") {
			return LookupProvider(h.provider)
		}
	}
	return Provider{}, false
}
