package sesfake

import "github.com/mailsvc/mailsvc/test/fakes/rawmime"

// Address is one decoded mailbox.
type Address = rawmime.Address

// Attachment is one decoded attachment with its raw bytes.
type Attachment = rawmime.Attachment

// ParsedMessage is a raw RFC 5322 message decoded the way a mail client
// reads it; Text and HTML keep the CR LF line breaks of the wire.
type ParsedMessage = rawmime.Message

// ParseMIME decodes a raw message: headers, addresses, subject, the text
// and HTML bodies and every attachment's bytes.
func ParseMIME(raw []byte) (*ParsedMessage, error) {
	return rawmime.Parse(raw)
}
