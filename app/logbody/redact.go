package logbody

import (
	"fmt"
	"regexp"
	"strings"
)

// Redacted is what a one-time credential is replaced with.
const Redacted = "[redacted]"

// credentialWords are the query parameter names, or words of a name
// split on "_", "-", "." and brackets, that say a value is a credential.
// adminhash and newuseremail carry the hashes of WordPress's admin email
// and email-change confirmation links.
var credentialWords = map[string]bool{
	"key": true, "token": true, "code": true, "nonce": true, "signature": true, "sig": true,
	"password": true, "pass": true, "passwd": true, "pwd": true, "secret": true, "auth": true,
	"hash": true, "otp": true, "hmac": true, "jwt": true, "apikey": true, "adminhash": true,
	"newuseremail": true, "confirm": true, "activation": true, "verification": true,
}

// credentialParts are fragments that make any name containing them a
// credential (accesstoken, clientsecret, wpnonce, ...).
var credentialParts = []string{"token", "secret", "password", "passwd", "nonce", "signature", "apikey"}

// IsCredentialParam reports whether a URL query parameter named name
// holds a credential: the name, or one of its words, is a credential
// word (key, token, code, nonce, signature, sig, password, pass, secret,
// auth, hash, ...), or it contains token, secret, password, nonce or
// signature.
func IsCredentialParam(name string) bool {
	name = strings.ToLower(name)
	if credentialWords[name] {
		return true
	}
	for _, p := range credentialParts {
		if strings.Contains(name, p) {
			return true
		}
	}
	for name != "" {
		w := name
		if i := strings.IndexAny(name, "_-.[]"); i >= 0 {
			w, name = name[:i], name[i+1:]
		} else {
			name = ""
		}
		if credentialWords[w] {
			return true
		}
	}
	return false
}

// exportFilePattern finds the file name of a WordPress personal-data
// export (wp-content/uploads/wp-personal-data-exports/
// wp-personal-data-file-<secret>.zip): the name is the secret.
var exportFilePattern = regexp.MustCompile(`wp-personal-data-file-([^\s"'<>/?#&()\[\]{}\\]+)`)

// Redactor replaces one-time credentials in message bodies. The zero
// value applies the built-in rules only. Safe for concurrent use.
type Redactor struct {
	extra []*regexp.Regexp
}

// NewRedactor returns a Redactor with the built-in rules and the
// site-specific patterns (the mail_svc_log_redact_patterns filter). A
// pattern is a Go regular expression, or a PHP one between delimiters
// with flags i, m, s, x or U (`/token-[a-z0-9]+/i`). When it has capture
// groups, each matched group is replaced; otherwise the whole match. The
// patterns that do not compile are left out and returned as errors.
func NewRedactor(patterns []string) (*Redactor, []error) {
	r := &Redactor{}
	var errs []error
	for _, p := range patterns {
		if strings.TrimSpace(p) == "" {
			continue
		}
		re, err := compilePattern(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("log redact pattern %q: %w", p, err))
			continue
		}
		r.extra = append(r.extra, re)
	}
	return r, errs
}

// compilePattern compiles a Go pattern, or a PHP one written between
// delimiters (its flags turned into Go's).
func compilePattern(p string) (*regexp.Regexp, error) {
	if len(p) >= 2 && strings.ContainsRune("/#~%!@|+", rune(p[0])) {
		delim := p[0]
		if end := strings.LastIndexByte(p, delim); end > 0 {
			flags := p[end+1:]
			if strings.Trim(flags, "imsxuU") == "" {
				body := p[1:end]
				var goFlags strings.Builder
				for _, f := range flags {
					if strings.ContainsRune("imsU", f) && !strings.ContainsRune(goFlags.String(), f) {
						goFlags.WriteRune(f)
					}
				}
				if goFlags.Len() > 0 {
					body = "(?" + goFlags.String() + ")" + body
				}
				if strings.ContainsRune(flags, 'x') {
					body = stripExtended(body)
				}
				return regexp.Compile(body)
			}
		}
	}
	return regexp.Compile(p)
}

