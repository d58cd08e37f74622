// Package rawmime decodes a raw RFC 5322 message the way a mail client
// reads it, for the fakes of the APIs that take one (Gmail, SES): the
// addresses, the subject, the other headers, the text and HTML bodies and
// every attachment's bytes. It uses only net/mail and mime/multipart, so
// that a fake checks what a driver built without sharing its code.
package rawmime

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
)

// Address is one decoded mailbox.
type Address = fakeapi.Address

// Attachment is one decoded attachment with its raw bytes; ContentID is
// without angle brackets.
type Attachment = fakeapi.Attachment

// Message is a raw message, decoded. Text and HTML keep the CR LF line
// breaks of the wire. Headers holds every header field the Message does not
// hold in its own fields, decoded; Header holds them all, as read. From is
// zero if the message has no From header; Bcc is there only if the raw
// message had a Bcc header.
type Message struct {
	Raw    []byte
	Header mail.Header
	fakeapi.Mail
	// ContentTypes lists the media type of every part, depth first, the
	// multipart containers included.
	ContentTypes []string
}

var wordDecoder = &mime.WordDecoder{}

// structural are the header fields a Message holds in its own fields
// rather than in Headers.
var structural = map[string]bool{
	"From": true, "To": true, "Cc": true, "Bcc": true, "Reply-To": true, "Subject": true,
	"Mime-Version": true, "Content-Type": true, "Content-Transfer-Encoding": true,
}

// Parse decodes a raw message. An address header that does not parse, an
// undecodable subject or a broken MIME tree is an error.
func Parse(raw []byte) (*Message, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("read message: %w", err)
	}
	m := &Message{Raw: raw, Header: msg.Header, Mail: fakeapi.Mail{Content: fakeapi.Content{Headers: map[string]string{}}}}
	if msg.Header.Get("From") != "" {
		from, err := msg.Header.AddressList("From")
		if err != nil || len(from) == 0 {
			return nil, fmt.Errorf("parse From: %v", err)
		}
		m.From = Address{Name: from[0].Name, Email: from[0].Address}
	}
	for _, f := range []struct {
		name string
		dst  *[]Address
	}{{"To", &m.To}, {"Cc", &m.Cc}, {"Bcc", &m.Bcc}, {"Reply-To", &m.ReplyTo}} {
		if msg.Header.Get(f.name) == "" {
			continue
		}
		list, err := msg.Header.AddressList(f.name)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", f.name, err)
		}
		for _, a := range list {
			*f.dst = append(*f.dst, Address{Name: a.Name, Email: a.Address})
		}
	}
	if m.Subject, err = wordDecoder.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return nil, fmt.Errorf("decode Subject: %w", err)
	}
	for name, values := range msg.Header {
		if structural[name] {
			continue
		}
		v, err := wordDecoder.DecodeHeader(strings.Join(values, ", "))
		if err != nil {
			v = strings.Join(values, ", ")
		}
		m.Headers[name] = v
	}
	if err := m.walk(msg.Header, msg.Body); err != nil {
		return nil, err
	}
	return m, nil
}

// partHeader is the subset of a part's header the walker reads.
type partHeader interface {
	Get(key string) string
}

func (m *Message) walk(h partHeader, body io.Reader) error {
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain; charset=us-ascii"
	}
	media, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return fmt.Errorf("parse Content-Type %q: %w", ct, err)
	}
	m.ContentTypes = append(m.ContentTypes, media)
	if strings.HasPrefix(media, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("read %s part: %w", media, err)
			}
			if err := m.walk(part.Header, part); err != nil {
				return err
			}
		}
	}
	data, err := decodeBody(h.Get("Content-Transfer-Encoding"), body)
	if err != nil {
		return fmt.Errorf("decode %s part: %w", media, err)
	}
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	filename := dparams["filename"]
	if filename == "" {
		filename = params["name"]
	}
	if dec, err := wordDecoder.DecodeHeader(filename); err == nil {
		filename = dec
	}
	attachment := disp == "attachment" || filename != ""
	switch {
	case !attachment && media == "text/plain" && m.Text == "":
		m.Text = string(data)
	case !attachment && media == "text/html" && m.HTML == "":
		m.HTML = string(data)
	default:
		m.Attachments = append(m.Attachments, Attachment{
			Filename:    filename,
			ContentType: media,
			Data:        data,
			Inline:      disp == "inline" || h.Get("Content-ID") != "",
			ContentID:   strings.Trim(strings.TrimSpace(h.Get("Content-ID")), "<>"),
		})
	}
	return nil
}

func decodeBody(cte string, body io.Reader) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "base64":
		// The decoder skips the CR LF line breaks of the encoded body.
		return io.ReadAll(base64.NewDecoder(base64.StdEncoding, body))
	case "quoted-printable":
		return io.ReadAll(quotedprintable.NewReader(body))
	default:
		return io.ReadAll(body)
	}
}
