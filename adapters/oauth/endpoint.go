package oauth

import (
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/endpoints"
	"golang.org/x/oauth2/microsoft"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
)

// Settings keys of the provider-specific parts of an OAuth app.
const (
	// KeyTenantID is the Microsoft Entra tenant: "common" (the default),
	// "organizations", "consumers", a tenant GUID or a domain.
	KeyTenantID = "tenant_id"
	// KeyDataCenter is the Zoho data centre of the account (see
	// ZohoAccountsHosts); "com" by default.
	KeyDataCenter = "data_center"
)

// Paths of the authorization and token endpoints on their servers; an
// oauth_base_url keeps them.
const (
	googleAuthPath  = "/o/oauth2/v2/auth"
	googleTokenPath = "/token"
	googleAuthBase  = "https://accounts.google.com"
	zohoAuthPath    = "/oauth/v2/auth"
	zohoTokenPath   = "/oauth/v2/token"
)

// ZohoAccountsHosts maps each Zoho data centre to its accounts server.
// Canada's lives under zohocloud.ca, not zoho.ca.
var ZohoAccountsHosts = map[string]string{
	"com":    "https://accounts.zoho.com",
	"eu":     "https://accounts.zoho.eu",
	"in":     "https://accounts.zoho.in",
	"com.au": "https://accounts.zoho.com.au",
	"jp":     "https://accounts.zoho.jp",
	"ca":     "https://accounts.zohocloud.ca",
	"sa":     "https://accounts.zoho.sa",
}

// tenantPattern is what a tenant id may look like in a URL path: a name,
// a GUID or a domain, of up to 254 characters (the length checked apart:
// a counted repetition compiles into a program of one step per
// character, kept for the process's life).
var tenantPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.-]*$`)

// Endpoint returns the authorization and token endpoints of provider for
// a connection's settings (oauth_base_url, tenant_id, data_center). The
// client is authenticated with its id and secret in the form body
// (AuthStyleInParams), which all three accept. A setting that cannot name
// an endpoint is a validation error naming the field.
func Endpoint(provider string, s core.Settings) (oauth2.Endpoint, error) {
	base := strings.TrimRight(strings.TrimSpace(s.String(oauthdriver.KeyOAuthBaseURL)), "/")
	if base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return oauth2.Endpoint{}, core.InvalidField(oauthdriver.KeyOAuthBaseURL, "Must be an http or https URL with a host.")
		}
	}
	var ep oauth2.Endpoint
	switch provider {
	case core.ProviderGoogle:
		ep = oauth2.Endpoint{AuthURL: googleAuthBase + googleAuthPath, TokenURL: endpoints.Google.TokenURL}
		if base != "" {
			ep = oauth2.Endpoint{AuthURL: base + googleAuthPath, TokenURL: base + googleTokenPath}
		}
	case core.ProviderMicrosoft:
		tenant := strings.TrimSpace(s.String(KeyTenantID))
		if tenant == "" {
			tenant = "common"
		}
		if len(tenant) > 254 || !tenantPattern.MatchString(tenant) {
			return oauth2.Endpoint{}, core.InvalidField(KeyTenantID, "Must be common, organizations, consumers, a tenant ID or a domain.")
		}
		ep = microsoft.AzureADEndpoint(tenant)
		ep.DeviceAuthURL = ""
		if base != "" {
			ep = oauth2.Endpoint{
				AuthURL:  base + "/" + tenant + "/oauth2/v2.0/authorize",
				TokenURL: base + "/" + tenant + "/oauth2/v2.0/token",
			}
		}
	case core.ProviderZoho:
		dc := strings.TrimSpace(s.String(KeyDataCenter))
		if dc == "" {
			dc = "com"
		}
		host, ok := ZohoAccountsHosts[dc]
		if !ok {
			return oauth2.Endpoint{}, core.InvalidField(KeyDataCenter, "Must be one of: com, eu, in, com.au, jp, ca, sa.")
		}
		if base != "" {
			host = base
		}
		ep = oauth2.Endpoint{AuthURL: host + zohoAuthPath, TokenURL: host + zohoTokenPath}
	default:
		return oauth2.Endpoint{}, core.Errorf(core.EINVALID, "unknown OAuth provider %q", provider)
	}
	ep.AuthStyle = oauth2.AuthStyleInParams
	return ep, nil
}
