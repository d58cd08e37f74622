// Package fakeapi holds what the local fakes of the providers' mail APIs
// (test/fakes/sendgridfake, mailgunfake, postmarkfake, graphfake,
// zohomailfake, gmailfake, and rawmime's decoding) have in common: the
// decoded mailbox and attachment they record, the concurrency-safe log of
// what they accepted (messages, tokens seen), and the reading of a token
// from the Authorization header; and the server of a JSON mail API
// (NewServer) on which brevofake, sparkpostfake, mailjetfake,
// resendfake, smtp2gofake and mailersendfake each describe only their
// provider. Each fake keeps its own exported API; it aliases these types
// or calls these functions behind it.
package fakeapi

import (
	"net/http"
	"strings"
	"sync"
)

// Address is one decoded mailbox.
type Address struct {
	Name  string
	Email string
}

// Attachment is one decoded attachment with its raw bytes. ContentID is
// given without angle brackets or a "cid:" prefix.
type Attachment struct {
	Filename    string
	ContentType string
	Data        []byte
	Inline      bool
	ContentID   string
}

// Content is what every provider's recorded message holds alike, decoded:
// the recipients, the subject, the bodies and the other header fields. A
// fake's Message embeds it (or Mail) beside what is its own.
type Content struct {
	To      []Address
	Cc      []Address
	Bcc     []Address
	ReplyTo []Address
	Subject string
	Text    string
	HTML    string
	Headers map[string]string
}

// Mail is a recorded message with a plain sender and attachments of the
// shared shape.
type Mail struct {
	From Address
	Content
	Attachments []Attachment
	// Meta holds what else of the provider's own a fake notes (Mailjet's
	// CustomID).
	Meta map[string]string
}

// Log is an append-only list that is safe for concurrent use: the
// messages a fake accepted, the tokens its requests carried. Its zero
// value is an empty log.
type Log[T any] struct {
	mu    sync.Mutex
	items []T
}

// Add appends v.
func (l *Log[T]) Add(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, v)
}

// All returns a copy of every item, oldest first.
func (l *Log[T]) All() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.items...)
}

// Len returns how many items were added.
func (l *Log[T]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items)
}

// CheckToken reads the token after scheme (e.g. "Bearer ") in r's
// Authorization header, notes it in seen (refused ones too, as read), and
// reports whether it is there, not empty, and accepted by valid.
func CheckToken(r *http.Request, scheme string, seen *Log[string], valid func(token string) bool) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), scheme)
	seen.Add(tok)
	return tok, ok && tok != "" && valid(tok)
}
