package smtp

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
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
// bytes drivers/mime and go-mail would write for it: the header block of
// drivers/mime (RenderHead), the same quoted-printable parts and
// multipart/alternative layout; only the random Message-ID, boundary and
// the Date differ from one rendering to the next
// (TestRenderMatchesGoMail holds the two side by side). go-mail
// builds a Msg of maps and slices, encodes every part into a buffer of
// its own and formats its headers with fmt and strings.Split for each
// message, which was a third of the driver's time per message on a
// pooled, pipelined session. A message with attachments is still built
// by drivers/mime with go-mail, its files streamed (stream.go).

// letter is a message ready for the wire: its envelope, its Message-ID
// and its data, either rendered (data) or a go-mail message (gm) written
// after its header block (head).
type letter struct {
	from  string   // the MAIL FROM argument, "<address>"
	rcpts []string // the RCPT TO arguments: the envelope (To, Cc, then Bcc) or the part of it a transaction sends to
	id    string   // the Message-ID header value, with its brackets
	data  *bytes.Buffer
	gm    *gomail.Msg
	head  mime.Head
	// utf8: the envelope or the header holds more than ASCII, so only a
	// server that offers SMTPUTF8 may take the letter as it is.
	utf8 bool
}

// newLetter prepares msg (validated, the connection's sender applied)
// for sending. With ascii, the letter is made for a server without
// SMTPUTF8: domains as A-labels, header text as encoded words, and an
// address whose local part is beyond ASCII refuses it (an error wrapping
// mime.ErrNeedsSMTPUTF8).
func newLetter(msg *core.Message, ascii bool) (*letter, error) {
	from, err := letterAddress(msg.From.Email, ascii)
	if err != nil {
		return nil, err
	}
	l := &letter{from: from}
	lists := [][]core.Address{msg.To, msg.Cc, msg.Bcc}
	if len(msg.Envelope) > 0 {
		lists = [][]core.Address{msg.Envelope}
	}
	for _, list := range lists {
		for _, a := range list {
			r, err := letterAddress(a.Email, ascii)
			if err != nil {
				return nil, err
			}
			l.rcpts = append(l.rcpts, r)
		}
	}
	if len(l.rcpts) == 0 {
		return nil, core.InvalidField("to", "At least one recipient is required.")
	}
	if strings.ContainsAny(l.from, "\r\n") || slices.ContainsFunc(l.rcpts, func(r string) bool { return strings.ContainsAny(r, "\r\n") }) {
		return nil, core.InvalidField("to", "An address contains a line break.")
	}
	head, err := mime.RenderHead(msg, time.Now(), ascii)
	if err != nil {
		return nil, err
	}
	l.id, l.head = head.MessageID, head
	l.utf8 = head.UTF8 || !isASCII(l.from) || slices.ContainsFunc(l.rcpts, func(r string) bool { return !isASCII(r) })
	if len(msg.Attachments) > 0 {
		m, err := mime.Compose(msg)
		if err != nil {
			return nil, err
		}
		l.gm = m
		return l, nil
	}
	buf := renderBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	if err := render(buf, msg, head); err != nil {
		renderBuffers.Put(buf)
		return nil, err
	}
	l.data = buf
	return l, nil
}

// letterAddress returns addr as the envelope carries it; with ascii, its
// domain as an A-label.
func letterAddress(addr string, ascii bool) (string, error) {
	if ascii {
		a, err := mime.ASCIIAddress(addr)
		if err != nil {
			return "", err
		}
		addr = a
	}
	return envelopeAddress(addr), nil
}

// isASCII reports whether s holds only 7-bit bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
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
	hw := mime.NewHeadWriter(w, l.head)
	if err := writeMessage(l.gm, hw); err != nil {
		return err
	}
	return hw.Close()
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

// render writes msg, which has no attachments, to buf after its header
// block head, in the bytes drivers/mime and go-mail would write.
func render(buf *bytes.Buffer, msg *core.Message, head mime.Head) error {
	alternative := msg.Text != "" && msg.HTML != ""
	buf.Write(head.Block)
	buf.WriteString("MIME-Version: 1.0\r\n")
	switch {
	case alternative:
		var random [30]byte
		if _, err := rand.Read(random[:]); err != nil {
			return fmt.Errorf("generate boundary: %w", err)
		}
		var boundary [60]byte
		hex.Encode(boundary[:], random[:])
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
				return err
			}
		}
		buf.WriteString("\r\n--")
		buf.Write(boundary[:])
		buf.WriteString("--\r\n")
	case msg.HTML != "":
		buf.WriteString("Content-Transfer-Encoding: quoted-printable\r\nContent-Type: text/html; charset=UTF-8\r\n\r\n")
		return writeQuotedPrintable(buf, msg.HTML)
	default:
		buf.WriteString("Content-Transfer-Encoding: quoted-printable\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n")
		return writeQuotedPrintable(buf, msg.Text)
	}
	return nil
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
