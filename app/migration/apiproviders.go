package migration

import "strings"

// apiImport is how a plugin keeps the settings of an API provider that
// has a driver of ours: the driver and, for each of the plugin's fields,
// our settings key.
type apiImport struct {
	driver string
	fields [][2]string // the plugin's field, our key
}

// region reads a provider region as the plugins spell it ("US", "eu"):
// "us" or "eu", else "".
func region(v string) string {
	if r := strings.ToLower(strings.TrimSpace(v)); r == "us" || r == "eu" {
		return r
	}
	return ""
}

// copyTo copies the fields (read by get) into settings with set, a
// region through region.
func (a apiImport) copyTo(get func(field string) string, set func(key, value string)) {
	for _, f := range a.fields {
		v := get(f[0])
		if f[1] == "region" {
			v = region(v)
		}
		set(f[1], v)
	}
}

// apiKeyOnly is the import of a provider whose only setting is api_key.
func apiKeyOnly(driver string) apiImport {
	return apiImport{driver, [][2]string{{"api_key", "api_key"}}}
}

// wpmsAPIImports are WP Mail SMTP's (and Easy WP SMTP's) API mailers
// beyond the ones its importer reads itself; their settings are plain
// text.
var wpmsAPIImports = map[string]apiImport{
	"sendinblue": apiKeyOnly("brevo"),
	"sparkpost":  {"sparkpost", [][2]string{{"api_key", "api_key"}, {"region", "region"}}},
	"mailjet":    {"mailjet", [][2]string{{"api_key", "api_key"}, {"secret_key", "api_secret"}}},
	"mailersend": apiKeyOnly("mailersend"),
	"smtp2go":    apiKeyOnly("smtp2go"),
	"resend":     apiKeyOnly("resend"),
}

// fluentAPIDrivers are FluentSMTP's API providers that keep only an
// (encrypted) api_key, beyond the ones its importer reads itself.
var fluentAPIDrivers = map[string]string{"sendinblue": "brevo", "sparkpost": "sparkpost", "smtp2go": "smtp2go"}

// sureMailsAPIImports are SureMails' API providers beyond the ones its
// importer reads itself; every field but region is a secret.
var sureMailsAPIImports = map[string]apiImport{
	"BREVO":      apiKeyOnly("brevo"),
	"SPARKPOST":  {"sparkpost", [][2]string{{"api_key", "api_key"}, {"region", "region"}}},
	"MAILJET":    {"mailjet", [][2]string{{"api_key", "api_key"}, {"secret_key", "api_secret"}}},
	"MAILERSEND": apiKeyOnly("mailersend"),
	"SMTP2GO":    apiKeyOnly("smtp2go"),
}
