// Package postmarkfake is a local stand-in for the Postmark API that speaks
// its wire protocol closely enough for the keighl/postmark SDK: POST /email
// with the X-Postmark-Server-Token header and the JSON body (base64
// attachments, MessageStream), answered with {"MessageID":...,"ErrorCode":0},
// errors as {"ErrorCode":n,"Message":...} with 401 or 422, GET /server
// used to check the token without sending, and the outbound message
// search GET /messages/outbound (count, offset, messagestream and
// metadata_KEY filters). Every accepted message is
// recorded decoded. The fake can be told to fail or stall the next requests.
package postmarkfake

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"time"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// Address is one decoded mailbox.
type Address = fakeapi.Address

// Attachment is one decoded attachment with its raw bytes. Inline is true
// when the attachment has a ContentID; ContentID is given without the
// "cid:" prefix Postmark expects.
type Attachment = fakeapi.Attachment

// Message is one accepted /email request, decoded. MessageStream is the
// value sent ("" when the request left it out; Postmark then uses
// "outbound").
type Message struct {
	ID            string
	MessageStream string
	Tag           string
	Metadata      map[string]string
	fakeapi.Mail
}

// Server is a running fake. Its zero value is not usable; call New.
type Server struct {
	// The embedded server's URL is the base URL to give the SDK in place
	// of https://api.postmarkapp.com.
	*faults.Server

	token string

	messages fakeapi.Log[Message]
	mu       sync.Mutex
	streams  map[string]bool
	searches atomic.Int64
}

// New starts a fake whose only valid server token is token. It knows the
// message streams "outbound" and "broadcast"; AddStream adds more.
func New(token string) *Server {
	s := &Server{token: token, streams: map[string]bool{"outbound": true, "broadcast": true}}
	s.Server = faults.NewRoutedServer(faults.Routes{
		"POST /email":            s.handleSend,
		"GET /server":            s.handleServer,
		"GET /messages/outbound": s.handleSearch,
	})
	return s
}

// AddStream makes a message stream id known to the fake.
func (s *Server) AddStream(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streams[id] = true
}

// Messages returns a copy of every accepted message, oldest first.
func (s *Server) Messages() []Message { return s.messages.All() }

// FailNext makes the next n requests, whatever their path, answer status
// with body (a Postmark {"ErrorCode","Message"} JSON when body is empty).
func (s *Server) FailNext(n, status int, body string) {
	if body == "" {
		code := 300
		switch {
		case status == http.StatusUnauthorized:
			code = 10
		case status == http.StatusTooManyRequests:
			code = 429
		case status >= 500:
			code = 100
		}
		body = errorBody(code, fmt.Sprintf("simulated failure %d", status))
	}
	s.Server.FailNext(n, status, body)
}

// authorized checks the server token header as Postmark does and answers
// 401 with ErrorCode 10 when it is missing or wrong.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if tok := r.Header.Get("X-Postmark-Server-Token"); tok != "" && tok == s.token {
		return true
	}
	faults.WriteJSON(w, http.StatusUnauthorized, errorBody(10, "The Server Token you provided in the X-Postmark-Server-Token request header was invalid. Please verify that you are using a valid token."))
	return false
}

func (s *Server) handleServer(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	faults.WriteJSON(w, http.StatusOK, `{"ID":1,"Name":"Fake Server","ApiTokens":[],"Color":"blue","SmtpApiActivated":true,"RawEmailEnabled":false,"DeliveryType":"Live","ServerLink":"https://account.postmarkapp.com/servers/1/streams","TrackOpens":false,"TrackLinks":"None"}`)
}

type wireHeader struct {
	Name  string
	Value string
}

type wireAttachment struct {
	Name        string
	Content     string
	ContentType string
	ContentID   string
}

type wireEmail struct {
	From          string
	To            string
	Cc            string
	Bcc           string
	Subject       string
	Tag           string
	HtmlBody      string
	TextBody      string
	ReplyTo       string
	Headers       []wireHeader
	Attachments   []wireAttachment
	Metadata      map[string]string
	MessageStream string
}

// Searches returns how many outbound message searches the fake answered.
func (s *Server) Searches() int { return int(s.searches.Load()) }

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	q := r.URL.Query()
	count, err := strconv.Atoi(q.Get("count"))
	if err != nil || count < 1 || count > 500 {
		faults.WriteJSON(w, http.StatusUnprocessableEntity, errorBody(300, "The 'count' parameter is required and must be between 1 and 500."))
		return
	}
	offset, _ := strconv.Atoi(q.Get("offset"))
	s.searches.Add(1)
	var found []map[string]any
	for _, m := range s.messages.All() {
		stream := m.MessageStream
		if stream == "" {
			stream = "outbound"
		}
		if st := q.Get("messagestream"); st != "" && st != stream {
			continue
		}
		match := true
		for k, v := range q {
			if key, ok := strings.CutPrefix(k, "metadata_"); ok && m.Metadata[key] != v[0] {
				match = false
			}
		}
		if match {
			var rcpts []string
			for _, a := range m.To {
				rcpts = append(rcpts, a.Email)
			}
			found = append(found, map[string]any{"MessageID": m.ID, "Subject": m.Subject, "Status": "Sent",
				"Recipients": rcpts, "Metadata": m.Metadata, "MessageStream": stream, "ReceivedAt": time.Now().UTC().Format(time.RFC3339)})
		}
	}
	total := len(found)
	found = found[min(offset, total):min(offset+count, total)]
	body, _ := json.Marshal(map[string]any{"TotalCount": total, "Messages": found})
	faults.WriteJSON(w, http.StatusOK, string(body))
}

