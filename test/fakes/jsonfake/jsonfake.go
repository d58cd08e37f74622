// Package jsonfake is the machinery of the local fakes of the providers
// whose mail API takes one JSON request per message (elasticemailfake,
// mandrillfake, mailtrapfake, sendlayerfake, smtpcomfake, emailitfake):
// the key checked where the provider reads it, each send request
// validated against the part of the provider's published OpenAPI
// description the fake carries (when the provider publishes one) and then
// decoded by the provider's own rules, the recipient cap answered 400 as
// the API does, the accepted messages recorded, the authenticated reads
// a credentials check makes, and the faults of test/fakes/faults plus a
// 429 with Retry-After. A provider's fake package holds only its wire
// shapes and rules, in an API.
package jsonfake

import (
	"encoding/base64"
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

	"github.com/getkin/kin-openapi/routers"
	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// API describes one provider's JSON mail API to the fake.
type API struct {
	// Send is the send route, method and path ("POST /api/send").
	Send string
	// Reads are the authenticated reads a credentials check may make
	// ("GET /v4/account"), each answered ReadAnswer.
	Reads      []string
	ReadAnswer string
	// Key returns the API key a request carries, read where the provider
	// reads it (a header, or the JSON body).
	Key func(r *http.Request, body []byte) string
	// OpenAPI, when set, is the provider's published description of the
	// send route (YAML or JSON); a send request it does not allow is
	// answered 400 with the validation's message.
	OpenAPI []byte
	// Decode reads a send body as the provider does: the message, or the
	// problem it answers 400 for.
	Decode func(body []byte) (fakeapi.Mail, string)
	// Accepted returns the status and body of the answer to an accepted
	// message m with the fake's id for it.
	Accepted func(id string, m fakeapi.Mail) (int, string)
	// Error returns the provider's error body for an answer of status.
	Error func(status int, message string) string
	// UnauthorizedStatus is the status of a wrong or missing key: 401
	// when 0.
	UnauthorizedStatus int
	// MaxRecipients is the most recipients (To, Cc and Bcc) one send
	// takes; 0: no cap.
	MaxRecipients int
	// IdempotencyHeader, when set, names the request header whose value
	// makes a send once: a send with a key the fake took before is
	// answered as the first was and not recorded again.
	IdempotencyHeader string
}

// Message is one accepted send request, decoded.
type Message = fakeapi.Message

// Server is a running fake. Its zero value is not usable; call New.
type Server struct {
	// The embedded server's URL is the base URL to give the driver.
	*faults.Server

	api    API
	key    string
	router routers.Router

	messages    fakeapi.Log[Message]
	rateLimited fakeapi.Log[time.Time]
	sends       atomic.Int32

	mu       sync.Mutex
	answered map[string]answer // by idempotency key
}

// answer is a send's answer, kept for its idempotency key.
type answer struct {
	status int
	body   string
}

// New starts a fake of api that accepts key as its only valid API key.
// It panics when api.OpenAPI does not load: a fake's own description is
// fixed test data.
func New(api API, key string) *Server {
	s := &Server{api: api, key: key}
	if api.OpenAPI != nil {
		s.router = fakeapi.OpenAPIRouter(api.OpenAPI)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(api.Send, s.handleSend)
	for _, r := range api.Reads {
		mux.HandleFunc(r, s.handleRead)
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
		body = s.api.Error(status, fmt.Sprintf("simulated failure %d", status))
	}
	s.Server.FailNext(n, status, body)
}

// RateLimitNext makes the next n requests, whatever their path, answer
// 429 Too Many Requests in the provider's error shape with a Retry-After
// of retryAfter in whole seconds (rounded up).
func (s *Server) RateLimitNext(n int, retryAfter time.Duration) {
	secs := int(math.Ceil(retryAfter.Seconds()))
	s.Server.FailNextWith(n, func(w http.ResponseWriter, _ *http.Request) {
		s.rateLimited.Add(time.Now())
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		faults.WriteJSON(w, http.StatusTooManyRequests, s.api.Error(http.StatusTooManyRequests, "Too many requests"))
	})
}

// RateLimited returns when each 429 of RateLimitNext was answered, oldest
// first.
func (s *Server) RateLimited() []time.Time { return s.rateLimited.All() }

// authorized reads the request's body and checks its key; it answers the
// provider's refusal and returns false when the key is missing or wrong.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		faults.WriteJSON(w, http.StatusBadRequest, s.api.Error(http.StatusBadRequest, "unreadable body"))
		return nil, false
	}
	if k := s.api.Key(r, body); k == "" || k != s.key {
		status := s.api.UnauthorizedStatus
		if status == 0 {
			status = http.StatusUnauthorized
		}
		faults.WriteJSON(w, status, s.api.Error(http.StatusUnauthorized, "Invalid API key"))
		return nil, false
	}
	return body, true
}

