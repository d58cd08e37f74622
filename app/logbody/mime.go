package logbody

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/quotedprintable"
	"regexp"
	"strings"
)

// A stored body is usually decoded text or HTML, but a caller may hand
// wp_mail() a MIME body of its own (parts with headers, boundaries,
// quoted-printable or base64 content) that the bridge could not split,
// and imported logs may hold one. Body walks such a body as MIME does,
// each multipart split by its own boundary's delimiter lines only:
// delimiters and part headers are copied as they are, and each text
// part's content is decoded, redacted and, only when something was
// redacted, encoded again in its own transfer encoding and line endings;
// other parts are left as they are. The output is the input with some
// part contents replaced, so the MIME structure stays whole whatever the
// input; a part that does not decode is left as it is.

// maxDepth bounds the nesting of multipart and message/rfc822 parts
// walked.
const maxDepth = 8

// boundaryParam finds a boundary parameter of a Content-Type header.
var boundaryParam = regexp.MustCompile(`(?i)boundary\s*=\s*(?:"([^"\r\n]{1,200})"|([^\s;"]{1,200}))`)

// headerField matches the start of a header line: a field name and ":".
var headerField = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,76}:")

// Body returns a stored body (text or HTML, possibly MIME itself) with
// its one-time credentials replaced with Redacted (see Text), and how
// many it replaced. A link that quoted-printable soft line breaks split
// is found; the MIME structure is never changed.
func (r *Redactor) Body(s string) (string, int) {
	return r.body(s, 0)
}

// body redacts a body that may be a MIME entity: one that starts with a
// header block naming its type or transfer encoding, or a multipart body
// whose header was given apart (a delimiter line followed by a part's
// headers, after an optional preamble). Anything else is text.
func (r *Redactor) body(s string, depth int) (string, int) {
	if depth > maxDepth || !strings.Contains(s, "ontent-") && !strings.Contains(s, "ONTENT-") {
		// No Content-Type or Content-Transfer-Encoding header: text.
		return r.Text(s)
	}
	lines := splitLines(s)
	if end := headerBlockEnd(lines, 0, true); end >= 0 {
		return r.entity(lines[:end+1], strings.Join(lines[end+1:], ""), depth)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, "--") {
			continue
		}
		b := strings.TrimRight(l, " \t\r\n")[2:]
		if b != "" && len(b) <= 200 && !strings.ContainsAny(b, " \t") && headerBlockEnd(lines, i+1, true) >= 0 {
			return r.multipart(s, b, depth)
		}
	}
	return r.Text(s)
}

// entity copies a header block and redacts the content it describes.
func (r *Redactor) entity(head []string, content string, depth int) (string, int) {
	var b strings.Builder
	for _, l := range head {
		b.WriteString(l)
	}
	ctype, boundary, cte := partHeaders(head)
	red, n := r.partContent(content, ctype, boundary, cte, depth)
	b.WriteString(red)
	return b.String(), n
}

// multipart redacts the body of a multipart entity with boundary b: its
// preamble and epilogue as text, each part as an entity. Only the
// delimiter lines of b split it; nested multiparts are walked by their
// own entity.
func (r *Redactor) multipart(s, b string, depth int) (string, int) {
	if depth > maxDepth {
		return r.Text(s)
	}
	lines := splitLines(s)
	var delims []int
	closed := -1
	for i, l := range lines {
		if !strings.HasPrefix(l, "--") {
			continue
		}
		switch strings.TrimRight(l, " \t\r\n")[2:] {
		case b:
			delims = append(delims, i)
		case b + "--":
			delims = append(delims, i)
			closed = i
		}
		if closed >= 0 {
			break
		}
	}
	if len(delims) == 0 {
		return r.Text(s)
	}
	var out strings.Builder
	n := 0
	add := func(red string, k int) {
		out.WriteString(red)
		n += k
	}
	// segment joins lines[i:j], its last line break left to the
	// delimiter at j.
	segment := func(i, j int) (content, tail string) {
		content = strings.Join(lines[i:j], "")
		if j < len(lines) {
			switch {
			case strings.HasSuffix(content, "\r\n"):
				content, tail = content[:len(content)-2], "\r\n"
			case strings.HasSuffix(content, "\n"):
				content, tail = content[:len(content)-1], "\n"
			}
		}
		return content, tail
	}
	pre, tail := segment(0, delims[0])
	add(r.Text(pre))
	out.WriteString(tail)
	for k, d := range delims {
		out.WriteString(lines[d])
		if d == closed {
			add(r.Text(strings.Join(lines[d+1:], "")))
			break
		}
		next := len(lines)
		if k+1 < len(delims) {
			next = delims[k+1]
		}
		part, tail := segment(d+1, next)
		add(r.part(part, depth))
		out.WriteString(tail)
	}
	return out.String(), n
}

// part redacts one part of a multipart body: its header block (possibly
// empty) and its content; a part without a header block is text.
func (r *Redactor) part(s string, depth int) (string, int) {
	lines := splitLines(s)
	end := headerBlockEnd(lines, 0, false)
	if end < 0 {
		return r.Text(s)
	}
	return r.entity(lines[:end+1], strings.Join(lines[end+1:], ""), depth+1)
}

