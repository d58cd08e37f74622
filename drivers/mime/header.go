package mime

import (
	"bytes"
	"errors"
	"fmt"
	stdmime "mime"
	"net/mail"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/idna"

	"github.com/mailsvc/mailsvc/core"
)

// The header block of a message is rendered here, for every transport
// (the SMTP driver's own renderer and go-mail's output alike), by these
// rules:
//   - A message received whole (the SMTP listener, `mailsvc sendmail`)
//     carries its header block in core.Message.RawHeader. Its fields go
//     out byte for byte as they came, names in their case, trace fields
//     (Received) first, but for the MIME structure (rebuilt with the
//     body), Bcc and Return-Path. From, Reply-To and Subject are
//     rendered anew only when the message's fields no longer say what the
//     raw field says (a connection's forced sender); a custom header
//     added since, a Message-ID and a Date that the message lacks are
//     added after the raw fields.
//   - Any other message (wp_mail(), the REST API) gets its fields built
//     from the message's fields, in the order go-mail writes them.
//   - Folding never leaves the first line of a field empty: it breaks at
//     a space after the first word. A value that fits on one line of at
//     most 998 characters (RFC 5322's limit) is written on one line as it
//     was given; encoded words (RFC 2047) fold at 76 characters and
//     address lists at 78.

// Line lengths of a header field (RFC 5322 §2.1.1, RFC 2047 §2).
const (
	maxLine     = 998
	foldLine    = 78
	encodedLine = 76
)

// ErrNeedsSMTPUTF8 means a message has an address whose local part is not
// ASCII (RFC 6531): only a server that offers SMTPUTF8 may take it.
var ErrNeedsSMTPUTF8 = errors.New("a non-ASCII local part needs a server that offers SMTPUTF8 (RFC 6531)")

// Head is the header block of a message as it goes out: every field but
// the MIME structure (MIME-Version and the Content- fields), which the
// writer of the body adds.
type Head struct {
	// Block holds the fields, each line ended by CRLF, without the empty
	// line that ends the header.
	Block []byte
	// MessageID is the Message-ID field's value, with its angle brackets.
	MessageID string
	// UTF8 says the block holds bytes beyond ASCII (RFC 6532 headers):
	// only a server that offers SMTPUTF8 may take it as it is.
	UTF8 bool
}

// RenderHead renders msg's header block, dated now unless the message
// has a Date. With ascii, every field is made of ASCII: domains as
// A-labels, names and other text as encoded words; an address with a
// non-ASCII local part then gives ErrNeedsSMTPUTF8.
func RenderHead(msg *core.Message, now time.Time, ascii bool) (Head, error) {
	if msg == nil {
		return Head{}, core.Errorf(core.EINVALID, "No message to build.")
	}
	if msg.From.Email == "" {
		return Head{}, core.InvalidField("from", "A sender address is required.")
	}
	custom, err := customFields(msg.Headers)
	if err != nil {
		return Head{}, err
	}
	var h Head
	var buf bytes.Buffer
	if msg.RawHeader != "" {
		h.MessageID, err = writeRawHead(&buf, msg, custom, now, ascii)
	} else {
		h.MessageID, err = writeBuiltHead(&buf, msg, custom, now, ascii)
	}
	if err != nil {
		return Head{}, err
	}
	h.Block = buf.Bytes()
	h.UTF8 = !isASCII(h.Block)
	return h, nil
}

// field is one custom header: its name as given (Message-ID and Date
// spelled so) and its values, unfolded.
type field struct {
	name   string
	values []string
}

// customFields checks the custom headers and groups repeated names, in
// the order the names first appear, leaving out the structural ones.
func customFields(headers []core.Header) ([]field, error) {
	var out []field
	for _, h := range headers {
		name := strings.TrimSpace(h.Name)
		if !ValidHeaderName(name) {
			return nil, core.InvalidField("headers", fmt.Sprintf("Invalid header name %q.", h.Name))
		}
		if structural(name) {
			continue
		}
		name = canonicalHeader(name)
		i := slices.IndexFunc(out, func(f field) bool { return f.name == name })
		if i < 0 {
			out = append(out, field{name: name})
			i = len(out) - 1
		}
		out[i].values = append(out[i].values, Unfold(h.Value))
	}
	for _, f := range out {
		if f.name == "Message-ID" {
			id := strings.Trim(strings.TrimSpace(f.values[0]), "<>")
			if id == "" || strings.ContainsAny(id, " \t<>") {
				return nil, core.InvalidField("headers", fmt.Sprintf("Invalid Message-ID %q.", f.values[0]))
			}
		}
	}
	return out, nil
}