// stripExtended removes the unescaped white space of a PHP pattern
// written with the x flag, which Go does not have.
func stripExtended(p string) string {
	var b strings.Builder
	escaped := false
	for _, r := range p {
		switch {
		case escaped:
			escaped = false
		case r == '\\':
			escaped = true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Text returns s, decoded text or HTML, with its one-time credentials
// replaced with Redacted, and how many it replaced: the value of every
// credential query parameter (see IsCredentialParam; this covers the
// links WordPress mails for a password reset or a new user's password,
// an email change, an admin email change and a personal-data request),
// the file name of a personal-data export, and the site's patterns.
// Text of an already redacted text replaces nothing more. Body is the
// entry point for a stored body, which may itself be MIME.
func (r *Redactor) Text(s string) (string, int) {
	n := 0
	if strings.IndexByte(s, '=') >= 0 {
		s = redactParams(s, &n)
	}
	if strings.Contains(s, "wp-personal-data-file-") {
		s = replaceMatches(exportFilePattern, s, &n)
	}
	for _, re := range r.extra {
		s = replaceMatches(re, s, &n)
	}
	return s, n
}

// redactParams replaces the value of each credential query parameter of
// s with Redacted, counting the replacements into n. A parameter is a
// name (letters, digits, "_", "-", ".", brackets) after "?" or "&" (or
// "&" as an HTML entity, as esc_url writes it: &amp; &#038; &#x26;),
// then "=" and a value that runs to the next "&", space, quote, bracket
// or "#". Every "=" is looked at, so a parameter inside another's value
// (a redirect_to URL) is found too. One pass, no regular expression: this
// runs on every delivered message.
func redactParams(s string, n *int) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '=')
		if k < 0 {
			break
		}
		eq := i + k
		i = eq + 1
		start := eq
		for start > last && isNameByte(s[start-1]) {
			start--
		}
		if start == eq || !afterSeparator(s[:start]) {
			continue
		}
		end := eq + 1
		for end < len(s) && isValueByte(s[end]) {
			end++
		}
		if end == eq+1 || !IsCredentialParam(s[start:eq]) {
			continue
		}
		b.WriteString(s[last : eq+1])
		b.WriteString(Redacted)
		last, i = end, end
		*n++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.-[]", c) >= 0
}

func isValueByte(c byte) bool {
	return strings.IndexByte("&\t\n\f\r \"'<>()[]{}#\\", c) < 0
}

// afterSeparator reports whether before (the text before a parameter's
// name) ends with a query separator: "?", "&", or "&" as an HTML entity.
func afterSeparator(before string) bool {
	switch {
	case before == "":
		return false
	case before[len(before)-1] == '?' || before[len(before)-1] == '&':
		return true
	case before[len(before)-1] != ';':
		return false
	}
	amp := strings.LastIndexByte(before, '&')
	if amp < 0 || len(before)-amp > 10 {
		return false
	}
	entity := before[amp+1 : len(before)-1]
	switch {
	case entity == "amp":
		return true
	case strings.HasPrefix(entity, "#x") || strings.HasPrefix(entity, "#X"):
		return strings.TrimLeft(entity[2:], "0") == "26"
	case strings.HasPrefix(entity, "#"):
		return strings.TrimLeft(entity[1:], "0") == "38"
	}
	return false
}

// replaceMatches replaces each match of re in s (each matched capture
// group when re has groups) with Redacted, counting the replacements
// into n; text that is already Redacted is left alone.
func replaceMatches(re *regexp.Regexp, s string, n *int) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		spans := [][2]int{{m[0], m[1]}}
		if len(m) > 2 {
			spans = spans[:0]
			for g := 2; g+1 < len(m); g += 2 {
				if m[g] >= 0 && m[g+1] > m[g] && m[g] >= last {
					spans = append(spans, [2]int{m[g], m[g+1]})
				}
			}
		}
		for _, sp := range spans {
			if sp[1] <= sp[0] || sp[0] < last || s[sp[0]:sp[1]] == Redacted {
				continue
			}
			b.WriteString(s[last:sp[0]])
			b.WriteString(Redacted)
			last = sp[1]
			*n++
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
