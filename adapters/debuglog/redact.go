package debuglog

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
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

// SensitiveKey reports whether a JSON key, form field or query parameter
// names a secret.
func (r Redactor) SensitiveKey(key string) bool {
	return core.IsSensitiveKey(key, r.Extra)
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
			out[name] = v
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

// query redacts sensitive parameters of a URL-encoded query or form,
// keeping the order of the others.
func (r Redactor) query(raw string) string {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return raw
	}
	changed := false
	for k, vs := range vals {
		if r.SensitiveKey(k) {
			for i := range vs {
				vs[i] = r.Secret(vs[i])
			}
			changed = true
		}
	}
	if !changed {
		return raw
	}
	return encodeSorted(vals)
}

func encodeSorted(vals url.Values) string {
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, v := range vals[k] {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			// Keep the placeholders readable: they are not part of a real query.
			b.WriteString(url.QueryEscape(k) + "=" + strings.NewReplacer("%2A", "*", "%5B", "[", "%5D", "]").Replace(url.QueryEscape(v)))
		}
	}
	return b.String()
}

// Body returns a request or response body as text with the values of
// sensitive JSON keys (at any depth) or sensitive form fields redacted.
// Other bodies are returned as they are.
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
	return string(body)
}

// Value returns a copy of a decoded JSON value with the values of
// sensitive keys redacted at any depth.
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
