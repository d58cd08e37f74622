package debuglog

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Redacted is what the full visibility writes in place of a secret.
const Redacted = "[REDACTED]"

// sensitiveHeaders are request headers that carry credentials whatever
// their name says.
var sensitiveHeaders = map[string]bool{
	"authorization":            true,
	"proxy-authorization":      true,
	"x-postmark-server-token":  true,
	"x-postmark-account-token": true,
	"api-key":                  true,
	"x-api-key":                true,
	"cookie":                   true,
	"set-cookie":               true,
	"x-wp-nonce":               true,
	"x-amz-security-token":     true,
}

// Redactor hides secrets in debug output according to a secret
// visibility: core.VisibilityMask shows core.Mask, core.VisibilityFull
// shows Redacted, core.VisibilityShow leaves values exact. Any other
// visibility behaves as mask.
type Redactor struct {
	Visibility string
	// Extra are additional sensitive keys (MAILSVC_SENSITIVE_KEYS and the
	// mail_svc_sensitive_keys filter).
	Extra []string
}

// Secret returns what the debug log shows for a secret value v. An empty
// value stays empty so a reader can tell "not set" from "set".
func (r Redactor) Secret(v string) string {
	if v == "" {
		return ""
	}
	switch r.Visibility {
	case core.VisibilityShow:
		return v
	case core.VisibilityFull:
		return Redacted
	}
	return core.Mask
}

// credentialWords are parts of names that hold a credential in debug
// output besides the settings' sensitive words (core.IsSensitiveKey):
// WordPress nonces (_wpnonce, _ajax_nonce, the X-WP-Nonce header), the
// OAuth PKCE code_verifier, and the assertion of a JWT or SAML grant
// (assertion, client_assertion).
var credentialWords = []string{"nonce", "verifier", "assertion"}

// oauthParams are credentials only as URL query parameters or form
// fields, where OAuth carries them: the authorization code (redeemable
// until used) and the state, which authenticates the callback. As JSON
// keys the names mean other things ({"code":"rest_forbidden"},
// {"state":"active"}) and stay visible.
var oauthParams = map[string]bool{"code": true, "state": true}

// SensitiveKey reports whether a JSON key, form field, query parameter or
// header names a secret.
func (r Redactor) SensitiveKey(key string) bool {
	if core.IsSensitiveKey(key, r.Extra) {
		return true
	}
	k := strings.ToLower(key)
	for _, w := range credentialWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// SensitiveParam reports whether a URL query parameter or form field
// names a secret: a sensitive key, or an OAuth code or state.
func (r Redactor) SensitiveParam(name string) bool {
	return r.SensitiveKey(name) || oauthParams[strings.ToLower(name)]
}

// Headers returns h as a flat map with credential headers redacted. The
// authentication scheme of an Authorization header stays visible
// ("Basic ********").
func (r Redactor) Headers(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for name, vals := range h {
		v := strings.Join(vals, ", ")
		lower := strings.ToLower(name)
		if !sensitiveHeaders[lower] && !r.SensitiveKey(name) {
			// Referer, Location and the like may carry a URL with secrets.
			out[name] = r.Text(v)
			continue
		}
		if lower == "authorization" || lower == "proxy-authorization" {
			if scheme, cred, ok := strings.Cut(v, " "); ok {
				out[name] = scheme + " " + r.Secret(cred)
				continue
			}
		}
		out[name] = r.Secret(v)
	}
	return out
}

// URL returns u as text with a password in its user info and sensitive
// query parameters redacted.
func (r Redactor) URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	if c.User != nil {
		if p, ok := c.User.Password(); ok {
			c.User = url.UserPassword(c.User.Username(), r.Secret(p))
		}
	}
	if c.RawQuery != "" {
		c.RawQuery = r.query(c.RawQuery)
	}
	return c.String()
}

// query redacts the values of sensitive parameters of a URL-encoded
// query or form in place, keeping every other byte (order, encoding, and
// pairs that do not decode) as it was.
func (r Redactor) query(raw string) string {
	pairs := strings.Split(raw, "&")
	for i, pair := range pairs {
		name, value, ok := strings.Cut(pair, "=")
		if ok && value != "" && r.SensitiveParam(unescapeParam(name)) {
			pairs[i] = name + "=" + r.Secret(value)
		}
	}
	return strings.Join(pairs, "&")
}

// unescapeParam decodes a query parameter name; one that does not decode
// is read as it is.
func unescapeParam(name string) string {
	if n, err := url.QueryUnescape(name); err == nil {
		return n
	}
	return name
}

// textParam finds name=value pairs of URLs or forms inside free text: at
// its start or after '?' or '&'.
var textParam = regexp.MustCompile(`(^|[?&])([^?&=#\s"'<>\\]+)=([^&#\s"'<>\\]*)`)

// textJSONString finds "name":"value" pairs of JSON inside free text (a
// truncated or malformed JSON body, an error message quoting one).
var textJSONString = regexp.MustCompile(`"([^"\\]{1,100})"\s*:\s*"((?:[^"\\]|\\.)*)"`)

// Text returns free text (a body that is neither JSON nor a form, an
// error message, a header value, a string inside a logged value) with
// the values of sensitive URL or form parameters and of sensitive JSON
// string members it quotes redacted.
func (r Redactor) Text(s string) string {
	if r.Visibility == core.VisibilityShow || s == "" {
		return s
	}
	s = textParam.ReplaceAllStringFunc(s, func(m string) string {
		sub := textParam.FindStringSubmatch(m)
		if sub[3] == "" || !r.SensitiveParam(unescapeParam(sub[2])) {
			return m
		}
		return sub[1] + sub[2] + "=" + r.Secret(sub[3])
	})
	return textJSONString.ReplaceAllStringFunc(s, func(m string) string {
		sub := textJSONString.FindStringSubmatch(m)
		if sub[2] == "" || !r.SensitiveKey(sub[1]) {
			return m
		}
		return `"` + sub[1] + `":"` + r.Secret(sub[2]) + `"`
	})
}

// Body returns a request or response body as text with the values of
// sensitive JSON keys (at any depth) or sensitive form fields redacted.
// Other bodies are redacted as Text.
func (r Redactor) Body(body []byte, contentType string) string {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil {
			out, err := json.Marshal(r.Value(v))
			if err == nil {
				return string(out)
			}
		}
	}
	if strings.HasPrefix(strings.ToLower(contentType), "application/x-www-form-urlencoded") {
		return r.query(string(body))
	}
	return r.Text(string(body))
}

// Value returns a copy of a decoded JSON value with the values of
// sensitive keys redacted at any depth, and its strings as Text.
func (r Redactor) Value(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			if r.SensitiveKey(k) && val != nil {
				out[k] = r.secretValue(val)
				continue
			}
			out[k] = r.Value(val)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = r.Value(val)
		}
		return out
	case string:
		return r.Text(t)
	}
	return v
}

// secretValue redacts one value of a sensitive key: strings and numbers
// become the placeholder; whole objects and arrays too, since their parts
// belong to the secret.
func (r Redactor) secretValue(v any) any {
	switch t := v.(type) {
	case string:
		return r.Secret(t)
	case bool:
		return t
	}
	if r.Visibility == core.VisibilityShow {
		return v
	}
	return r.Secret("x")
}
