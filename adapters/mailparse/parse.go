// Package mailparse reads an RFC 5322 message (as `mailsvc sendmail` and
// the SMTP submission listener receive it) into a core.Message: the
// address headers, the subject and custom headers (RFC 2047 encoded words
// decoded), the text and HTML bodies of a MIME tree (multipart/mixed,
// alternative and related, any nesting) converted to UTF-8, and every
// other part as an attachment with its bytes decoded from base64 or
// quoted-printable, its content type, filename and, for inline parts, its
// Content-ID.
package mailparse

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/htmlindex"

	"github.com/mailsvc/mailsvc/core"
)

// Limits of the MIME tree that Parse accepts; deeper or larger trees are
// rejected as invalid rather than walked.
const (
	MaxDepth = 16
	MaxParts = 1000
)

// droppedHeaders are headers that Parse does not keep as custom headers:
// the ones it maps to Message fields, the MIME structure (rebuilt by the
// transport) and trace fields that belong to the receiving server.
var droppedHeaders = map[string]bool{
	"From": true, "To": true, "Cc": true, "Bcc": true, "Reply-To": true,
	"Subject": true, "Mime-Version": true, "Content-Type": true,
	"Content-Transfer-Encoding": true, "Content-Disposition": true,
	"Content-Id": true, "Return-Path": true, "Received": true,
	"Delivered-To": true, "X-Original-To": true,
}

// wordDecoder decodes RFC 2047 encoded words in any charset that
// golang.org/x/text knows.
var wordDecoder = &mime.WordDecoder{CharsetReader: charsetReader}

// charsetReader returns a reader converting from charset to UTF-8.
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	cs := strings.ToLower(strings.TrimSpace(charset))
	switch cs {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		return input, nil
	}
	enc, err := htmlindex.Get(cs)
	if err != nil {
		return nil, fmt.Errorf("unknown charset %q", charset)
	}
	return enc.NewDecoder().Reader(input), nil
}

// Parse reads one RFC 5322 message. The result's recipients are those of
// the To, Cc and Bcc headers; From is empty when the message has no From
// header. Malformed input gives an EINVALID error.
func Parse(r io.Reader) (*core.Message, error) {
	// The header block is also recorded, for the order of the headers
	// (net/mail keeps them in a map).
	head := &headWriter{max: 1 << 20}
	m, err := mail.ReadMessage(bufio.NewReader(io.TeeReader(r, head)))
	if err != nil {
		return nil, core.Errorf(core.EINVALID, "The message headers cannot be read: %v.", err)
	}
	limit := head.max
	head.max = 0
	msg := &core.Message{}
	if err := parseHeaders(msg, m.Header, headerOrder(head.buf.Bytes())); err != nil {
		return nil, err
	}
	msg.RawHeader = headerBlock(head.buf.Bytes(), limit)
	p := &parser{msg: msg}
	if err := p.entity(textproto.MIMEHeader(m.Header), m.Body, 0, kindBody); err != nil {
		return nil, err
	}
	msg.Text = normalizeNewlines(msg.Text)
	msg.HTML = normalizeNewlines(msg.HTML)
	return msg, nil
}

// parseHeaders fills the address fields, the subject and the custom
// headers, in the order the message gives them.
func parseHeaders(msg *core.Message, h mail.Header, order []string) error {
	var err error
	if v := h.Get("From"); v != "" {
		list, err := addressList("From", v)
		if err != nil {
			return err
		}
		if len(list) > 0 {
			msg.From = list[0]
		}
	}
	fields := []struct {
		name string
		dst  *[]core.Address
	}{{"To", &msg.To}, {"Cc", &msg.Cc}, {"Bcc", &msg.Bcc}, {"Reply-To", &msg.ReplyTo}}
	for _, f := range fields {
		for _, v := range h[f.name] {
			list, err := addressList(f.name, v)
			if err != nil {
				return err
			}
			*f.dst = append(*f.dst, list...)
		}
	}
	msg.Subject = decodeHeader(h.Get("Subject"))
	msg.Headers, err = customHeaders(h, order)
	return err
}

