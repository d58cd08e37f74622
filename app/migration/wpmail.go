package migration

import (
	"net/mail"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// WPMail is what a plugin logged of one wp_mail() call: the recipients,
// the header lines and the body as WordPress received them. Post SMTP,
// WP SMTP and SureMails keep their logs in this shape.
type WPMail struct {
	// From is the sender the plugin recorded ("Name <email>" or a bare
	// address); a From: header line overrides it only when it is empty.
	From string
	// To, Cc, Bcc and ReplyTo are comma-separated address lists.
	To, Cc, Bcc, ReplyTo string
	// HeaderLines are raw "Name: value" lines (Content-Type, Cc, custom
	// headers), in order.
	HeaderLines []string
	Subject     string
	Body        string
}

// Message converts the logged call into a core.Message: addresses
// parsed leniently (an unreadable address is dropped), Cc/Bcc/Reply-To/
// From header lines merged into the address fields, the body put in HTML
// when the Content-Type says text/html (or the body plainly is HTML),
// in Text otherwise, and the other header lines kept as headers.
func (w WPMail) Message() core.Message {
	var m core.Message
	m.Subject = w.Subject
	m.To = SplitAddresses(w.To)
	m.Cc = SplitAddresses(w.Cc)
	m.Bcc = SplitAddresses(w.Bcc)
	m.ReplyTo = SplitAddresses(w.ReplyTo)
	from := strings.TrimSpace(w.From)
	contentType := ""
	for _, line := range w.HeaderLines {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if name == "" || value == "" {
			continue
		}
		switch strings.ToLower(name) {
		case "content-type":
			contentType = strings.ToLower(value)
		case "from":
			if from == "" {
				from = value
			}
		case "cc":
			m.Cc = appendNewAddresses(m.Cc, SplitAddresses(value))
		case "bcc":
			m.Bcc = appendNewAddresses(m.Bcc, SplitAddresses(value))
		case "reply-to":
			m.ReplyTo = appendNewAddresses(m.ReplyTo, SplitAddresses(value))
		case "to", "subject", "mime-version", "content-transfer-encoding", "date", "message-id":
			// Part of the message itself, not a custom header.
		default:
			m.Headers = append(m.Headers, core.Header{Name: name, Value: value})
		}
	}
	if from != "" {
		if as := SplitAddresses(from); len(as) > 0 {
			m.From = as[0]
		}
	}
	if strings.HasPrefix(contentType, "text/html") || (contentType == "" && looksLikeHTML(w.Body)) {
		m.HTML = w.Body
	} else {
		m.Text = w.Body
	}
	return m
}

// SplitAddresses parses a comma-separated address list leniently: the
// whole list as RFC 5322 when it parses, else each comma-separated part
// on its own, dropping the parts that are not addresses.
func SplitAddresses(s string) []core.Address {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if list, err := mail.ParseAddressList(s); err == nil {
		out := make([]core.Address, 0, len(list))
		for _, a := range list {
			out = append(out, core.Address{Name: a.Name, Email: a.Address})
		}
		return out
	}
	var out []core.Address
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == '\n' }) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if a, err := core.ParseAddress(part); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// appendNewAddresses appends the addresses of add that list does not
// hold yet (compared by email, case-insensitively).
func appendNewAddresses(list, add []core.Address) []core.Address {
	for _, a := range add {
		dup := false
		for _, b := range list {
			if strings.EqualFold(a.Email, b.Email) {
				dup = true
				break
			}
		}
		if !dup {
			list = append(list, a)
		}
	}
	return list
}

// HeaderLines splits a raw wp_mail headers string, or takes the lines of
// an unserialized headers array (wp_mail accepts both), into lines.
func HeaderLines(v any) []string {
	switch t := v.(type) {
	case string:
		var out []string
		for _, line := range strings.Split(strings.ReplaceAll(t, "\r\n", "\n"), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, line)
			}
		}
		return out
	case []any:
		var out []string
		for _, x := range t {
			out = append(out, HeaderLines(PHPString(x))...)
		}
		return out
	case map[string]any:
		var out []string
		d := Dict(t)
		for _, k := range d.Keys() {
			val := d.Str(k)
			if isIndexKey(k) {
				out = append(out, HeaderLines(val)...)
			} else if val != "" {
				// An associative headers array: name => value.
				out = append(out, k+": "+val)
			}
		}
		return out
	}
	return nil
}

// isIndexKey reports whether k is a PHP list index ("0", "1", ...).
func isIndexKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// looksLikeHTML reports whether a body without a Content-Type is HTML:
// it holds an html, body, p, div, br or table tag.
func looksLikeHTML(body string) bool {
	b := strings.ToLower(body)
	for _, tag := range []string{"<html", "<body", "<p>", "<p ", "<div", "<br", "<table", "<!doctype html"} {
		if strings.Contains(b, tag) {
			return true
		}
	}
	return false
}
