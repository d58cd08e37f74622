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
	"fmt"
	stdmime "mime"
	"net/mail"
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

// Compose converts msg into a go-mail message ready to be written or sent
// with a go-mail client. It sets Date and Message-ID unless custom headers
// carry them; the Message-ID's domain is the sender's. Custom headers that
// would clash with the MIME structure (Content-Type, From, Bcc, ...) are
// ignored; custom header names must be RFC 5322 field names, and values are
// unfolded (CR and LF become spaces) so a header cannot inject another.
// Repeated custom header names are joined into one field with ", ".
func Compose(msg *core.Message) (*gomail.Msg, error) {
	if msg == nil {
		return nil, core.Errorf(core.EINVALID, "No message to build.")
	}
	if msg.From.Email == "" {
		return nil, core.InvalidField("from", "A sender address is required.")
	}
	m := gomail.NewMsg(gomail.WithNoDefaultUserAgent(), gomail.WithCharset(gomail.CharsetUTF8))

	m.FromMailAddress(&mail.Address{Name: msg.From.Name, Address: msg.From.Email})
	if len(msg.To) > 0 {
		m.ToMailAddress(mailAddresses(msg.To)...)
	}
	if len(msg.Cc) > 0 {
		m.CcMailAddress(mailAddresses(msg.Cc)...)
	}
	if len(msg.Bcc) > 0 {
		// Kept on the go-mail message so that a go-mail client puts the
		// addresses in the envelope; go-mail never writes a Bcc header.
		m.BccMailAddress(mailAddresses(msg.Bcc)...)
	}
	if len(msg.ReplyTo) > 0 {
		m.ReplyToMailAddress(mailAddresses(msg.ReplyTo)...)
	}
	m.Subject(Unfold(msg.Subject))
	m.SetGenHeader(gomail.HeaderXMailer, Mailer)

	custom := map[string][]string{}
	var order []string
	for _, h := range msg.Headers {
		name := strings.TrimSpace(h.Name)
		if !ValidHeaderName(name) {
			return nil, core.InvalidField("headers", fmt.Sprintf("Invalid header name %q.", h.Name))
		}
		if structuralHeaders[strings.ToLower(name)] {
			continue
		}
		canon := canonicalHeader(name)
		if _, seen := custom[canon]; !seen {
			order = append(order, canon)
		}
		custom[canon] = append(custom[canon], Unfold(h.Value))
	}
	for _, name := range order {
		switch name {
		case string(gomail.HeaderMessageID):
			id := strings.Trim(strings.TrimSpace(custom[name][0]), "<>")
			if id == "" || strings.ContainsAny(id, " \t<>") {
				return nil, core.InvalidField("headers", fmt.Sprintf("Invalid Message-ID %q.", custom[name][0]))
			}
			m.SetMessageIDWithValue(id)
		case string(gomail.HeaderDate):
			m.SetGenHeader(gomail.HeaderDate, custom[name][0])
		default:
			m.SetGenHeader(gomail.Header(name), custom[name]...)
		}
	}
	if m.GetMessageID() == "" {
		id, err := NewMessageID(msg.From.Email)
		if err != nil {
			return nil, err
		}
		m.SetMessageIDWithValue(id)
	}
	if _, ok := custom[string(gomail.HeaderDate)]; !ok {
		m.SetDateWithValue(time.Now())
	}

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
	m, err := Compose(msg)
	if err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		return nil, "", fmt.Errorf("write mime message: %w", err)
	}
	return buf.Bytes(), m.GetMessageID(), nil
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

func mailAddresses(in []core.Address) []*mail.Address {
	out := make([]*mail.Address, 0, len(in))
	for _, a := range in {
		out = append(out, &mail.Address{Name: a.Name, Address: a.Email})
	}
	return out
}

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
	switch strings.ToLower(name) {
	case "message-id":
		return string(gomail.HeaderMessageID)
	case "date":
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