// customHeaders returns the headers Parse keeps, decoded, in the order
// their names first appear in the message (order), repeated names
// together in their original order.
func customHeaders(h mail.Header, order []string) ([]core.Header, error) {
	names := make([]string, 0, len(h))
	seen := map[string]bool{}
	for _, raw := range order {
		name := textproto.CanonicalMIMEHeaderKey(raw)
		if _, ok := h[name]; ok && !droppedHeaders[name] && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	var rest []string
	for name := range h {
		if !droppedHeaders[name] && !seen[name] {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	names = append(names, rest...)
	// Names go out as the message first spells them (Feedback-ID, not
	// net/mail's Feedback-Id).
	spelling := map[string]string{}
	for _, raw := range order {
		canon := textproto.CanonicalMIMEHeaderKey(raw)
		if _, ok := spelling[canon]; !ok {
			spelling[canon] = raw
		}
	}
	var out []core.Header
	for _, canon := range names {
		name := canon
		if given, ok := spelling[canon]; ok {
			name = given
		}
		for _, v := range h[canon] {
			v = decodeHeader(v)
			if canon == "Message-Id" {
				// The builder rejects a malformed Message-ID at send time,
				// so only a well-formed one is kept.
				if !validMessageID(v) {
					continue
				}
				name = "Message-ID"
			}
			out = append(out, core.Header{Name: name, Value: v})
		}
	}
	return out, nil
}

// headWriter keeps the first bytes written to it, up to max.
type headWriter struct {
	buf bytes.Buffer
	max int
}

func (w *headWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// headerBlock returns the header block at the start of raw (the bytes
// read of a message, at most limit), its lines ended by CRLF, without
// the empty line that ends it; "" when the block does not end within
// raw's first limit bytes.
func headerBlock(raw []byte, limit int) string {
	var b strings.Builder
	whole := len(raw) < limit // the block ends in raw unless cut short
	for len(raw) > 0 {
		line, rest, _ := bytes.Cut(raw, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			whole = true
			break
		}
		b.Write(line)
		b.WriteString("\r\n")
		raw = rest
	}
	if !whole {
		return ""
	}
	return b.String()
}

// headerOrder returns the header names of a message's header block as
// spelled there, in the order they appear.
func headerOrder(raw []byte) []string {
	var out []string
	for _, line := range bytes.Split(raw, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue
		}
		if name, _, ok := bytes.Cut(line, []byte(":")); ok {
			out = append(out, string(bytes.TrimSpace(name)))
		}
	}
	return out
}

// validMessageID reports whether v looks like <left@right> with no spaces.
func validMessageID(v string) bool {
	v = strings.TrimSpace(v)
	if len(v) < 5 || v[0] != '<' || v[len(v)-1] != '>' || strings.ContainsAny(v, " \t") {
		return false
	}
	at := strings.Index(v, "@")
	return at > 1 && at < len(v)-2 && strings.Count(v, "@") == 1
}

// decodeHeader decodes RFC 2047 encoded words and unfolds the value; a
// value that does not decode is kept as given.
func decodeHeader(v string) string {
	d, err := wordDecoder.DecodeHeader(v)
	if err != nil {
		d = v
	}
	d = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(d)
	return strings.TrimSpace(strings.ToValidUTF8(d, "\uFFFD"))
}

// addressList parses an address header, with encoded-word display names
// decoded. An empty list or a group with no members gives no address.
func addressList(field, v string) ([]core.Address, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	parser := &mail.AddressParser{WordDecoder: wordDecoder}
	list, err := parser.ParseList(v)
	if err != nil {
		// "undisclosed-recipients:;" and similar empty groups.
		if strings.HasSuffix(strings.TrimSpace(v), ":;") {
			return nil, nil
		}
		return nil, core.InvalidField(strings.ToLower(field), fmt.Sprintf("The %s header %q is not a valid address list: %v.", field, v, err))
	}
	out := make([]core.Address, 0, len(list))
	for _, a := range list {
		out = append(out, core.Address{Name: a.Name, Email: a.Address})
	}
	return out, nil
}

// partKind says where an entity sits, which decides what a text part is.
type partKind int

const (
	// kindBody: the top level or a part of multipart/mixed; the first
	// inline text/plain and text/html become the bodies.
	kindBody partKind = iota
	// kindRelated: a part of multipart/related other than its root; it is
	// an inline attachment.
	kindRelated
)

// parser walks one message's MIME tree.
type parser struct {
	msg   *core.Message
	parts int
}

// entity handles one MIME entity (header and body).
func (p *parser) entity(h textproto.MIMEHeader, body io.Reader, depth int, kind partKind) error {
	p.parts++
	if depth > MaxDepth {
		return core.Errorf(core.EINVALID, "The message nests MIME parts deeper than %d levels.", MaxDepth)
	}
	if p.parts > MaxParts {
		return core.Errorf(core.EINVALID, "The message has more than %d MIME parts.", MaxParts)
	}
	mediaType, params := "text/plain", map[string]string{"charset": "us-ascii"}
	if ct := h.Get("Content-Type"); strings.TrimSpace(ct) != "" {
		mt, ps, err := mime.ParseMediaType(ct)
		if err != nil {
			// RFC 2045 §5.2: an unreadable Content-Type is text/plain.
			if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "multipart/") {
				mt, ps = "text/plain", map[string]string{"charset": "us-ascii"}
			} else {
				return core.Errorf(core.EINVALID, "The Content-Type %q cannot be read: %v.", ct, err)
			}
		}
		mediaType, params = mt, ps
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		return p.multipart(mediaType, params, body, depth)
	}
	data, err := decodeTransfer(h.Get("Content-Transfer-Encoding"), body)
	if err != nil {
		return err
	}
	disposition, dparams := "", map[string]string{}
	if cd := h.Get("Content-Disposition"); strings.TrimSpace(cd) != "" {
		if d, ps, err := mime.ParseMediaType(cd); err == nil {
			disposition, dparams = d, ps
		} else {
			disposition = strings.ToLower(strings.TrimSpace(strings.SplitN(cd, ";", 2)[0]))
		}
	}
	filename := dparams["filename"]
	if filename == "" {
		filename = params["name"]
	}
	filename = decodeHeader(filename)

	isText := mediaType == "text/plain" || mediaType == "text/html"
	if kind == kindBody && isText && disposition != "attachment" && filename == "" {
		text, err := toUTF8(params["charset"], data)
		if err != nil {
			return err
		}
		if mediaType == "text/html" && p.msg.HTML == "" {
			p.msg.HTML = text
			return nil
		}
		if mediaType == "text/plain" && p.msg.Text == "" {
			p.msg.Text = text
			return nil
		}
	}
	att := core.Attachment{
		Filename:    filename,
		ContentType: mediaType,
		Data:        data,
		ContentID:   strings.Trim(strings.TrimSpace(h.Get("Content-Id")), "<>"),
	}
	if mediaType == "text/plain" || mediaType == "text/html" {
		if cs := params["charset"]; cs != "" {
			att.ContentType = mime.FormatMediaType(mediaType, map[string]string{"charset": cs})
		}
	}
	att.Inline = disposition == "inline" || (disposition == "" && (kind == kindRelated || att.ContentID != ""))
	if disposition == "attachment" {
		att.Inline = false
	}
	if att.Filename == "" {
		att.Filename = defaultFilename(mediaType, len(p.msg.Attachments)+1)
	}
	p.msg.Attachments = append(p.msg.Attachments, att)
	return nil
}

// multipart walks the parts of a multipart entity.
func (p *parser) multipart(mediaType string, params map[string]string, body io.Reader, depth int) error {
	boundary := params["boundary"]
	if boundary == "" {
		return core.Errorf(core.EINVALID, "The %s part has no boundary.", mediaType)
	}
	mr := multipart.NewReader(body, boundary)
	for i := 0; ; i++ {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return core.Errorf(core.EINVALID, "The %s part cannot be read: %v.", mediaType, err)
		}
		kind := kindBody
		if mediaType == "multipart/related" && i > 0 {
			kind = kindRelated
		}
		err = p.entity(part.Header, part, depth+1, kind)
		part.Close()
		if err != nil {
			return err
		}
	}
}

// decodeTransfer decodes a body's Content-Transfer-Encoding.
func decodeTransfer(encoding string, body io.Reader) ([]byte, error) {
	switch enc := strings.ToLower(strings.TrimSpace(encoding)); enc {
	case "", "7bit", "8bit", "binary":
		b, err := io.ReadAll(body)
		if err != nil {
			return nil, core.Errorf(core.EINVALID, "The message body cannot be read: %v.", err)
		}
		return b, nil
	case "base64":
		raw, err := io.ReadAll(body)
		if err != nil {
			return nil, core.Errorf(core.EINVALID, "The message body cannot be read: %v.", err)
		}
		clean := make([]byte, 0, len(raw))
		for _, c := range raw {
			if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
				clean = append(clean, c)
			}
		}
		// Some senders drop the padding.
		if r := len(clean) % 4; r != 0 && !bytes.Contains(clean, []byte("=")) {
			clean = append(clean, bytes.Repeat([]byte("="), 4-r)...)
		}
		out := make([]byte, base64.StdEncoding.DecodedLen(len(clean)))
		n, err := base64.StdEncoding.Decode(out, clean)
		if err != nil {
			return nil, core.Errorf(core.EINVALID, "A base64 part does not decode: %v.", err)
		}
		return out[:n], nil
	case "quoted-printable":
		b, err := io.ReadAll(quotedprintable.NewReader(body))
		if err != nil {
			return nil, core.Errorf(core.EINVALID, "A quoted-printable part does not decode: %v.", err)
		}
		return b, nil
	default:
		return nil, core.Errorf(core.EINVALID, "The Content-Transfer-Encoding %q is not supported.", encoding)
	}
}

