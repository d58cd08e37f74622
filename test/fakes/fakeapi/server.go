package fakeapi

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/mail"
	"strconv"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// Provider describes a provider's JSON mail API to NewServer: what is
// the provider's own (its routes, credentials, body and answers); the
// server does the rest alike for every provider (recording, faults,
// rate limits).
type Provider struct {
	// Send is the send route ("POST /v3/smtp/email").
	Send string
	// Reads are the authenticated reads that check credentials without
	// sending ("GET /v3/account"), each answered 200 with ReadBody.
	Reads    []string
	ReadBody string
	// Authorized reports whether r carries the accepted credentials.
	Authorized func(r *http.Request) bool
	// UnauthorizedStatus (401 when 0) and UnauthorizedBody answer a
	// request without them.
	UnauthorizedStatus int
	UnauthorizedBody   string
	// Denied, when set, refuses an authorized request the key may not
	// make (a key with fewer permissions): a status other than 0 and
	// its body.
	Denied func(r *http.Request) (int, string)
	// Decode validates a send body as the provider does and returns the
	// message it carries, or a Refusal.
	Decode func(body []byte) (Mail, *Refusal)
	// Accept answers an accepted message (its ID set by the server).
	Accept func(w http.ResponseWriter, m Message)
	// ErrorBody is the provider's error body saying message.
	ErrorBody func(message string) string
	// RateLimitHeader is the header a 429 gives its wait in, in seconds
	// (Retry-After when empty).
	RateLimitHeader string
}

// Refusal is a send the provider refuses: its status and message.
type Refusal struct {
	Status  int
	Message string
}

// Refuse returns a 400 (or 422, as status says) Refusal of the message
// made from format and args.
func Refuse(status int, format string, args ...any) *Refusal {
	return &Refusal{Status: status, Message: fmt.Sprintf(format, args...)}
}

// Message is one accepted send, decoded.
type Message struct {
	ID string
	// At is when the fake accepted the message.
	At time.Time
	Mail
}

// Server is a running fake of a provider's JSON mail API. The embedded
// server's URL is the base URL to give the driver.
type Server struct {
	*faults.Server

	p           Provider
	messages    Log[Message]
	rateLimited Log[time.Time]
}

// NewServer starts a fake of the provider p.
func NewServer(p Provider) *Server {
	s := &Server{p: p}
	mux := http.NewServeMux()
	mux.HandleFunc(p.Send, s.handleSend)
	for _, route := range p.Reads {
		mux.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) {
			if s.authorized(w, r) {
				faults.WriteJSON(w, http.StatusOK, p.ReadBody)
			}
		})
	}
	s.Server = faults.NewServer(mux)
	return s
}

// Messages returns a copy of every accepted message, oldest first.
func (s *Server) Messages() []Message { return s.messages.All() }

// FailNext makes the next n requests, whatever their path, answer status
// with body (the provider's error body when body is empty).
func (s *Server) FailNext(n, status int, body string) {
	if body == "" {
		body = s.p.ErrorBody(fmt.Sprintf("simulated failure %d", status))
	}
	s.Server.FailNext(n, status, body)
}

// RateLimitNext makes the next n requests, whatever their path, answer
// 429 Too Many Requests in the provider's error shape with a wait of
// retryAfter in whole seconds (rounded up) in the provider's header.
func (s *Server) RateLimitNext(n int, retryAfter time.Duration) {
	secs := int(math.Ceil(retryAfter.Seconds()))
	header := s.p.RateLimitHeader
	if header == "" {
		header = "Retry-After"
	}
	s.Server.FailNextWith(n, func(w http.ResponseWriter, _ *http.Request) {
		s.rateLimited.Add(time.Now())
		w.Header().Set(header, strconv.Itoa(secs))
		faults.WriteJSON(w, http.StatusTooManyRequests, s.p.ErrorBody("Too many requests"))
	})
}

// RateLimited returns when each 429 of RateLimitNext was answered.
func (s *Server) RateLimited() []time.Time { return s.rateLimited.All() }

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.p.Authorized(r) {
		if s.p.Denied == nil {
			return true
		}
		status, body := s.p.Denied(r)
		if status == 0 {
			return true
		}
		faults.WriteJSON(w, status, body)
		return false
	}
	status := s.p.UnauthorizedStatus
	if status == 0 {
		status = http.StatusUnauthorized
	}
	faults.WriteJSON(w, status, s.p.UnauthorizedBody)
	return false
}

func (s *Server) handleSend(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		faults.WriteJSON(w, http.StatusUnsupportedMediaType, s.p.ErrorBody("Content-Type must be application/json, not "+ct))
		return
	}
	mail, refused := s.p.Decode(body)
	if refused != nil {
		faults.WriteJSON(w, refused.Status, s.p.ErrorBody(refused.Message))
		return
	}
	m := Message{ID: newID(), At: time.Now(), Mail: mail}
	s.messages.Add(m)
	s.p.Accept(w, m)
}

// DecodeStrict decodes a JSON request body into v as an API described
// by its schema does: a field the schema does not name is refused, so a
// misspelt field fails the test instead of being lost.
func DecodeStrict(body []byte, v any) *Refusal {
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return Refuse(http.StatusBadRequest, "invalid request body: %v", err)
	}
	return nil
}

// Base64 decodes an attachment's standard base64 content, refusing what
// is not base64 or is empty.
func Base64(field, content string) ([]byte, *Refusal) {
	data, err := base64.StdEncoding.DecodeString(content)
	if err != nil || content == "" {
		return nil, Refuse(http.StatusBadRequest, "%s must be non-empty base64", field)
	}
	return data, nil
}

// Addresses converts a provider's list of mailboxes with f.
func Addresses[T any](list []T, f func(T) Address) []Address {
	out := make([]Address, 0, len(list))
	for _, a := range list {
		out = append(out, f(a))
	}
	return out
}

// ParseMailboxes reads the "Name <email>" mailboxes of field, as the APIs
// that take addresses as strings do; the names may be RFC 2047 encoded.
func ParseMailboxes(field, s string) ([]Address, *Refusal) {
	list, err := mail.ParseAddressList(s)
	if err != nil {
		return nil, Refuse(http.StatusBadRequest, "invalid %s: %v", field, err)
	}
	return Addresses(list, func(a *mail.Address) Address { return Address{Name: a.Name, Email: a.Address} }), nil
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