func (s *Server) handleSend(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		faults.WriteJSON(w, http.StatusUnprocessableEntity, errorBody(409, "JSON request required. Please make sure to set the Content-Type header to 'application/json'."))
		return
	}
	var in wireEmail
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		faults.WriteJSON(w, http.StatusUnprocessableEntity, errorBody(402, "Received invalid JSON input."))
		return
	}
	m, code, problem := s.decode(&in)
	if problem != "" {
		faults.WriteJSON(w, http.StatusUnprocessableEntity, errorBody(code, problem))
		return
	}
	m.ID = newUUID()
	s.messages.Add(m)
	body, _ := json.Marshal(map[string]any{
		"To":          in.To,
		"SubmittedAt": time.Now().UTC().Format(time.RFC3339Nano),
		"MessageID":   m.ID,
		"ErrorCode":   0,
		"Message":     "OK",
	})
	faults.WriteJSON(w, http.StatusOK, string(body))
}

// MaxPerField is the most addresses Postmark takes in each of To, Cc and
// Bcc; the fake answers 422 (ErrorCode 300) over it, as the API does.
const MaxPerField = 50

// decode validates an /email body as Postmark does and returns the recorded
// message, or Postmark's error code and message.
func (s *Server) decode(in *wireEmail) (Message, int, string) {
	m := Message{MessageStream: in.MessageStream, Tag: in.Tag, Metadata: in.Metadata,
		Mail: fakeapi.Mail{Content: fakeapi.Content{Subject: in.Subject, Text: in.TextBody, HTML: in.HtmlBody, Headers: map[string]string{}}}}
	from, err := mail.ParseAddress(in.From)
	if err != nil {
		return m, 300, fmt.Sprintf("Invalid 'From' address: '%s'.", in.From)
	}
	m.From = Address{Name: from.Name, Email: from.Address}
	var ok bool
	if m.To, ok = addressList(in.To); !ok {
		return m, 300, fmt.Sprintf("Error parsing 'To': Illegal email address '%s'.", in.To)
	}
	if m.Cc, ok = addressList(in.Cc); !ok {
		return m, 300, fmt.Sprintf("Error parsing 'Cc': Illegal email address '%s'.", in.Cc)
	}
	if m.Bcc, ok = addressList(in.Bcc); !ok {
		return m, 300, fmt.Sprintf("Error parsing 'Bcc': Illegal email address '%s'.", in.Bcc)
	}
	if len(m.To)+len(m.Cc)+len(m.Bcc) == 0 {
		return m, 300, "Zero recipients specified"
	}
	for field, list := range map[string][]Address{"To": m.To, "Cc": m.Cc, "Bcc": m.Bcc} {
		if len(list) > MaxPerField {
			return m, 300, fmt.Sprintf("Invalid '%s' address: too many recipients (%d); at most %d are allowed.", field, len(list), MaxPerField)
		}
	}
	if len(m.To) == 0 {
		return m, 300, "Invalid 'To' address: ''."
	}
	if m.ReplyTo, ok = addressList(in.ReplyTo); !ok {
		return m, 300, fmt.Sprintf("Invalid 'ReplyTo' address: '%s'.", in.ReplyTo)
	}
	if m.Text == "" && m.HTML == "" {
		return m, 300, "Provide either email TextBody or HtmlBody or both."
	}
	if in.MessageStream != "" {
		s.mu.Lock()
		known := s.streams[in.MessageStream]
		s.mu.Unlock()
		if !known {
			return m, 1235, fmt.Sprintf("The message stream for the provided 'ID' (%s) was not found.", in.MessageStream)
		}
	}
	for _, h := range in.Headers {
		m.Headers[h.Name] = h.Value
	}
	for _, a := range in.Attachments {
		if a.Name == "" {
			return m, 300, "Attachment Name is required."
		}
		data, err := base64.StdEncoding.DecodeString(a.Content)
		if err != nil {
			return m, 300, fmt.Sprintf("Attachment '%s' content is not valid base64.", a.Name)
		}
		cid := strings.TrimPrefix(a.ContentID, "cid:")
		m.Attachments = append(m.Attachments, Attachment{Filename: a.Name, ContentType: a.ContentType,
			Data: data, Inline: cid != "", ContentID: cid})
	}
	return m, 0, ""
}

func addressList(s string) ([]Address, bool) {
	if strings.TrimSpace(s) == "" {
		return nil, true
	}
	list, err := mail.ParseAddressList(s)
	if err != nil {
		return nil, false
	}
	out := make([]Address, 0, len(list))
	for _, a := range list {
		out = append(out, Address{Name: a.Name, Email: a.Address})
	}
	return out, true
}

func errorBody(code int, msg string) string {
	b, _ := json.Marshal(map[string]any{"ErrorCode": code, "Message": msg})
	return string(b)
}

// newUUID returns a random version 4 UUID, the shape of Postmark's MessageID.
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
