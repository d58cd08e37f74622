package smtp

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"io"
	stdmime "mime"
	"mime/quotedprintable"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/mime"
)

// A message without attachments (text, HTML or both, the common case
// by far) is rendered here straight into a pooled buffer, in the very
// bytes drivers/mime and go-mail would write for it: the same headers in
// the same order, folded and encoded the same way, the same
// quoted-printable parts and multipart/alternative layout; only the
// random Message-ID, boundary and the Date differ from one rendering to
// the next (TestRenderMatchesGoMail holds the two side by side). go-mail
// builds a Msg of maps and slices, encodes every part into a buffer of
// its own and formats its headers with fmt and strings.Split for each
// message, which was a third of the driver's time per message on a
// pooled, pipelined session. A message with attachments is still built
// by drivers/mime with go-mail, its files streamed (stream.go).

// letter is a message ready for the wire: its envelope, its Message-ID
// and its data, either rendered (data) or a go-mail message (gm).
type letter struct {
	from  string   // the MAIL FROM argument, "<address>"
	rcpts []string // the RCPT TO arguments: the envelope (To, Cc, then Bcc) or the part of it a transaction sends to
	id    string   // the Message-ID header value, with its brackets
	data  *bytes.Buffer
	gm    *gomail.Msg
}

// newLetter prepares msg (validated, the connection's sender applied)
// for sending.
func newLetter(msg *core.Message) (*letter, error) {
	l := &letter{from: envelopeAddress(msg.From.Email)}
	lists := [][]core.Address{msg.To, msg.Cc, msg.Bcc}
	if len(msg.Envelope) > 0 {
		lists = [][]core.Address{msg.Envelope}
	}
	for _, list := range lists {
		for _, a := range list {
			l.rcpts = append(l.rcpts, envelopeAddress(a.Email))
		}
	}
	if len(l.rcpts) == 0 {
		return nil, core.InvalidField("to", "At least one recipient is required.")
	}
	if strings.ContainsAny(l.from, "\r\n") || slices.ContainsFunc(l.rcpts, func(r string) bool { return strings.ContainsAny(r, "\r\n") }) {
		return nil, core.InvalidField("to", "An address contains a line break.")
	}
	if len(msg.Attachments) > 0 {
		m, err := mime.Compose(msg)
		if err != nil {
			return nil, err
		}
		l.gm, l.id = m, m.GetMessageID()
		return l, nil
	}
	buf := renderBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	id, err := render(buf, msg, time.Now())
	if err != nil {
		renderBuffers.Put(buf)
		return nil, err
	}
	l.data, l.id = buf, id
	return l, nil
}

// envelopeAddress returns addr as SMTP commands carry it, in angle
// brackets (go-mail's GetSender and GetRecipients spelling).
func envelopeAddress(addr string) string {
	return (&mail.Address{Address: addr}).String()
}

// writeTo writes the message data to w (a DATA dot-writer).
func (l *letter) writeTo(w io.Writer) error {
	if l.data != nil {
		_, err := w.Write(l.data.Bytes())
		return err
	}
	return writeMessage(l.gm, w)
}

// release returns the rendered buffer to the pool; l is not used after.
func (l *letter) release() {
	if l.data != nil && l.data.Cap() <= maxPooledBuffer {
		renderBuffers.Put(l.data)
	}
	l.data = nil
}

// maxPooledBuffer is the largest rendering buffer kept for reuse, so one
// huge HTML message does not pin its memory in the pool.
const maxPooledBuffer = 256 << 10

// renderBuffers holds buffers of rendered messages for reuse.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Header names the renderer writes itself.
const (
	hdrDate        = "Date"
	hdrMessageID   = "Message-ID"
	hdrMIMEVersion = "MIME-Version"
	hdrSubject     = "Subject"
	hdrXMailer     = "X-Mailer"
)

// structuralHeaders are the header names a custom header may not set
// (lower case), as drivers/mime ignores them.
var structuralHeaders = map[string]bool{
	"from": true, "to": true, "cc": true, "bcc": true, "reply-to": true, "subject": true,
	"mime-version": true, "content-type": true, "content-transfer-encoding": true,
	"content-disposition": true, "content-id": true,
}

