// Package sendgridfake is a local stand-in for the SendGrid v3 API that
// speaks its wire protocol closely enough for the real sendgrid-go SDK:
// POST /v3/mail/send with a Bearer API key and the v3 JSON body, answered
// with 202 and an X-Message-Id header, errors as {"errors":[...]}, and the
// authenticated reads GET /v3/scopes and GET /v3/user/account used to check
// credentials without sending. Every accepted message is recorded decoded.
// The fake can be told to fail or stall the next requests, or to answer
// them 429 Too Many Requests with a Retry-After, as SendGrid's rate limits
// do; it notes when each of those answers was given. EventWebhook signs
// Event Webhook calls as SendGrid does, and Malleate and
// NonCanonicalBase64 rewrite a signature the way a caller without the key
// can.
package sendgridfake

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// Address is one decoded mailbox.
type Address = fakeapi.Address

// Attachment is one decoded attachment with its raw bytes.
type Attachment = fakeapi.Attachment

// Message is one accepted mail/send request, decoded. Recipients of every
// personalization are merged in order.
type Message struct {
	ID string
	// At is when the fake accepted the message.
	At time.Time
	fakeapi.Mail
}

// Server is a running fake. Its zero value is not usable; call New.
type Server struct {
	// The embedded server's URL is the base URL to give the SDK in place
	// of https://api.sendgrid.com.
	*faults.Server

	apiKey string

	messages    fakeapi.Log[Message]
	rateLimited fakeapi.Log[time.Time]
}

// New starts a fake that accepts apiKey as its only valid API key.
func New(apiKey string) *Server {
	s := &Server{apiKey: apiKey}
	s.Server = faults.NewRoutedServer(faults.Routes{
		"POST /v3/mail/send":   s.handleSend,
		"GET /v3/scopes":       s.handleScopes,
		"GET /v3/user/account": s.handleAccount,
	})
	return s
}

// Messages returns a copy of every accepted message, oldest first.
func (s *Server) Messages() []Message { return s.messages.All() }

// FailNext makes the next n requests, whatever their path, answer status
// with body (a SendGrid error JSON when body is empty).
func (s *Server) FailNext(n, status int, body string) {
	if body == "" {
		body = errorBody(fmt.Sprintf("simulated failure %d", status), "")
	}
	s.Server.FailNext(n, status, body)
}

// RateLimitNext makes the next n requests, whatever their path, answer
// 429 Too Many Requests in SendGrid's shape ({"errors":[{"field":null,
// "message":"too many requests"}]} with its X-RateLimit-* headers), with a
// Retry-After header of retryAfter in whole seconds (rounded up): the
// standard HTTP hint a client honours (SendGrid's own is X-RateLimit-Reset,
// a Unix time, sent as well and consistent with it).
func (s *Server) RateLimitNext(n int, retryAfter time.Duration) {
	secs := int(math.Ceil(retryAfter.Seconds()))
	s.Server.FailNextWith(n, func(w http.ResponseWriter, _ *http.Request) {
		now := time.Now()
		s.rateLimited.Add(now)
		h := w.Header()
		h.Set("Retry-After", strconv.Itoa(secs))
		h.Set("X-RateLimit-Limit", "600")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(now.Add(time.Duration(secs)*time.Second).Unix(), 10))
		faults.WriteJSON(w, http.StatusTooManyRequests, `{"errors":[{"field":null,"message":"too many requests"}]}`)
	})
}

// RateLimited returns when each 429 of RateLimitNext was answered, oldest
// first.
func (s *Server) RateLimited() []time.Time { return s.rateLimited.All() }

// authorized checks the Bearer key exactly as SendGrid does and answers 401
// when it is missing or wrong.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") == "Bearer "+s.apiKey {
		return true
	}
	faults.WriteJSON(w, http.StatusUnauthorized, errorBody("The provided authorization grant is invalid, expired, or revoked", ""))
	return false
}

func (s *Server) handleScopes(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	faults.WriteJSON(w, http.StatusOK, `{"scopes":["mail.send","user.account.read","scopes.read"]}`)
}

func (s *Server) handleAccount(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	faults.WriteJSON(w, http.StatusOK, `{"type":"free","reputation":100}`)
}

// Wire shapes of the v3 mail/send body.
type wireEmail struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

type wirePersonalization struct {
	To      []wireEmail       `json:"to"`
	Cc      []wireEmail       `json:"cc"`
	Bcc     []wireEmail       `json:"bcc"`
	Subject string            `json:"subject"`
	Headers map[string]string `json:"headers"`
}

type wireAttachment struct {
	Content     string `json:"content"`
	Type        string `json:"type"`
	Filename    string `json:"filename"`
	Disposition string `json:"disposition"`
	ContentID   string `json:"content_id"`
}

