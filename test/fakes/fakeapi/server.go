package fakeapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
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
	// ErrorBody is the provider's error body of an answer of status
	// saying message.
	ErrorBody func(status int, message string) string
	// RateLimitHeader is the header a 429 gives its wait in, in seconds
	// (Retry-After when empty).
	RateLimitHeader string
	// OpenAPI, when set, is the part of the provider's published OpenAPI
	// document that describes Send: every send is validated against it
	// (its path, credentials header and body schema) before Decode, and
	// refused InvalidStatus (400 when 0) with the validation's message
	// when it does not match.
	OpenAPI       []byte
	InvalidStatus int
	// MaxRecipients is the most recipients (To, Cc and Bcc) one send
	// takes, more refused 400 as the API does; 0: no cap.
	MaxRecipients int
	// IdempotencyHeader, when set, names the request header whose value
	// makes a send once: a send with a key the fake took before is
	// answered as the first was and not recorded again.
	IdempotencyHeader string
	// IdempotencyRefused, when set, answers (with a status and body) the
	// sends the provider refuses over their idempotency key, as Resend
	// does: a key longer than MaxIdempotencyKey, a key whose first send
	// is still in progress (see HoldSends), a key that came before with
	// another body. Nil: a repeated key is answered as the first whatever
	// the body.
	IdempotencyRefused func(p KeyProblem) (int, string)
	// MaxIdempotencyKey is the longest key IdempotencyRefused lets by.
	MaxIdempotencyKey int
}

// KeyProblem is why a provider refuses a send over its idempotency key.
type KeyProblem int

const (
	// KeyTooLong is a key over the provider's length.
	KeyTooLong KeyProblem = iota + 1
	// KeyInProgress is a key whose first send is still being handled.
	KeyInProgress
	// KeyReused is a key the provider took with another request body.
	KeyReused
)

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
	api         routers.Router
	messages    Log[Message]
	rateLimited Log[time.Time]
	sends       atomic.Int32

	mu       sync.Mutex
	answered map[string]*keyed // by idempotency key
	hold     chan struct{}     // while not nil, accepted sends wait for it to close
	held     int               // sends waiting on hold
}

// keyed is the first send of an idempotency key: its message, a digest
// of its body, and whether it is still being handled.
type keyed struct {
	m          Message
	body       [sha256.Size]byte
	inProgress bool
}

// NewServer starts a fake of the provider p.
func NewServer(p Provider) *Server {
	s := &Server{p: p}
	if len(p.OpenAPI) > 0 {
		s.api = OpenAPIRouter(p.OpenAPI)
	}
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

// SendCalls returns how many requests reached the send route, refused
// ones included.
func (s *Server) SendCalls() int { return int(s.sends.Load()) }

// FailNext makes the next n requests, whatever their path, answer status
// with body (the provider's error body when body is empty).
func (s *Server) FailNext(n, status int, body string) {
	if body == "" {
		body = s.p.ErrorBody(status, fmt.Sprintf("simulated failure %d", status))
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
		faults.WriteJSON(w, http.StatusTooManyRequests, s.p.ErrorBody(http.StatusTooManyRequests, "Too many requests"))
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
	s.sends.Add(1)
	if !s.authorized(w, r) {
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		faults.WriteJSON(w, http.StatusUnsupportedMediaType, s.p.ErrorBody(http.StatusUnsupportedMediaType, "Content-Type must be application/json, not "+ct))
		return
	}
	if s.api != nil {
		if err := ValidateRequest(s.api, r, body); err != nil {
			status := s.p.InvalidStatus
			if status == 0 {
				status = http.StatusBadRequest
			}
			faults.WriteJSON(w, status, s.p.ErrorBody(status, err.Error()))
			return
		}
	}
	mail, refused := s.p.Decode(body)
	if n := len(mail.To) + len(mail.Cc) + len(mail.Bcc); refused == nil && s.p.MaxRecipients > 0 && n > s.p.MaxRecipients {
		refused = Refuse(http.StatusBadRequest, "too many recipients: %d, at most %d", n, s.p.MaxRecipients)
	}
	if refused != nil {
		faults.WriteJSON(w, refused.Status, s.p.ErrorBody(refused.Status, refused.Message))
		return
	}
	key := ""
	if s.p.IdempotencyHeader != "" {
		key = r.Header.Get(s.p.IdempotencyHeader)
	}
	m, first, problem := s.take(key, sha256.Sum256(body), mail)
	if problem != 0 {
		status, answer := s.p.IdempotencyRefused(problem)
		faults.WriteJSON(w, status, answer)
		return
	}
	if first != nil {
		s.waitHold(r)
		s.mu.Lock()
		first.inProgress = false
		s.mu.Unlock()
	}
	s.p.Accept(w, m)
}

// take records mail as a new message, or finds the message of key's
// first send: it returns the message to answer with, the first send's
// record when this send is that first one (nil otherwise), or the
// problem the provider refuses the send over.
func (s *Server) take(key string, body [sha256.Size]byte, mail Mail) (Message, *keyed, KeyProblem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	refuses := s.p.IdempotencyRefused != nil && key != ""
	if refuses && s.p.MaxIdempotencyKey > 0 && len(key) > s.p.MaxIdempotencyKey {
		return Message{}, nil, KeyTooLong
	}
	if k, seen := s.answered[key]; seen && key != "" {
		switch {
		case refuses && k.inProgress:
			return Message{}, nil, KeyInProgress
		case refuses && k.body != body:
			return Message{}, nil, KeyReused
		}
		return k.m, nil, 0
	}
	m := Message{ID: NewID(), At: time.Now(), Mail: mail}
	s.messages.Add(m)
	if key == "" {
		return m, nil, 0
	}
	if s.answered == nil {
		s.answered = map[string]*keyed{}
	}
	k := &keyed{m: m, body: body, inProgress: true}
	s.answered[key] = k
	return m, k, 0
}

// HoldSends makes the sends with an idempotency key accepted from now
// on wait, taken (their key in progress) but not answered, until
// release is called or their client gives up: a provider slow to
// answer.
func (s *Server) HoldSends() (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.hold = ch
	s.mu.Unlock()
	return sync.OnceFunc(func() {
		s.mu.Lock()
		if s.hold == ch {
			s.hold = nil
		}
		s.mu.Unlock()
		close(ch)
	})
}

// HeldSends returns how many sends wait on HoldSends now.
func (s *Server) HeldSends() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// waitHold waits, when sends are held, until they are released or r's
// client gives up.
func (s *Server) waitHold(r *http.Request) {
	s.mu.Lock()
	ch := s.hold
	if ch != nil {
		s.held++
	}
	s.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-r.Context().Done():
	}
	s.mu.Lock()
	s.held--
	s.mu.Unlock()
}

// defineFormats teaches the OpenAPI validator the string formats the
// providers' documents use: email (an address net/mail reads) and byte
// (standard base64).
var defineFormats = sync.OnceFunc(func() {
	openapi3.DefineStringFormatValidator("email", openapi3.NewCallbackValidator(func(s string) error {
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return fmt.Errorf("not an email address")
		}
		return nil
	}))
	openapi3.DefineStringFormatValidator("byte", openapi3.NewCallbackValidator(func(s string) error {
		_, err := base64.StdEncoding.DecodeString(s)
		return err
	}))
})