// writeBuiltHead writes the fields of a message given as fields: the
// general ones sorted by name (Subject, X-Mailer, the custom headers,
// Message-ID, Date), then From, To, Cc and Reply-To.
func writeBuiltHead(buf *bytes.Buffer, msg *core.Message, custom []field, now time.Time, ascii bool) (string, error) {
	// Room for the usual fields (Subject, X-Mailer, Message-ID, Date and
	// a few custom ones) without growing.
	general := make([]field, 0, 8)
	general = append(general, field{"Subject", []string{encodeText("Subject", Unfold(msg.Subject))}}, field{"X-Mailer", []string{Mailer}})
	set := func(f field) {
		if i := slices.IndexFunc(general, func(g field) bool { return g.name == f.name }); i >= 0 {
			general[i] = f
			return
		}
		general = append(general, f)
	}
	var id string
	for _, f := range custom {
		switch f.name {
		case "Message-ID":
			id = "<" + strings.Trim(strings.TrimSpace(f.values[0]), "<>") + ">"
			set(field{f.name, []string{id}})
		case "Date":
			set(field{f.name, []string{encodeText(f.name, f.values[0])}})
		default:
			values := make([]string, len(f.values))
			for i, v := range f.values {
				values[i] = encodeText(f.name, v)
			}
			set(field{f.name, values})
		}
	}
	if id == "" {
		generated, err := NewMessageID(msg.From.Email)
		if err != nil {
			return "", err
		}
		id = "<" + generated + ">"
		set(field{"Message-ID", []string{id}})
	}
	if !slices.ContainsFunc(general, func(f field) bool { return f.name == "Date" }) {
		set(field{"Date", []string{now.Format(time.RFC1123Z)}})
	}
	slices.SortFunc(general, func(a, b field) int { return strings.Compare(a.name, b.name) })
	for _, f := range general {
		WriteField(buf, f.name, strings.Join(f.values, ", "))
	}
	from, err := addressList([]core.Address{msg.From}, ascii)
	if err != nil {
		return "", err
	}
	writeAddressField(buf, "From", from)
	for _, list := range []struct {
		name  string
		addrs []core.Address
	}{{"To", msg.To}, {"Cc", msg.Cc}, {"Reply-To", msg.ReplyTo}} {
		if len(list.addrs) == 0 {
			continue
		}
		value, err := addressList(list.addrs, ascii)
		if err != nil {
			return "", err
		}
		writeAddressField(buf, list.name, value)
	}
	return id, nil
}

// droppedRaw are the fields of a raw header block that never go out: the
// MIME structure, rebuilt with the body; Bcc, which only the envelope
// carries; Return-Path, which the final delivery adds (RFC 5321 §4.4).
var droppedRaw = map[string]bool{
	"mime-version": true, "content-type": true, "content-transfer-encoding": true,
	"content-disposition": true, "content-id": true, "bcc": true, "return-path": true,
}

// writeRawHead writes the fields of a message received whole, as they
// came (see the package's rules), and returns its Message-ID.
func writeRawHead(buf *bytes.Buffer, msg *core.Message, custom []field, now time.Time, ascii bool) (string, error) {
	present := map[string]bool{}
	var id string
	for _, f := range RawFields(msg.RawHeader) {
		lower := strings.ToLower(f.Name)
		if droppedRaw[lower] {
			continue
		}
		present[lower] = true
		value := f.Value()
		switch lower {
		case "from":
			if !sameAddresses(value, []core.Address{msg.From}) {
				list, err := addressList([]core.Address{msg.From}, ascii)
				if err != nil {
					return "", err
				}
				writeAddressField(buf, f.Name, list)
				continue
			}
		case "reply-to":
			if len(msg.ReplyTo) > 0 && !sameAddresses(value, msg.ReplyTo) {
				list, err := addressList(msg.ReplyTo, ascii)
				if err != nil {
					return "", err
				}
				writeAddressField(buf, f.Name, list)
				continue
			}
		case "subject":
			if !sameText(value, msg.Subject) {
				WriteField(buf, f.Name, encodeText(f.Name, Unfold(msg.Subject)))
				continue
			}
		case "message-id":
			id = strings.TrimSpace(value)
		}
		if ascii && !isASCII([]byte(f.Text)) {
			if err := writeASCIIField(buf, f.Name, value); err != nil {
				return "", err
			}
			continue
		}
		buf.WriteString(f.Text)
	}
	if !present["from"] {
		list, err := addressList([]core.Address{msg.From}, ascii)
		if err != nil {
			return "", err
		}
		writeAddressField(buf, "From", list)
	}
	if !present["subject"] && msg.Subject != "" {
		WriteField(buf, "Subject", encodeText("Subject", Unfold(msg.Subject)))
	}
	for _, f := range custom {
		lower := strings.ToLower(f.name)
		if present[lower] {
			continue
		}
		if f.name == "Message-ID" {
			id = "<" + strings.Trim(strings.TrimSpace(f.values[0]), "<>") + ">"
			WriteField(buf, f.name, id)
			present[lower] = true
			continue
		}
		values := make([]string, len(f.values))
		for i, v := range f.values {
			values[i] = encodeText(f.name, v)
		}
		WriteField(buf, f.name, strings.Join(values, ", "))
	}
	if id == "" {
		generated, err := NewMessageID(msg.From.Email)
		if err != nil {
			return "", err
		}
		id = "<" + generated + ">"
		WriteField(buf, "Message-ID", id)
	}
	if !present["date"] {
		WriteField(buf, "Date", now.Format(time.RFC1123Z))
	}
	return id, nil
}