type wireMail struct {
	Personalizations []wirePersonalization `json:"personalizations"`
	From             *wireEmail            `json:"from"`
	ReplyTo          *wireEmail            `json:"reply_to"`
	ReplyToList      []wireEmail           `json:"reply_to_list"`
	Subject          string                `json:"subject"`
	Content          []struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"content"`
	Attachments []wireAttachment  `json:"attachments"`
	Headers     map[string]string `json:"headers"`
	TemplateID  string            `json:"template_id"`
}

// reservedHeaders are the header names SendGrid refuses in "headers".
var reservedHeaders = []string{"x-sg-id", "x-sg-eid", "received", "dkim-signature", "content-type",
	"content-transfer-encoding", "to", "from", "subject", "reply-to", "cc", "bcc"}

func (s *Server) handleSend(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		faults.WriteJSON(w, http.StatusUnsupportedMediaType, errorBody("Content-Type should be application/json.", ""))
		return
	}
	var in wireMail
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		faults.WriteJSON(w, http.StatusBadRequest, errorBody("Bad Request", ""))
		return
	}
	msg, field, problem := decode(&in)
	if problem != "" {
		faults.WriteJSON(w, http.StatusBadRequest, errorBody(problem, field))
		return
	}
	msg.ID = newMessageID()
	msg.At = time.Now()
	s.messages.Add(msg)
	w.Header().Set("X-Message-Id", msg.ID)
	w.WriteHeader(http.StatusAccepted)
}

// MaxRecipients is the most recipients (to, cc and bcc, across the
// personalizations) SendGrid takes in one request; the fake answers 400
// over it, as the API does.
const MaxRecipients = 1000

// decode validates a mail/send body as SendGrid does and returns the
// recorded message, or the failing field and a message.
func decode(in *wireMail) (Message, string, string) {
	var m Message
	if in.From == nil || in.From.Email == "" {
		return m, "from.email", "The from object must be provided for every email send. It is an object that requires the email parameter, but may also contain a name parameter."
	}
	if len(in.Personalizations) == 0 {
		return m, "personalizations", "The personalizations field is required and must have at least one personalization."
	}
	m.From = Address{Name: in.From.Name, Email: in.From.Email}
	m.Subject = in.Subject
	m.Headers = map[string]string{}
	for i, p := range in.Personalizations {
		if len(p.To) == 0 {
			return m, fmt.Sprintf("personalizations.%d.to", i), "The to array is required for all personalization objects, and must have at least one email object with a valid email address."
		}
		m.To = append(m.To, addrs(p.To)...)
		m.Cc = append(m.Cc, addrs(p.Cc)...)
		m.Bcc = append(m.Bcc, addrs(p.Bcc)...)
		if p.Subject != "" {
			m.Subject = p.Subject
		}
		for k, v := range p.Headers {
			m.Headers[k] = v
		}
	}
	if n := len(m.To) + len(m.Cc) + len(m.Bcc); n > MaxRecipients {
		return m, "personalizations", fmt.Sprintf("The total number of recipients (%d) must be no more than %d. This includes all recipients defined within the to, cc, and bcc parameters, across each object that you include in the personalizations array.", n, MaxRecipients)
	}
	if m.Subject == "" && in.TemplateID == "" {
		return m, "subject", "The subject is required. You can get around this requirement if you use a template with a subject defined or if every personalization has a subject defined."
	}
	if in.ReplyTo != nil && len(in.ReplyToList) > 0 {
		return m, "reply_to", "reply_to and reply_to_list cannot both be set."
	}
	if in.ReplyTo != nil {
		m.ReplyTo = []Address{{Name: in.ReplyTo.Name, Email: in.ReplyTo.Email}}
	}
	m.ReplyTo = append(m.ReplyTo, addrs(in.ReplyToList)...)
	if len(in.Content) == 0 && in.TemplateID == "" {
		return m, "content", "Unless a valid template_id is provided, the content parameter is required. There must be at least one defined content block."
	}
	for _, c := range in.Content {
		switch c.Type {
		case "text/plain":
			m.Text = c.Value
		case "text/html":
			m.HTML = c.Value
		}
	}
	for k, v := range in.Headers {
		for _, r := range reservedHeaders {
			if strings.EqualFold(k, r) {
				return m, "headers", fmt.Sprintf("The %s header is a reserved header and cannot be set.", k)
			}
		}
		m.Headers[k] = v
	}
	for i, a := range in.Attachments {
		if a.Filename == "" {
			return m, fmt.Sprintf("attachments.%d.filename", i), "The attachment filename parameter is required."
		}
		if a.Content == "" {
			return m, fmt.Sprintf("attachments.%d.content", i), "The attachment content is required."
		}
		data, err := base64.StdEncoding.DecodeString(a.Content)
		if err != nil {
			return m, fmt.Sprintf("attachments.%d.content", i), "The attachment content must be base64 encoded."
		}
		inline := a.Disposition == "inline"
		if inline && a.ContentID == "" {
			return m, fmt.Sprintf("attachments.%d.content_id", i), "The content_id parameter is required if your attachment's disposition is inline."
		}
		m.Attachments = append(m.Attachments, Attachment{Filename: a.Filename, ContentType: a.Type,
			Data: data, Inline: inline, ContentID: a.ContentID})
	}
	return m, "", ""
}

func addrs(in []wireEmail) []Address {
	out := make([]Address, 0, len(in))
	for _, e := range in {
		out = append(out, Address{Name: e.Name, Email: e.Email})
	}
	return out
}

func errorBody(message, field string) string {
	type wireError struct {
		Message string  `json:"message"`
		Field   *string `json:"field"`
		Help    *string `json:"help"`
	}
	e := wireError{Message: message}
	if field != "" {
		e.Field = &field
	}
	b, _ := json.Marshal(map[string]any{"errors": []wireError{e}})
	return string(b)
}

// newMessageID returns an id shaped like SendGrid's X-Message-Id.
func newMessageID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