// toUTF8 converts a text body from its charset to UTF-8; bytes that are
// not valid in the result become U+FFFD.
func toUTF8(charset string, data []byte) (string, error) {
	r, err := charsetReader(charset, bytes.NewReader(data))
	if err != nil {
		// An unknown charset: keep the text if it is already UTF-8.
		if utf8.Valid(data) {
			return string(data), nil
		}
		return "", core.Errorf(core.EINVALID, "A text part has the unknown charset %q.", charset)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", core.Errorf(core.EINVALID, "A text part does not decode from %s: %v.", charset, err)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// normalizeNewlines turns CRLF and lone CR into LF.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// extensions are the filename extensions of unnamed parts; a fixed table,
// so that names do not depend on the host's mime.types.
var extensions = map[string]string{
	"text/plain": ".txt", "text/html": ".html", "text/calendar": ".ics",
	"text/csv": ".csv", "message/rfc822": ".eml", "application/pdf": ".pdf",
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif",
	"application/json": ".json", "application/zip": ".zip",
}

// defaultFilename names an attachment that has no filename.
func defaultFilename(mediaType string, n int) string {
	ext, ok := extensions[mediaType]
	if !ok {
		ext = ".bin"
	}
	return fmt.Sprintf("part%d%s", n, ext)
}
