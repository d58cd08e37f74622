package wordpress

import (
	"encoding/base64"
	"net/http"
	"regexp"
	"strings"
)

// phpURLDecode decodes %XX escapes as PHP does for cookie values: a
// malformed escape stays literal and "+" is not turned into a space.
func phpURLDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// ParsePHPCookies parses Cookie header values the way PHP fills $_COOKIE:
// pairs separated by ";", leading whitespace skipped, values
// percent-decoded (no "+" to space; names are not decoded since PHP 8),
// spaces and dots in names turned into "_", and the first occurrence of a
// name wins. Go's net/http parser drops
// values PHP accepts, so the authenticator uses this one.
func ParsePHPCookies(headers []string) map[string]string {
	out := map[string]string{}
	for _, h := range headers {
		for _, pair := range strings.Split(h, ";") {
			pair = strings.TrimLeft(pair, " \t\r\n")
			if pair == "" {
				continue
			}
			name, value, _ := strings.Cut(pair, "=")
			name = phpCookieName(name)
			if name == "" {
				continue
			}
			if _, dup := out[name]; dup {
				continue
			}
			out[name] = phpURLDecode(value)
		}
	}
	return out
}

// phpCookieName applies php_register_variable's mangling to a top-level
// variable name: leading spaces removed, spaces and dots become "_". Names
// with "[" (PHP arrays) are kept as the raw string; WordPress cookie names
// never contain one.
func phpCookieName(name string) string {
	name = strings.TrimLeft(name, " ")
	if strings.Contains(name, "[") {
		return name
	}
	return strings.NewReplacer(" ", "_", ".", "_").Replace(name)
}

// requestCookies returns PHP's $_COOKIE for r.
func requestCookies(r *http.Request) map[string]string {
	return ParsePHPCookies(r.Header.Values("Cookie"))
}

// AuthCookie is a parsed (not validated) WordPress auth cookie.
type AuthCookie struct {
	Username   string
	Expiration string
	Token      string
	HMAC       string
}

// ParseAuthCookie is wp_parse_auth_cookie() on a decoded cookie value: it
// must split on "|" into exactly four parts.
func ParseAuthCookie(value string) (AuthCookie, bool) {
	parts := strings.Split(value, "|")
	if len(parts) != 4 {
		return AuthCookie{}, false
	}
	return AuthCookie{Username: parts[0], Expiration: parts[1], Token: parts[2], HMAC: parts[3]}, true
}

// basicHeader is WordPress's shape check for the Authorization header.
var basicHeader = regexp.MustCompile(`(?i)^Basic [a-z\d/+]*={0,2}$`)

// ParseBasicAuth extracts HTTP Basic credentials as PHP (PHP_AUTH_USER /
// PHP_AUTH_PW) and WordPress 6.4+ do: the header must match
// `^Basic [A-Za-z0-9/+]*={0,2}$` (case-insensitive), the decoded text must
// contain a colon, and it is split once at the first colon. present reports
// whether the header is a Basic header at all; ok whether it yielded
// credentials.
func ParseBasicAuth(header string) (user, pass string, present, ok bool) {
	if len(header) < 6 || !strings.EqualFold(header[:6], "basic ") {
		return "", "", false, false
	}
	if !basicHeader.MatchString(header) {
		return "", "", true, false
	}
	enc := strings.TrimRight(header[6:], "=")
	dec, err := base64.RawStdEncoding.DecodeString(enc)
	if err != nil {
		return "", "", true, false
	}
	u, p, found := strings.Cut(string(dec), ":")
	if !found {
		return "", "", true, false
	}
	return u, p, true, true
}

// nonceFromRequest returns the REST nonce: the _wpnonce query parameter
// (the last one, as PHP keeps) wins over the X-WP-Nonce header. Form bodies
// are not read, so a _wpnonce sent only in a POST body is not seen.
func nonceFromRequest(r *http.Request) string {
	if r.URL != nil {
		if vs := r.URL.Query()["_wpnonce"]; len(vs) > 0 && vs[len(vs)-1] != "" {
			return vs[len(vs)-1]
		}
	}
	return r.Header.Get("X-WP-Nonce")
}

// scriptStyle matches what wp_strip_all_tags removes with its content.
var scriptStyle = regexp.MustCompile(`(?is)<(script|style)[^>]*?>.*?</(script|style)>`)

// stripTags approximates PHP's strip_tags for user names: it removes
// everything from "<" to the next ">" (or to the end).
func stripTags(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		switch {
		case in && s[i] == '>':
			in = false
		case in:
		case s[i] == '<':
			in = true
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

var (
	octets     = regexp.MustCompile(`%[a-fA-F0-9][a-fA-F0-9]`)
	entities   = regexp.MustCompile(`&.+?;`)
	whitespace = regexp.MustCompile(`\s+`)
)

// SanitizeUser is sanitize_user($username, false) without remove_accents:
// tags, %XX octets and &…; entities are removed, the result trimmed and
// whitespace runs collapsed. Accented letters are left as they are; the
// default MySQL collations compare them equal to their base letters anyway.
func SanitizeUser(username string) string {
	s := scriptStyle.ReplaceAllStringFunc(username, func(m string) string {
		// PCRE's backreference requires the same tag name to close.
		sub := scriptStyle.FindStringSubmatch(m)
		if strings.EqualFold(sub[1], sub[2]) {
			return ""
		}
		return m
	})
	s = phpTrim(stripTags(s))
	s = octets.ReplaceAllString(s, "")
	s = entities.ReplaceAllString(s, "")
	s = phpTrim(s)
	return whitespace.ReplaceAllString(s, " ")
}

var (
	emailLocal = regexp.MustCompile("^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~.-]+$")
	emailSub   = regexp.MustCompile(`(?i)^[a-z0-9-]+$`)
)

// IsEmail is WordPress's is_email() (without its filter).
func IsEmail(email string) bool {
	if len(email) < 6 {
		return false
	}
	at := strings.IndexByte(email[1:], '@')
	if at < 0 {
		return false
	}
	local, domain, _ := strings.Cut(email, "@")
	if !emailLocal.MatchString(local) {
		return false
	}
	if strings.Contains(domain, "..") {
		return false
	}
	if strings.Trim(domain, " \t\n\r\x00\x0b.") != domain {
		return false
	}
	subs := strings.Split(domain, ".")
	if len(subs) < 2 {
		return false
	}
	for _, sub := range subs {
		if strings.Trim(sub, " \t\n\r\x00\x0b-") != sub || !emailSub.MatchString(sub) {
			return false
		}
	}
	return true
}