// RawField is one field of a header block as it came.
type RawField struct {
	// Name is the field name in its case.
	Name string
	// Text is the whole field, folds included, its lines ended by CRLF.
	Text string
}

// Value returns the field's body unfolded (line breaks removed, RFC 5322
// §2.2.3), without the space after the colon.
func (f RawField) Value() string {
	_, v, _ := strings.Cut(f.Text, ":")
	v = strings.ReplaceAll(v, "\r\n", "")
	return strings.TrimSpace(v)
}

// RawFields splits a header block into its fields; lines end in CRLF or
// LF (written back as CRLF), and a line that is no field nor a fold of
// one is skipped.
func RawFields(block string) []RawField {
	var out []RawField
	for line := range strings.Lines(block) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			if len(out) > 0 {
				out[len(out)-1].Text += line + "\r\n"
			}
			continue
		}
		name, _, ok := strings.Cut(line, ":")
		if !ok || !ValidHeaderName(strings.TrimRight(name, " \t")) {
			continue
		}
		out = append(out, RawField{Name: strings.TrimRight(name, " \t"), Text: line + "\r\n"})
	}
	return out
}

// addressFields are the fields whose bodies are address lists.
var addressFields = map[string]bool{
	"from": true, "to": true, "cc": true, "reply-to": true, "sender": true,
	"resent-from": true, "resent-to": true, "resent-cc": true, "resent-sender": true,
}

// writeASCIIField writes a raw field that holds bytes beyond ASCII as
// ASCII: an address list with A-label domains and encoded names, other
// text as encoded words.
func writeASCIIField(buf *bytes.Buffer, name, value string) error {
	if addressFields[strings.ToLower(name)] {
		list, err := (&mail.AddressParser{WordDecoder: &stdmime.WordDecoder{}}).ParseList(value)
		if err != nil {
			return fmt.Errorf("%w: the %s field %q cannot be written in ASCII: %v", ErrNeedsSMTPUTF8, name, value, err)
		}
		addrs := make([]core.Address, len(list))
		for i, a := range list {
			addrs[i] = core.Address{Name: a.Name, Email: a.Address}
		}
		rendered, err := addressList(addrs, true)
		if err != nil {
			return err
		}
		writeAddressField(buf, name, rendered)
		return nil
	}
	if decoded, err := (&stdmime.WordDecoder{}).DecodeHeader(value); err == nil {
		value = decoded
	}
	WriteField(buf, name, encodeText(name, value))
	return nil
}

// sameAddresses reports whether the raw address list value names the
// addresses want (emails compared without case, names as decoded). A
// value that does not parse (an unknown charset) counts as the same when
// it holds every wanted email.
func sameAddresses(value string, want []core.Address) bool {
	list, err := (&mail.AddressParser{WordDecoder: &stdmime.WordDecoder{}}).ParseList(value)
	if err != nil {
		lower := strings.ToLower(value)
		for _, a := range want {
			if !strings.Contains(lower, strings.ToLower(a.Email)) {
				return false
			}
		}
		return true
	}
	if len(list) != len(want) {
		return false
	}
	for i, a := range list {
		if !strings.EqualFold(a.Address, want[i].Email) || (want[i].Name != "" && a.Name != want[i].Name) {
			return false
		}
	}
	return true
}

// sameText reports whether the raw unstructured value decodes to want,
// whitespace runs compared as one space. A value that does not decode
// counts as the same.
func sameText(value, want string) bool {
	decoded, err := (&stdmime.WordDecoder{}).DecodeHeader(value)
	if err != nil {
		return true
	}
	return strings.Join(strings.Fields(decoded), " ") == strings.Join(strings.Fields(want), " ")
}

// addressList renders addresses as the body of an address field; with
// ascii, domains become A-labels and a non-ASCII local part is an error.
func addressList(addrs []core.Address, ascii bool) (string, error) {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		email := a.Email
		if ascii {
			var err error
			if email, err = ASCIIAddress(email); err != nil {
				return "", err
			}
		}
		out = append(out, (&mail.Address{Name: a.Name, Address: email}).String())
	}
	return strings.Join(out, ", "), nil
}

