package core

import (
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"net/mail"
	"strings"
)

// Address is one mailbox: an optional display name and an email address.
type Address struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email"`
}

// String renders the address as an RFC 5322 mailbox.
func (a Address) String() string {
	if a.Name == "" {
		return a.Email
	}
	return (&mail.Address{Name: a.Name, Address: a.Email}).String()
}

// ParseAddress parses "Name <user@example.com>" or "user@example.com".
func ParseAddress(s string) (Address, error) {
	a, err := mail.ParseAddress(strings.TrimSpace(s))
	if err != nil {
		return Address{}, fmt.Errorf("parse address %q: %w", s, err)
	}
	return Address{Name: a.Name, Email: a.Address}, nil
}

// ValidEmail reports whether s is a bare email address (no display name).
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && strings.Contains(s, "@")
}

// Header is one custom message header, in the order it was given.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Attachment is one file carried by a message. Data is the raw bytes.
type Attachment struct {
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Data        []byte `json:"-"`
	// Inline attachments are referenced from the HTML part by ContentID.
	Inline    bool   `json:"inline,omitempty"`
	ContentID string `json:"content_id,omitempty"`
	// Size is the attachment's size in bytes when Data does not hold its
	// bytes (a log that kept its name, type and size only); 0 otherwise.
	Size int `json:"-"`
}

// Message is an email as a transport sends it. At least one of Text and
// HTML is set; To, Cc and Bcc together hold at least one recipient.
type Message struct {
	From        Address      `json:"from"`
	To          []Address    `json:"to"`
	Cc          []Address    `json:"cc,omitempty"`
	Bcc         []Address    `json:"bcc,omitempty"`
	ReplyTo     []Address    `json:"reply_to,omitempty"`
	Subject     string       `json:"subject"`
	Text        string       `json:"text,omitempty"`
	HTML        string       `json:"html,omitempty"`
	Headers     []Header     `json:"headers,omitempty"`
	Attachments []Attachment `json:"attachments,omitempty"`
	// RawHeader is the header block of a message received whole (the SMTP
	// listener, `mailsvc sendmail`), lines ended by CRLF, the intake's
	// Received field first: the delivered message carries these fields as
	// they came. To, Cc and Bcc are then the envelope (where the message
	// goes), which may differ from the To and Cc fields of RawHeader. Empty
	// for a message given as fields (wp_mail(), the REST API), whose
	// header is built from the fields.
	RawHeader string `json:"raw_header,omitempty"`
	// Envelope, when set, lists the recipients one send delivers to in
	// place of To, Cc and Bcc, which then shape only the headers (To and
	// Cc as written, Bcc never shown). The delivery engine sets it for a
	// part of a message split at a provider's recipient caps and for a
	// retry of the deferred recipients; it is never stored.
	Envelope []Address `json:"-"`
	// Resends counts the times the message's log was resent by hand
	// (Log.Resends) before this send. The delivery engine sets it and it
	// is never stored: a resend by hand is a new sending of the same
	// message, which a provider's idempotency key must not take for a
	// repeat of the first (apidriver.IdempotencyKey).
	Resends int `json:"-"`
}

// Recipients returns every envelope recipient: To, then Cc, then Bcc.
func (m *Message) Recipients() []Address {
	out := make([]Address, 0, len(m.To)+len(m.Cc)+len(m.Bcc))
	out = append(out, m.To...)
	out = append(out, m.Cc...)
	return append(out, m.Bcc...)
}

// Validate checks that the message can be handed to a transport.
func (m *Message) Validate() error {
	fields := map[string]string{}
	if !ValidEmail(m.From.Email) {
		fields["from"] = "A valid sender address is required."
	}
	rcpts := m.Recipients()
	if len(rcpts) == 0 {
		fields["to"] = "At least one recipient is required."
	}
	for _, r := range rcpts {
		if !ValidEmail(r.Email) {
			fields["to"] = fmt.Sprintf("Invalid recipient address %q.", r.Email)
			break
		}
	}
	return Invalid(fields)
}

// MessageIDHeader is the name of the Message-ID header.
const MessageIDHeader = "Message-ID"

// MessageID returns the value of the message's own Message-ID header
// (its name in any case), with its angle brackets, or "" when it has none.
func (m *Message) MessageID() string {
	for _, h := range m.Headers {
		if strings.EqualFold(h.Name, MessageIDHeader) {
			return strings.TrimSpace(h.Value)
		}
	}
	return ""
}

// WithMessageID returns a copy of m whose Message-ID header is id (with
// its angle brackets): the header's value is replaced when m has one,
// else the header is added. m's header slice is not changed.
func (m *Message) WithMessageID(id string) *Message {
	out := *m
	out.Headers = make([]Header, 0, len(m.Headers)+1)
	set := false
	for _, h := range m.Headers {
		if strings.EqualFold(h.Name, MessageIDHeader) {
			if set {
				continue
			}
			h.Value, set = id, true
		}
		out.Headers = append(out.Headers, h)
	}
	if !set {
		out.Headers = append(out.Headers, Header{Name: MessageIDHeader, Value: id})
	}
	return &out
}

// messageIDEncoding is base32 in lower case, without padding: the
// left-hand side of a new Message-ID.
var messageIDEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewMessageID returns a fresh globally unique Message-ID value (without
// angle brackets) whose right-hand side is the domain of sender, or
// mailsvc.localhost when that is not a plain domain.
func NewMessageID(sender string) (string, error) {
	domain := "mailsvc.localhost"
	if i := strings.LastIndexByte(sender, '@'); i >= 0 && PlainDomain(sender[i+1:]) {
		domain = strings.ToLower(sender[i+1:])
	}
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate message id: %w", err)
	}
	return messageIDEncoding.EncodeToString(b[:]) + "@" + domain, nil
}

// PlainDomain reports whether d is a plain dot-atom domain (letters,
// digits, dots and hyphens) fit for the right-hand side of a Message-ID.
func PlainDomain(d string) bool {
	if d == "" || d[0] == '.' || d[len(d)-1] == '.' {
		return false
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		ok := c == '.' || c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !ok {
			return false
		}
	}
	return true
}
