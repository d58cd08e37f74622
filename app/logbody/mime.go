package logbody

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime/quotedprintable"
	"regexp"
	"strings"
)

// A stored body is usually decoded text or HTML, but a caller may hand
// wp_mail() a MIME body of its own (parts with headers, boundaries,
// quoted-printable or base64 content) that the bridge could not split,
// and imported logs may hold one. Body walks such a body line by line:
// boundary lines and part headers are copied as they are, and each text
// part's content is decoded, redacted and, only when something was
// redacted, encoded again in its own transfer encoding and line
// endings. The output is the input with some part contents replaced, so
// the MIME structure stays whole whatever the input; a part that does
// not decode is left as it is.

// maxDepth bounds the nesting of message/rfc822 parts walked.
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

func (r *Redactor) body(s string, depth int) (string, int) {
	if depth > maxDepth {
		return r.Text(s)
	}
	lines := splitLines(s)
	bounds := boundaries(lines)
	headed := headerBlockEnd(lines, 0) >= 0
	if len(bounds) == 0 && !headed {
		return r.Text(s)
	}
	w := &walk{r: r, lines: lines, bounds: bounds, depth: depth}
	i := 0
	if headed {
		i = w.part(0)
	} else {
		i = w.text(0)
	}
	for i < len(lines) {
		closing := w.boundaryKind(lines[i]) == closingBoundary
		w.out.WriteString(lines[i])
		i++
		if closing {
			i = w.text(i)
			continue
		}
		i = w.part(i)
	}
	return w.out.String(), w.n
}

// walk is one pass of Body over a MIME body's lines.
type walk struct {
	r      *Redactor
	lines  []string
	bounds map[string]bool
	depth  int
	out    strings.Builder
	n      int
}

// Boundary line kinds.
const (
	notBoundary = iota
	openingBoundary
	closingBoundary
)

// boundaryKind says whether line is a delimiter of one of the body's
// boundaries, and which kind.
func (w *walk) boundaryKind(line string) int {
	t := strings.TrimRight(line, " \t\r\n")
	if !strings.HasPrefix(t, "--") {
		return notBoundary
	}
	t = t[2:]
	if w.bounds[t] {
		return openingBoundary
	}
	if strings.HasSuffix(t, "--") && w.bounds[t[:len(t)-2]] {
		return closingBoundary
	}
	return notBoundary
}

// next returns the index of the first boundary line at or after i, or
// len(lines).
func (w *walk) next(i int) int {
	for ; i < len(w.lines); i++ {
		if w.boundaryKind(w.lines[i]) != notBoundary {
			return i
		}
	}
	return i
}

// text redacts the lines from i to the next boundary line as plain text
// (a preamble, an epilogue, or a part without headers) and returns the
// boundary line's index.
func (w *walk) text(i int) int {
	j := w.next(i)
	content, tail := w.content(i, j)
	red, k := w.r.Text(content)
	w.out.WriteString(red)
	w.out.WriteString(tail)
	w.n += k
	return j
}

// content joins lines[i:j] and splits off the line break that belongs to
// the boundary line at j (when there is one).
func (w *walk) content(i, j int) (content, tail string) {
	content = strings.Join(w.lines[i:j], "")
	if j < len(w.lines) {
		switch {
		case strings.HasSuffix(content, "\r\n"):
			content, tail = content[:len(content)-2], "\r\n"
		case strings.HasSuffix(content, "\n"):
			content, tail = content[:len(content)-1], "\n"
		}
	}
	return content, tail
}

// part copies the header block starting at i and redacts the part's
// content up to the next boundary line, whose index it returns. Lines
// that are not a header block are redacted as text.
func (w *walk) part(i int) int {
	end := headerBlockEnd(w.lines, i)
	j := w.next(i)
	if end < 0 || end >= j {
		return w.text(i)
	}
	ctype, cte := partHeaders(w.lines[i:end])
	for _, l := range w.lines[i : end+1] {
		w.out.WriteString(l)
	}
	content, tail := w.content(end+1, j)
	red, k := w.r.partContent(content, ctype, cte, w.depth)
	w.out.WriteString(red)
	w.out.WriteString(tail)
	w.n += k
	return j
}

// partContent redacts one part's content as its type and transfer
// encoding say; content that is not text, or does not decode, is
// returned as it is.
func (r *Redactor) partContent(content, ctype, cte string, depth int) (string, int) {
	textual := ctype == "" || strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, "message/")
	if strings.HasPrefix(ctype, "multipart/") {
		// Its content up to the first nested boundary is a preamble.
		return r.Text(content)
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

// headerBlockEnd returns the index of the blank line that ends a MIME
// header block starting at i (header fields and their continuation
// lines, one of them Content-Type or Content-Transfer-Encoding), or -1
// when the lines from i are not one.
func headerBlockEnd(lines []string, i int) int {
	mime := false
	for k := i; k < len(lines) && k < i+100; k++ {
		l := lines[k]
		switch {
		case isBlank(l):
			if k == i || !mime {
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

// partHeaders returns the media type (lower case, no parameters) and the
// transfer encoding (lower case) of a header block.
func partHeaders(block []string) (ctype, cte string) {
	for _, field := range unfold(block) {
		name, value, _ := strings.Cut(field, ":")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "content-type":
			t, _, _ := strings.Cut(value, ";")
			ctype = strings.ToLower(strings.TrimSpace(t))
		case "content-transfer-encoding":
			cte = strings.ToLower(strings.TrimSpace(value))
		}
	}
	return ctype, cte
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

// boundaries returns the boundaries of a MIME body: those its
// Content-Type headers declare, and those of delimiter lines ("--x")
// followed by a part's header block, for a body whose top-level header
// (with the boundary) was given apart.
func boundaries(lines []string) map[string]bool {
	var out map[string]bool
	add := func(b string) {
		if out == nil {
			out = map[string]bool{}
		}
		out[b] = true
	}
	for k, l := range lines {
		if strings.Contains(strings.ToLower(l), "boundary") {
			for _, m := range boundaryParam.FindAllStringSubmatch(l, -1) {
				add(m[1] + m[2])
			}
		}
		if strings.HasPrefix(l, "--") {
			t := strings.TrimRight(l, " \t\r\n")[2:]
			if t != "" && len(t) <= 200 && !strings.ContainsAny(t, " \t") && headerBlockEnd(lines, k+1) >= 0 {
				add(t)
			}
		}
	}
	return out
}