// ASCIIAddress returns addr with its domain as an A-label (IDNA, RFC
// 5891). A local part beyond ASCII cannot be written so: it gives an
// error wrapping ErrNeedsSMTPUTF8.
func ASCIIAddress(addr string) (string, error) {
	if isASCII([]byte(addr)) {
		return addr, nil
	}
	at := strings.LastIndexByte(addr, '@')
	if at < 0 || !isASCII([]byte(addr[:at])) {
		return "", fmt.Errorf("%w: %s", ErrNeedsSMTPUTF8, addr)
	}
	domain, err := idna.Lookup.ToASCII(addr[at+1:])
	if err != nil {
		return "", fmt.Errorf("the domain of %s is not a valid internationalised domain name: %w", addr, err)
	}
	return addr[:at+1] + domain, nil
}

// encodeText returns an unstructured value of the field name as it goes
// out: as it is when it is printable ASCII, else as RFC 2047 Q-encoded
// UTF-8 words sized so that the first fits on the field's first line
// and each other on a line of its own, 76 characters at most.
func encodeText(name, s string) string {
	printable := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' || c > '~') && c != '\t' {
			printable = false
			break
		}
	}
	if printable {
		return s
	}
	const open, end = "=?UTF-8?q?", "?="
	limit := max(encodedLine-len(name)-2, len(open)+len(end)+12)
	var out, word strings.Builder
	flush := func() {
		if out.Len() > 0 {
			out.WriteByte(' ')
		}
		out.WriteString(open)
		out.WriteString(word.String())
		out.WriteString(end)
		word.Reset()
		limit = encodedLine - 1
	}
	var enc [4 * 3]byte
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		n := qChar(enc[:0], r)
		if word.Len() > 0 && len(open)+word.Len()+len(n)+len(end) > limit {
			flush()
		}
		word.Write(n)
	}
	flush()
	return out.String()
}

// qChar appends r in RFC 2047's Q encoding (§4.2 and the rules of §5(3)
// for a phrase) to dst.
func qChar(dst []byte, r rune) []byte {
	const hex = "0123456789ABCDEF"
	switch {
	case r == ' ':
		return append(dst, '_')
	case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!*+-/", r)):
		return append(dst, byte(r))
	}
	for _, c := range []byte(string(r)) {
		dst = append(dst, '=', hex[c>>4], hex[c&15])
	}
	return dst
}

// WriteField writes one header field: on one line when it fits in 998
// characters and holds no encoded word, else folded at spaces, after the
// first word, into lines of at most 78 characters (76 with encoded
// words) where the words allow.
func WriteField(buf *bytes.Buffer, name, value string) {
	limit := 0
	if strings.Contains(value, "=?") {
		limit = encodedLine
	} else if len(name)+2+len(value) > maxLine {
		limit = foldLine
	}
	writeFolded(buf, name, value, limit)
}

// writeAddressField writes an address field folded at 78 characters.
func writeAddressField(buf *bytes.Buffer, name, value string) {
	limit := foldLine
	if strings.Contains(value, "=?") {
		limit = encodedLine
	}
	writeFolded(buf, name, value, limit)
}

// writeFolded writes "name: value" CRLF, folded before a word that would
// take the line past limit (0: never), never before the first word nor
// before an empty one (which would leave a line of white space).
func writeFolded(buf *bytes.Buffer, name, value string, limit int) {
	buf.WriteString(name)
	buf.WriteByte(':')
	if value == "" {
		buf.WriteString("\r\n")
		return
	}
	line := len(name) + 1
	i := 0
	for word := range strings.SplitSeq(value, " ") {
		if i > 0 && limit > 0 && word != "" && line+1+len(word) > limit {
			buf.WriteString("\r\n")
			line = 0
		}
		buf.WriteByte(' ')
		buf.WriteString(word)
		line += 1 + len(word)
		i++
	}
	buf.WriteString("\r\n")
}

// isASCII reports whether b holds only 7-bit bytes.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// HeaderNamesOthers reports whether msg's raw To or Cc fields name an
// address that is none of its envelope recipients (To, Cc and Bcc). A
// provider that takes the recipients from the header block (the Gmail
// API) would send to it, so such a message is built from its fields
// there instead (RawHeader cleared).
func HeaderNamesOthers(msg *core.Message) bool {
	if msg.RawHeader == "" {
		return false
	}
	envelope := map[string]bool{}
	for _, a := range msg.Recipients() {
		envelope[strings.ToLower(a.Email)] = true
	}
	parser := &mail.AddressParser{WordDecoder: &stdmime.WordDecoder{}}
	for _, f := range RawFields(msg.RawHeader) {
		if lower := strings.ToLower(f.Name); lower != "to" && lower != "cc" {
			continue
		}
		list, err := parser.ParseList(f.Value())
		if err != nil {
			return true
		}
		for _, a := range list {
			if !envelope[strings.ToLower(a.Address)] {
				return true
			}
		}
	}
	return false
}
