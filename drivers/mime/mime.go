// Package mime renders a core.Message as an RFC 5322 message: the bytes an
// SMTP DATA command carries and the raw form that API drivers (SES raw,
// Gmail, Graph MIME, Mailgun messages.mime) upload.
//
// The layout follows what mail clients expect: a single text/plain or
// text/html part, multipart/alternative when both are given, multipart/related
// around the HTML when inline attachments are present, and multipart/mixed
// when files are attached. Bcc recipients never appear in the headers; they
// belong to the envelope only (see Envelope).
package mime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	stdmime "mime"
	"path"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/mailsvc/mailsvc/core"
)

// Mailer is the value of the X-Mailer header of every built message.
const Mailer = "mailsvc"

// structuralHeaders are header names a custom header may not set, because
// the builder derives them from the message's fields or its MIME structure.
var structuralHeaders = map[string]bool{
	"from":                      true,
	"to":                        true,
	"cc":                        true,
	"bcc":                       true,
	"reply-to":                  true,
	"subject":                   true,
	"mime-version":              true,
	"content-type":              true,
	"content-transfer-encoding": true,
	"content-disposition":       true,
	"content-id":                true,
}

// structural reports whether the header name (in any case) is one of
// structuralHeaders. It lowers the name on the stack: every message
// sent has a Message-ID among its custom headers, so this runs per
// message.
func structural(name string) bool {
	var lower [32]byte // longer than the longest structural name
	if len(name) > len(lower) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	return structuralHeaders[string(lower[:len(name)])]
}

// Compose converts msg's body (its text and HTML, inline files and
// attachments) into a go-mail message. The header fields go-mail writes
// are not the message's: write it through a HeadWriter, which puts the
// message's Head (RenderHead) in their place and keeps only go-mail's
// MIME structure fields.
func Compose(msg *core.Message) (*gomail.Msg, error) {
	if msg == nil {
		return nil, core.Errorf(core.EINVALID, "No message to build.")
	}
	m := gomail.NewMsg(gomail.WithNoDefaultUserAgent(), gomail.WithCharset(gomail.CharsetUTF8))
	switch {
	case msg.Text != "" && msg.HTML != "":
		m.SetBodyString(gomail.TypeTextPlain, msg.Text)
		m.AddAlternativeString(gomail.TypeTextHTML, msg.HTML)
	case msg.HTML != "":
		m.SetBodyString(gomail.TypeTextHTML, msg.HTML)
	default:
		m.SetBodyString(gomail.TypeTextPlain, msg.Text)
	}

	for i, a := range msg.Attachments {
		name := a.Filename
		if name == "" {
			name = fmt.Sprintf("attachment-%d", i+1)
		}
		opts := []gomail.FileOption{gomail.WithFileContentType(gomail.ContentType(contentType(a)))}
		r := bytes.NewReader(a.Data)
		if a.Inline {
			cid := strings.Trim(a.ContentID, "<>")
			if cid == "" {
				cid = name
			}
			// RFC 2392: the Content-ID field carries the id in angle
			// brackets; the HTML refers to it as "cid:<id>" without them.
			opts = append(opts, gomail.WithFileContentID("<"+cid+">"))
			m.EmbedReadSeeker(name, r, opts...)
			continue
		}
		m.AttachReadSeeker(name, r, opts...)
	}
	return m, nil
}

// Build renders msg as RFC 5322 bytes with CRLF line endings. The bytes
// carry no Bcc header.
func Build(msg *core.Message) ([]byte, error) {
	b, _, err := BuildWithID(msg)
	return b, err
}

// BuildWithID renders msg like Build and also returns the message's
// Message-ID header value (with its angle brackets).
func BuildWithID(msg *core.Message) ([]byte, string, error) {
	return build(msg, false)
}

// BuildASCII renders msg like BuildWithID for a service that takes no
// SMTPUTF8 (RFC 6531): its header in ASCII, domains as A-labels and text
// as encoded words; an address with a non-ASCII local part gives an error
// wrapping ErrNeedsSMTPUTF8. Pair it with ASCIIEnvelope.
func BuildASCII(msg *core.Message) ([]byte, string, error) {
	return build(msg, true)
}

// ASCIIEnvelope returns a copy of msg whose sender and recipients have
// their domains as A-labels, or an error wrapping ErrNeedsSMTPUTF8.
func ASCIIEnvelope(msg *core.Message) (*core.Message, error) {
	m := *msg
	var err error
	if m.From.Email, err = ASCIIAddress(m.From.Email); err != nil {
		return nil, err
	}
	for _, list := range []*[]core.Address{&m.To, &m.Cc, &m.Bcc} {
		out := make([]core.Address, len(*list))
		for i, a := range *list {
			if a.Email, err = ASCIIAddress(a.Email); err != nil {
				return nil, err
			}
			out[i] = a
		}
		*list = out
	}
	return &m, nil
}