// genHeader is one header of the general block: its name and values (go-mail
// joins several with ", ").
type genHeader struct {
	name   string
	values []string
}

// render writes msg, which has no attachments, to buf as drivers/mime
// and go-mail would (custom headers checked and mapped as mime.Compose
// does), dated now unless a custom Date header says otherwise, and
// returns its Message-ID header value.
func render(buf *bytes.Buffer, msg *core.Message, now time.Time) (string, error) {
	if msg.From.Email == "" {
		return "", core.InvalidField("from", "A sender address is required.")
	}
	alternative := msg.Text != "" && msg.HTML != ""
	// One read of randomness for the Message-ID and the boundary.
	var random [20 + 30]byte
	n := 20
	if alternative {
		n += 30
	}
	if _, err := rand.Read(random[:n]); err != nil {
		return "", fmt.Errorf("generate message id: %w", err)
	}

	headers := make([]genHeader, 0, 8+len(msg.Headers))
	set := func(name string, values ...string) {
		for i := range headers {
			if headers[i].name == name {
				headers[i].values = values
				return
			}
		}
		headers = append(headers, genHeader{name, values})
	}
	set(hdrSubject, qEncode(mime.Unfold(msg.Subject)))
	set(hdrXMailer, qEncode(mime.Mailer))
	var id string
	hasDate := false
	if len(msg.Headers) > 0 {
		custom := map[string][]string{}
		var order []string
		for _, h := range msg.Headers {
			name := strings.TrimSpace(h.Name)
			if !mime.ValidHeaderName(name) {
				return "", core.InvalidField("headers", fmt.Sprintf("Invalid header name %q.", h.Name))
			}
			if structuralHeaders[strings.ToLower(name)] {
				continue
			}
			name = canonicalHeader(name)
			if _, seen := custom[name]; !seen {
				order = append(order, name)
			}
			custom[name] = append(custom[name], mime.Unfold(h.Value))
		}
		for _, name := range order {
			values := custom[name]
			switch name {
			case hdrMessageID:
				v := strings.Trim(strings.TrimSpace(values[0]), "<>")
				if v == "" || strings.ContainsAny(v, " \t<>") {
					return "", core.InvalidField("headers", fmt.Sprintf("Invalid Message-ID %q.", values[0]))
				}
				id = qEncode("<" + v + ">")
				set(hdrMessageID, id)
			case hdrDate:
				hasDate = true
				set(hdrDate, qEncode(values[0]))
			default:
				for i, v := range values {
					values[i] = qEncode(v)
				}
				set(name, values...)
			}
		}
	}
	if id == "" {
		id = "<" + newMessageID(msg.From.Email, random[:20]) + ">"
		set(hdrMessageID, id)
	}
	if !hasDate {
		set(hdrDate, now.Format(time.RFC1123Z))
	}
	set(hdrMIMEVersion, "1.0")
	slices.SortFunc(headers, func(a, b genHeader) int { return strings.Compare(a.name, b.name) })
	for _, h := range headers {
		writeHeader(buf, h.name, h.values...)
	}

	writeHeader(buf, "From", (&mail.Address{Name: msg.From.Name, Address: msg.From.Email}).String())
	for _, list := range []struct {
		name  string
		addrs []core.Address
	}{{"To", msg.To}, {"Cc", msg.Cc}, {"Reply-To", msg.ReplyTo}} {
		if len(list.addrs) == 0 {
			continue
		}
		values := make([]string, len(list.addrs))
		for i, a := range list.addrs {
			values[i] = (&mail.Address{Name: a.Name, Address: a.Email}).String()
		}
		writeHeader(buf, list.name, values...)
	}

	switch {
	case alternative:
		var boundary [60]byte
		hex.Encode(boundary[:], random[20:50])
		buf.WriteString("Content-Type: multipart/alternative;\r\n boundary=")
		buf.Write(boundary[:])
		buf.WriteString("\r\n\r\n")
		for i, p := range [2]struct{ ctype, body string }{{"text/plain", msg.Text}, {"text/html", msg.HTML}} {
			if i > 0 {
				buf.WriteString("\r\n")
			}
			buf.WriteString("--")
			buf.Write(boundary[:])
			buf.WriteString("\r\nContent-Transfer-Encoding: quoted-printable\r\nContent-Type: ")
			buf.WriteString(p.ctype)
			buf.WriteString("; charset=UTF-8\r\n\r\n")
			if err := writeQuotedPrintable(buf, p.body); err != nil {
				return "", err
			}
		}
		buf.WriteString("\r\n--")
		buf.Write(boundary[:])
		buf.WriteString("--\r\n")
	case msg.HTML != "":
		buf.WriteString("Content-Transfer-Encoding: quoted-printable\r\nContent-Type: text/html; charset=UTF-8\r\n\r\n")
		return id, writeQuotedPrintable(buf, msg.HTML)
	default:
		buf.WriteString("Content-Transfer-Encoding: quoted-printable\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n")
		return id, writeQuotedPrintable(buf, msg.Text)
	}
	return id, nil
}