func (s *Server) handleRead(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.authorized(w, r); ok {
		faults.WriteJSON(w, http.StatusOK, s.api.ReadAnswer)
	}
}

func (s *Server) handleSend(w http.ResponseWriter, r *http.Request) {
	s.sends.Add(1)
	body, ok := s.authorized(w, r)
	if !ok {
		return
	}
	if problem := s.validate(r, body); problem != "" {
		faults.WriteJSON(w, http.StatusBadRequest, s.api.Error(http.StatusBadRequest, problem))
		return
	}
	m, problem := s.api.Decode(body)
	if problem == "" && s.api.MaxRecipients > 0 {
		if n := len(m.To) + len(m.Cc) + len(m.Bcc); n > s.api.MaxRecipients {
			problem = fmt.Sprintf("too many recipients: %d, at most %d", n, s.api.MaxRecipients)
		}
	}
	if problem != "" {
		faults.WriteJSON(w, http.StatusBadRequest, s.api.Error(http.StatusBadRequest, problem))
		return
	}
	key := ""
	if s.api.IdempotencyHeader != "" {
		key = r.Header.Get(s.api.IdempotencyHeader)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.answered[key]; ok && key != "" {
		faults.WriteJSON(w, a.status, a.body)
		return
	}
	id := fakeapi.NewID()
	s.messages.Add(Message{ID: id, At: time.Now(), Mail: m})
	status, reply := s.api.Accepted(id, m)
	if key != "" {
		if s.answered == nil {
			s.answered = map[string]answer{}
		}
		s.answered[key] = answer{status, reply}
	}
	faults.WriteJSON(w, status, reply)
}

// validate checks the request against the OpenAPI description, when the
// fake has one, and returns the problem.
func (s *Server) validate(r *http.Request, body []byte) string {
	if s.router == nil {
		return ""
	}
	if err := fakeapi.ValidateRequest(s.router, r, body); err != nil {
		return err.Error()
	}
	return ""
}

// Mailboxes parses "Name <email>" strings (or bare addresses), as the
// APIs that take a mailbox as one string read them; problem names the
// first that does not parse.
func Mailboxes(list []string) (out []fakeapi.Address, problem string) {
	for _, s := range list {
		a, err := mail.ParseAddress(s)
		if err != nil {
			return out, "invalid address " + s
		}
		out = append(out, fakeapi.Address{Name: a.Name, Email: a.Address})
	}
	return out, ""
}

// TakeReplyTo moves a Reply-To header (any case) out of headers into the
// message's Reply-To addresses, as the APIs that carry several Reply-To
// addresses as a header apply it; it returns the problem when the
// header's value is not an address list.
func TakeReplyTo(m *fakeapi.Mail) string {
	for k, v := range m.Headers {
		if !strings.EqualFold(k, "Reply-To") {
			continue
		}
		list, err := mail.ParseAddressList(v)
		if err != nil {
			return "Reply-To is not an address list"
		}
		for _, a := range list {
			m.ReplyTo = append(m.ReplyTo, fakeapi.Address{Name: a.Name, Email: a.Address})
		}
		delete(m.Headers, k)
	}
	return ""
}

// File is one attachment as a JSON API carries it, read into the
// recorded form: base64 content, the disposition "inline" with a
// Content-ID for an inline image.
func File(filename, contentType, content, disposition, contentID string) (fakeapi.Attachment, string) {
	data, err := base64.StdEncoding.DecodeString(content)
	if err != nil || filename == "" {
		return fakeapi.Attachment{}, "an attachment needs a file name and base64 content"
	}
	a := fakeapi.Attachment{Filename: filename, ContentType: contentType, Data: data}
	switch disposition {
	case "", "attachment":
	case "inline":
		if contentID == "" {
			return a, "an inline attachment needs a content id"
		}
		a.Inline, a.ContentID = true, contentID
	default:
		return a, "disposition must be attachment or inline"
	}
	return a, ""
}