// build renders msg, in ASCII when ascii is set.
func build(msg *core.Message, ascii bool) ([]byte, string, error) {
	head, err := RenderHead(msg, time.Now(), ascii)
	if err != nil {
		return nil, "", err
	}
	m, err := Compose(msg)
	if err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	w := NewHeadWriter(&buf, head)
	if _, err := m.WriteTo(w); err != nil {
		return nil, "", fmt.Errorf("write mime message: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), head.MessageID, nil
}

// HeadWriter passes a message written by go-mail through to an io.Writer
// with its header block replaced: the Head's fields, then go-mail's
// MIME-Version and Content- fields, then the body as go-mail wrote it.
type HeadWriter struct {
	out     io.Writer
	head    []byte
	pending []byte // go-mail's header block, until its end is seen
	done    bool
}

// NewHeadWriter returns a HeadWriter writing to out with head's fields.
func NewHeadWriter(out io.Writer, head Head) *HeadWriter {
	return &HeadWriter{out: out, head: head.Block}
}

// maxGoMailHead bounds the header block HeadWriter holds back.
const maxGoMailHead = 1 << 20

// Write implements io.Writer.
func (w *HeadWriter) Write(p []byte) (int, error) {
	if w.done {
		return w.out.Write(p)
	}
	w.pending = append(w.pending, p...)
	end := bytes.Index(w.pending, []byte("\r\n\r\n"))
	if end < 0 {
		if len(w.pending) > maxGoMailHead {
			return 0, errors.New("write mime message: no end of go-mail's header block")
		}
		return len(p), nil
	}
	var out bytes.Buffer
	out.Grow(len(w.head) + len(w.pending))
	out.Write(w.head)
	for _, f := range RawFields(string(w.pending[:end+2])) {
		if lower := strings.ToLower(f.Name); lower == "mime-version" || strings.HasPrefix(lower, "content-") {
			out.WriteString(f.Text)
		}
	}
	out.WriteString("\r\n")
	out.Write(w.pending[end+4:])
	w.done, w.pending = true, nil
	if _, err := w.out.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close reports a message whose header block never ended.
func (w *HeadWriter) Close() error {
	if !w.done {
		return errors.New("write mime message: no end of go-mail's header block")
	}
	return nil
}

// Envelope returns the SMTP envelope of msg: the sender address and every
// recipient address (To, Cc, then Bcc), without display names.
func Envelope(msg *core.Message) (from string, rcpts []string) {
	for _, a := range msg.Recipients() {
		rcpts = append(rcpts, a.Email)
	}
	return msg.From.Email, rcpts
}

// NewMessageID returns a fresh globally unique Message-ID value (without
// angle brackets) whose right-hand side is the domain of sender: it is
// core.NewMessageID.
func NewMessageID(sender string) (string, error) { return core.NewMessageID(sender) }

// contentType returns the attachment's declared type, or one guessed from
// its file name, or application/octet-stream.
func contentType(a core.Attachment) string {
	if ct := strings.TrimSpace(a.ContentType); ct != "" && !strings.ContainsAny(ct, "\r\n") {
		return ct
	}
	if ct := stdmime.TypeByExtension(path.Ext(a.Filename)); ct != "" {
		return ct
	}
	return "application/octet-stream"
}

// ValidHeaderName reports whether name is an RFC 5322 field name: printable
// US-ASCII except colon.
func ValidHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= 32 || c >= 127 || c == ':' {
			return false
		}
	}
	return true
}

// canonicalHeader returns the well-known spelling of a header name where it
// matters for lookups (Message-ID, Date) and the name as given otherwise.
func canonicalHeader(name string) string {
	switch {
	case strings.EqualFold(name, "Message-ID"):
		return string(gomail.HeaderMessageID)
	case strings.EqualFold(name, "Date"):
		return string(gomail.HeaderDate)
	}
	return name
}

// Unfold replaces line breaks with spaces so that a value stays one header.
func Unfold(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// ValidDomain reports whether d is a plain dot-atom domain (letters, digits,
// dots and hyphens) fit for the right-hand side of a Message-ID: it is
// core.PlainDomain.
func ValidDomain(d string) bool { return core.PlainDomain(d) }
