package gmailfake

import (
	"fmt"
	"net/mail"
	"strings"

	"github.com/mailsvc/mailsvc/test/fakes/rawmime"
)

// Parse decodes a raw RFC 5322 message the way a mail client reads it:
// addresses, subject, the other headers, the text and HTML bodies (with
// plain LF line breaks, as a client shows them) and every attachment's
// bytes. A message without a From header is an error, as Gmail refuses it.
func Parse(raw []byte) (Message, error) {
	p, err := rawmime.Parse(raw)
	if err != nil {
		return Message{}, err
	}
	if p.Header.Get("From") == "" {
		return Message{}, fmt.Errorf("parse From: %w", mail.ErrHeaderNotPresent)
	}
	p.Text, p.HTML = lines(p.Text), lines(p.HTML)
	return Message{Message: *p}, nil
}

// lines returns a text body with the CR LF line breaks of the wire as
// plain LF, as a mail client shows it.
func lines(data string) string {
	return strings.ReplaceAll(data, "\r\n", "\n")
}