// partContent redacts one part's content as its type and transfer
// encoding say; content that is not text, or does not decode, is
// returned as it is.
func (r *Redactor) partContent(content, ctype, boundary, cte string, depth int) (string, int) {
	textual := ctype == "" || strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, "message/")
	if strings.HasPrefix(ctype, "multipart/") {
		if boundary == "" {
			return r.Text(content)
		}
		return r.multipart(content, boundary, depth+1)
	}
	if !textual {
		return content, 0
	}
	redact := r.Text
	if strings.HasPrefix(ctype, "message/") {
		redact = func(s string) (string, int) { return r.body(s, depth+1) }
	}
	crlf := strings.Contains(content, "\r\n")
	switch cte {
	case "quoted-printable":
		dec, err := io.ReadAll(quotedprintable.NewReader(strings.NewReader(content)))
		if err != nil {
			return content, 0
		}
		red, k := redact(string(dec))
		if k == 0 {
			return content, 0
		}
		return encodeQuotedPrintable(red, crlf), k
	case "base64":
		dec, err := base64.StdEncoding.DecodeString(stripSpace(content))
		if err != nil {
			return content, 0
		}
		red, k := redact(string(dec))
		if k == 0 {
			return content, 0
		}
		return encodeBase64(red, base64LineLength(content), crlf), k
	default:
		return redact(content)
	}
}

// encodeQuotedPrintable encodes s as quoted-printable with the body's
// line endings.
func encodeQuotedPrintable(s string, crlf bool) string {
	var b bytes.Buffer
	qw := quotedprintable.NewWriter(&b)
	_, _ = qw.Write([]byte(s)) // a bytes.Buffer does not fail
	_ = qw.Close()
	out := b.String()
	if !crlf {
		out = strings.ReplaceAll(out, "\r\n", "\n")
	}
	return out
}

// encodeBase64 encodes s as base64 in lines of n characters with the
// body's line endings.
func encodeBase64(s string, n int, crlf bool) string {
	enc := base64.StdEncoding.EncodeToString([]byte(s))
	eol := "\n"
	if crlf {
		eol = "\r\n"
	}
	var b strings.Builder
	for len(enc) > n {
		b.WriteString(enc[:n])
		b.WriteString(eol)
		enc = enc[n:]
	}
	b.WriteString(enc)
	return b.String()
}

// base64LineLength returns the length of the first line of a base64
// content when it is a usable line length (a multiple of 4 up to 996),
// else 76.
func base64LineLength(content string) int {
	first, _, _ := strings.Cut(content, "\n")
	n := len(strings.TrimRight(first, "\r \t"))
	if n >= 4 && n <= 996 && n%4 == 0 {
		return n
	}
	return 76
}

// stripSpace removes the white space of a base64 content.
func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, s)
}

// splitLines splits s after each "\n", keeping the line breaks; the
// last line may have none.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}

// isBlank reports whether line is empty but for its line break.
func isBlank(line string) bool {
	return strings.TrimRight(line, "\r\n") == ""
}

// headerBlockEnd returns the index of the blank line that ends a header
// block starting at i (header fields and their continuation lines; with
// needMIME, one of them Content-Type or Content-Transfer-Encoding and at
// least one field), or -1 when the lines from i are not one.
func headerBlockEnd(lines []string, i int, needMIME bool) int {
	mime := false
	for k := i; k < len(lines) && k < i+100; k++ {
		l := lines[k]
		switch {
		case isBlank(l):
			if needMIME && !mime {
				return -1
			}
			return k
		case l[0] == ' ' || l[0] == '\t':
			if k == i {
				return -1
			}
		case headerField.MatchString(l):
			name := strings.ToLower(l[:strings.IndexByte(l, ':')])
			mime = mime || name == "content-type" || name == "content-transfer-encoding"
		default:
			return -1
		}
	}
	return -1
}

// partHeaders returns the media type (lower case, no parameters), its
// boundary parameter and the transfer encoding (lower case) of a header
// block.
func partHeaders(block []string) (ctype, boundary, cte string) {
	for _, field := range unfold(block) {
		name, value, _ := strings.Cut(field, ":")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "content-type":
			t, _, _ := strings.Cut(value, ";")
			ctype = strings.ToLower(strings.TrimSpace(t))
			if _, params, err := mime.ParseMediaType(value); err == nil {
				boundary = params["boundary"]
			} else if m := boundaryParam.FindStringSubmatch(value); m != nil {
				boundary = m[1] + m[2]
			}
		case "content-transfer-encoding":
			cte = strings.ToLower(strings.TrimSpace(value))
		}
	}
	return ctype, boundary, cte
}

// unfold joins the continuation lines of a header block to their field.
func unfold(block []string) []string {
	var fields []string
	for _, l := range block {
		l = strings.TrimRight(l, "\r\n")
		if (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) && len(fields) > 0 {
			fields[len(fields)-1] += " " + strings.TrimSpace(l)
			continue
		}
		fields = append(fields, l)
	}
	return fields
}
