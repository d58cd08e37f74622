package sesfake

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
)

// Address is one decoded mailbox.
type Address struct {
	Name  string
	Email string
}

// Attachment is one decoded attachment with its raw bytes.
type Attachment struct {
	Filename    string
	ContentType string
	Data        []byte
	Inline      bool
	ContentID   string // without angle brackets
}

// ParsedMessage is a raw RFC 5322 message decoded the way a mail client
// reads it.
type ParsedMessage struct {
	Header      mail.Header
	From        Address
	To          []Address
	Cc          []Address
	Bcc         []Address // present only if the raw message had a Bcc header
	ReplyTo     []Address
	Subject     string
	Text        string
	HTML        string
	Attachments []Attachment
	// ContentTypes lists the media type of every part, depth first, the
	// multipart containers included.
	ContentTypes []string
}

var wordDecoder = &mime.WordDecoder{}

// ParseMIME decodes a raw message: headers, addresses, subject, the text
// and HTML bodies and every attachment's bytes.
func ParseMIME(raw []byte) (*ParsedMessage, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("read message: %w", err)
	}
	p := &ParsedMessage{Header: msg.Header}
	if msg.Header.Get("From") != "" {
		from, err := msg.Header.AddressList("From")
		if err != nil || len(from) == 0 {
			return nil, fmt.Errorf("parse From: %v", err)
		}
		p.From = Address{Name: from[0].Name, Email: from[0].Address}
	}
	for _, f := range []struct {
		name string
		dst  *[]Address
	}{{"To", &p.To}, {"Cc", &p.Cc}, {"Bcc", &p.Bcc}, {"Reply-To", &p.ReplyTo}} {
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
	if p.Subject, err = wordDecoder.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return nil, fmt.Errorf("decode Subject: %w", err)
	}
	if err := p.walk(msg.Header, msg.Body); err != nil {
		return nil, err
	}
	return p, nil
}

// partHeader is the subset of a part's header the walker reads.
type partHeader interface {
	Get(key string) string
}

func (p *ParsedMessage) walk(h partHeader, body io.Reader) error {
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain; charset=us-ascii"
	}
	media, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return fmt.Errorf("parse Content-Type %q: %w", ct, err)
	}
	p.ContentTypes = append(p.ContentTypes, media)
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
			if err := p.walk(part.Header, part); err != nil {
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
	if filename != "" {
		if dec, err := wordDecoder.DecodeHeader(filename); err == nil {
			filename = dec
		}
	}
	isAttachment := disp == "attachment" || disp == "inline" && filename != "" || filename != ""
	switch {
	case !isAttachment && media == "text/plain" && p.Text == "":
		p.Text = string(data)
	case !isAttachment && media == "text/html" && p.HTML == "":
		p.HTML = string(data)
	default:
		p.Attachments = append(p.Attachments, Attachment{
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