// writeQuotedPrintable writes s to buf in quoted-printable, line breaks as
// CRLF, as go-mail writes a text part. (A quotedprintable.Writer is not
// reused: it keeps a pending CR across Close.)
func writeQuotedPrintable(buf *bytes.Buffer, s string) error {
	if s == "" {
		return nil
	}
	w := quotedprintable.NewWriter(buf)
	if _, err := io.WriteString(w, s); err != nil {
		return err
	}
	return w.Close()
}

// qEncode encodes a header value as RFC 2047 Q-encoded words when it
// needs it (go-mail's encoding of every general header value).
func qEncode(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' || c > '~') && c != '\t' {
			return stdmime.QEncoding.Encode("UTF-8", s)
		}
	}
	return s
}

// maxHeaderLength is the line length go-mail folds headers at.
const maxHeaderLength = 76

// writeHeader writes one header field as go-mail's msgWriter.writeHeader
// does: the values joined with ", ", folded before a word that would
// reach the line length, the space before each fold dropped.
func writeHeader(buf *bytes.Buffer, key string, values ...string) {
	if len(values) == 0 {
		return // go-mail writes nothing for a header without values
	}
	full := values[0]
	if len(values) > 1 {
		full = strings.Join(values, ", ")
	}
	buf.WriteString(key)
	buf.WriteString(": ")
	room := maxHeaderLength - 2 - len(key) - 2
	for {
		word, rest, more := strings.Cut(full, " ")
		if room-len(word) <= 1 {
			// The space written after the previous word (or the
			// header name) goes; the fold takes its place.
			buf.Truncate(buf.Len() - 1)
			buf.WriteString("\r\n ")
			room = maxHeaderLength - 3
		}
		buf.WriteString(word)
		room -= len(word)
		if !more {
			break
		}
		buf.WriteByte(' ')
		room--
		full = rest
	}
	buf.WriteString("\r\n")
}

// newMessageID returns a Message-ID value (without brackets) made of
// random's 20 bytes in lower-case base32 and the sender's domain, as
// mime.NewMessageID makes them.
func newMessageID(sender string, random []byte) string {
	domain := "mailsvc.localhost"
	if i := strings.LastIndexByte(sender, '@'); i >= 0 && mime.ValidDomain(sender[i+1:]) {
		domain = strings.ToLower(sender[i+1:])
	}
	var left [32]byte
	base32.StdEncoding.WithPadding(base32.NoPadding).Encode(left[:], random)
	for i, c := range left {
		if c >= 'A' && c <= 'Z' {
			left[i] = c + 'a' - 'A'
		}
	}
	return string(left[:]) + "@" + domain
}

// canonicalHeader returns the spelling of Message-ID and Date whatever
// their case, and other names as given.
func canonicalHeader(name string) string {
	switch {
	case strings.EqualFold(name, hdrMessageID):
		return hdrMessageID
	case strings.EqualFold(name, hdrDate):
		return hdrDate
	}
	return name
}
