package mailparse

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
	"time"

	"golang.org/x/net/idna"

	"github.com/mailsvc/mailsvc/core"
)

// Trace describes one intake of a message, for the Received field that
// the intake adds on top of the message's header (RFC 5321 §4.4).
type Trace struct {
	// Helo is the name the client gave in EHLO or HELO; empty for a
	// local submission (`mailsvc sendmail`).
	Helo string
	// ClientHost is the client's name by reverse DNS, or "".
	ClientHost string
	// ClientIP is the client's IP address.
	ClientIP string
	// By is the name of the host that takes the message.
	By string
	// Comment is written after By in parentheses, e.g. "mailsvc".
	Comment string
	// With is the protocol: ESMTP, ESMTPS, ESMTPA, ESMTPSA (RFC 3848)
	// or "local".
	With string
	// ID identifies the intake (NewTraceID).
	ID string
	// For is the one envelope recipient; "" when there are several.
	For string
	// Date is when the message was taken.
	Date time.Time
}

// Field returns the Received field, ended by CRLF: "from HELO (host
// [ip])" (left out for a local submission), "by", "with", "id", "for"
// when set, and the date, folded after the first clause with tabs.
func (t Trace) Field() string {
	var b strings.Builder
	b.Grow(traceFieldSize)
	t.writeField(&b)
	return b.String()
}

// traceFieldSize is room for a usual Received field, made once.
const traceFieldSize = 256

// writeField writes the Received field (Field) to b.
func (t Trace) writeField(b *strings.Builder) {
	b.WriteString("Received:")
	if t.Helo != "" || t.ClientIP != "" {
		b.WriteString(" from ")
		b.WriteString(traceToken(t.Helo, "unknown"))
		b.WriteString(" (")
		if t.ClientHost != "" {
			b.WriteString(traceToken(t.ClientHost, ""))
			b.WriteString(" ")
		}
		b.WriteString("[" + traceToken(t.ClientIP, "") + "])\r\n\t")
	} else {
		b.WriteString(" ")
	}
	b.WriteString("by ")
	b.WriteString(traceToken(t.By, "localhost"))
	if t.Comment != "" {
		b.WriteString(" (" + traceCommentCleaner.Replace(t.Comment) + ")")
	}
	b.WriteString(" with " + traceToken(t.With, "ESMTP"))
	if t.ID != "" {
		b.WriteString(" id " + traceToken(t.ID, ""))
	}
	if t.For != "" {
		b.WriteString("\r\n\tfor <" + traceToken(asciiDomain(t.For), "") + ">")
	}
	b.WriteString("; ")
	b.Write(t.Date.AppendFormat(make([]byte, 0, len(time.RFC1123Z)), time.RFC1123Z))
	b.WriteString("\r\n")
}

// traceCommentCleaner drops from a comment what would end it or the line.
var traceCommentCleaner = strings.NewReplacer("(", "", ")", "", "\r", "", "\n", "")

// AddTrace puts t's Received field on top of msg's header block. A
// message without one (its header too large to keep) is left alone.
func AddTrace(msg *core.Message, t Trace) {
	if msg.RawHeader == "" {
		return
	}
	var b strings.Builder
	b.Grow(traceFieldSize + len(msg.RawHeader))
	t.writeField(&b)
	b.WriteString(msg.RawHeader)
	msg.RawHeader = b.String()
}

// NewTraceID returns a fresh intake id: 12 upper-case base32 characters.
func NewTraceID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return traceIDEncoding.EncodeToString(b[:])[:12]
}

// traceIDEncoding is the encoding of the intake ids.
var traceIDEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// traceToken keeps s to the characters a Received token may hold (no
// white space, parentheses, angle brackets or semicolons); fallback when
// nothing is left.
func traceToken(s, fallback string) string {
	s = strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("()<>;\\\"", r) {
			return -1
		}
		return r
	}, s)
	if s == "" {
		return fallback
	}
	return s
}

// asciiDomain returns addr with its domain as an A-label when it is an
// internationalised domain name, else addr as it is.
func asciiDomain(addr string) string {
	at := strings.LastIndexByte(addr, '@')
	if at < 0 || isLowerLDH(addr[at+1:]) && !strings.Contains(addr[at+1:], "xn--") {
		// A domain of lower-case letters, digits, hyphens and dots and
		// no A-label is its own A-label, or one idna refuses: either way
		// it stays.
		return addr
	}
	if d, err := idna.Lookup.ToASCII(addr[at+1:]); err == nil {
		return addr[:at+1] + d
	}
	return addr
}

// isLowerLDH reports whether s holds only lower-case ASCII letters,
// digits, hyphens and dots.
func isLowerLDH(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '.' {
			return false
		}
	}
	return true
}