// OpenAPIRouter loads a provider's OpenAPI document and routes on it; a
// document that does not load is the fake's own bug, so it panics.
func OpenAPIRouter(doc []byte) routers.Router {
	defineFormats()
	d, err := openapi3.NewLoader().LoadFromData(doc)
	if err == nil {
		err = d.Validate(context.Background())
	}
	if err != nil {
		panic(fmt.Sprintf("fakeapi: the provider's OpenAPI document: %v", err))
	}
	// The fake runs on a loopback port: a server on the provider's host
	// is dropped (its document's paths are whole), a relative one ("/v4",
	// its paths under it) kept.
	var relative openapi3.Servers
	for _, srv := range d.Servers {
		if strings.HasPrefix(srv.URL, "/") {
			relative = append(relative, srv)
		}
	}
	d.Servers = relative
	router, err := gorillamux.NewRouter(d)
	if err != nil {
		panic(fmt.Sprintf("fakeapi: route the provider's OpenAPI document: %v", err))
	}
	return router
}

// ValidateRequest checks a request r and its body (read already)
// against the provider's OpenAPI document that api routes on.
func ValidateRequest(api routers.Router, r *http.Request, body []byte) error {
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := api.FindRoute(req)
	if err != nil {
		return fmt.Errorf("not in the provider's API: %w", err)
	}
	err = openapi3filter.ValidateRequest(r.Context(), &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	})
	// A refusal names the field and the reason, not the whole schema.
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return fmt.Errorf("/%s: %s", strings.Join(se.JSONPointer(), "/"), se.Reason)
	}
	return err
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

// Strict returns a Provider's Decode for a send body of type T: the body
// read as DecodeStrict does (a field T does not name refused), then
// checked and turned into the message by read.
func Strict[T any](read func(in *T) (Mail, *Refusal)) func(body []byte) (Mail, *Refusal) {
	return func(body []byte) (Mail, *Refusal) {
		var in T
		if r := DecodeStrict(body, &in); r != nil {
			return Mail{}, r
		}
		return read(&in)
	}
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

// SetEnvelope sets m's sender, To, Cc and Bcc, and its one Reply-To
// (none when replyTo is nil), from a provider's own mailboxes, each
// converted with f.
func SetEnvelope[T any](m *Mail, f func(T) Address, from T, to, cc, bcc []T, replyTo *T) {
	m.From = f(from)
	m.To, m.Cc, m.Bcc = Addresses(to, f), Addresses(cc, f), Addresses(bcc, f)
	if replyTo != nil {
		m.ReplyTo = []Address{f(*replyTo)}
	}
}

// ParseMailboxList is ParseMailboxes of each of list, the mailboxes of
// one field taken as a list of strings; nil for none.
func ParseMailboxList(field string, list []string) ([]Address, *Refusal) {
	var out []Address
	for _, s := range list {
		a, r := ParseMailboxes(field, s)
		if r != nil {
			return nil, r
		}
		out = append(out, a...)
	}
	return out, nil
}

// ParseRecipients sets m's To, Cc and Bcc from the lists of "Name
// <email>" strings of the fields to, cc and bcc.
func ParseRecipients(m *Mail, to, cc, bcc []string) *Refusal {
	for _, l := range []struct {
		field string
		in    []string
		out   *[]Address
	}{{"to", to, &m.To}, {"cc", cc, &m.Cc}, {"bcc", bcc, &m.Bcc}} {
		list, r := ParseMailboxList(l.field, l.in)
		if r != nil {
			return r
		}
		*l.out = list
	}
	return nil
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

// NewID returns a random message id.
func NewID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
