// Package gmailfake is a local stand-in for the Gmail API's
// users.messages.send and users.getProfile, speaking their wire protocol:
//
//   - POST /gmail/v1/users/me/messages/send with JSON {"raw": base64url
//     RFC 5322} (padded or not), and POST
//     /upload/gmail/v1/users/me/messages/send?uploadType=media with the raw
//     message as message/rfc822; both answer the Message resource
//     {"id","threadId","labelIds":["SENT"]}.
//   - GET /gmail/v1/users/me/profile answers {"emailAddress",...}, or 403
//     insufficientPermissions when the fake plays a token limited to the
//     gmail.send scope.
//
// Every request needs "Authorization: Bearer <token>" with a token the
// test's validator accepts (the OAuth fake's Valid), else 401 in Google's
// error shape. Accepted messages are decoded (net/mail, mime/multipart) and
// recorded with their attachments' bytes. Faults come from test/fakes/faults.
package gmailfake

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
	"github.com/mailsvc/mailsvc/test/fakes/rawmime"
)

// MaxJSONRaw is the largest raw message the JSON send endpoint takes; a
// larger one must go through the upload endpoint.
const MaxJSONRaw = 5 << 20

// Address is one decoded mailbox.
type Address = rawmime.Address

// Attachment is one decoded attachment with its raw bytes.
type Attachment = rawmime.Attachment

// Message is one accepted message, decoded. Upload is true when it came
// through the media upload endpoint. Bcc holds the Bcc header of the raw
// message (Gmail delivers to it and removes it). Headers holds every other
// header field, decoded.
type Message struct {
	ID       string
	ThreadID string
	Upload   bool
	Token    string
	rawmime.Message
}

// Server is a running fake. Its zero value is not usable; call New.
type Server struct {
	// The embedded server's URL is the base URL to use in place of
	// https://gmail.googleapis.com.
	*faults.Server

	valid func(token string) bool

	messages  fakeapi.Log[Message]
	tokenSeen fakeapi.Log[string]
	mu        sync.Mutex
	email     string
	sendOnly  bool
}

// New starts a fake that accepts the bearer tokens valid approves.
func New(valid func(token string) bool) *Server {
	s := &Server{valid: valid, email: "me@example.com"}
	s.Server = faults.NewRoutedServer(faults.Routes{
		"POST /gmail/v1/users/me/messages/send":        s.handleSend,
		"POST /upload/gmail/v1/users/me/messages/send": s.handleUpload,
		"GET /gmail/v1/users/me/profile":               s.handleProfile,
	})
	return s
}

// SetProfile sets the mailbox address users.getProfile answers.
func (s *Server) SetProfile(email string) { faults.Set(&s.mu, &s.email, email) }

// SetSendOnly makes users.getProfile refuse every token for its scopes,
// as Google does for a token granted only gmail.send.
func (s *Server) SetSendOnly(on bool) { faults.Set(&s.mu, &s.sendOnly, on) }

// Messages returns a copy of every accepted message, oldest first.
func (s *Server) Messages() []Message { return s.messages.All() }

// Tokens returns the bearer tokens of every request, oldest first, the
// refused ones included.
func (s *Server) Tokens() []string { return s.tokenSeen.All() }

// FailNext makes the next n requests, whatever their path, answer status
// in Google's error shape.
func (s *Server) FailNext(n, status int) {
	s.Server.FailNext(n, status, ErrorBody(status, reasonFor(status), fmt.Sprintf("simulated failure %d", status)))
}

func reasonFor(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authError"
	case status == http.StatusForbidden:
		return "forbidden"
	case status == http.StatusTooManyRequests:
		return "rateLimitExceeded"
	case status >= 500:
		return "backendError"
	}
	return "badRequest"
}

var statusNames = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
}

// ErrorBody returns a Google API error answer.
func ErrorBody(status int, reason, message string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code":    status,
		"message": message,
		"errors":  []map[string]string{{"message": message, "domain": "global", "reason": reason}},
		"status":  statusNames[status],
	}})
	return string(b)
}

// authorized checks the bearer token and answers 401 as Google does when
// it is missing or refused.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) (string, bool) {
	if tok, ok := fakeapi.CheckToken(r, "Bearer ", &s.tokenSeen, s.valid); ok {
		return tok, true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
	faults.WriteJSON(w, http.StatusUnauthorized, ErrorBody(http.StatusUnauthorized, "authError",
		"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."))
	return "", false
}

func (s *Server) handleProfile(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.authorized(w, r); !ok {
		return
	}
	s.mu.Lock()
	email, sendOnly := s.email, s.sendOnly
	s.mu.Unlock()
	if sendOnly {
		faults.WriteJSON(w, http.StatusForbidden, ErrorBody(http.StatusForbidden, "insufficientPermissions",
			"Request had insufficient authentication scopes."))
		return
	}
	b, _ := json.Marshal(map[string]any{"emailAddress": email, "messagesTotal": 0, "threadsTotal": 0, "historyId": "1"})
	faults.WriteJSON(w, http.StatusOK, string(b))
}

func (s *Server) handleSend(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.authorized(w, r)
	if !ok {
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "badRequest", "Invalid JSON payload received. Expected application/json."))
		return
	}
	var in struct {
		Raw      string `json:"raw"`
		ThreadID string `json:"threadId"`
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, &in)
	}
	if err != nil {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "badRequest", "Invalid JSON payload received."))
		return
	}
	if in.Raw == "" {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "invalidArgument", "'raw' RFC822 payload message string or uploading message via /upload/* URL required"))
		return
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(in.Raw, "="))
	if err != nil {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "invalidArgument", "Invalid value for ByteString: raw is not base64url."))
		return
	}
	if len(raw) > MaxJSONRaw {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "badRequest", fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", MaxJSONRaw)))
		return
	}
	s.accept(w, raw, tok, false)
}

func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.authorized(w, r)
	if !ok {
		return
	}
	if r.URL.Query().Get("uploadType") != "media" {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "badRequest", "Invalid upload request: uploadType must be media in this fake."))
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "message/rfc822" {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "badContent", "Media type '"+ct+"' is not supported. Valid media types: [message/*]"))
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "badRequest", "Could not read the upload."))
		return
	}
	s.accept(w, raw, tok, true)
}

// MaxRecipients is the most recipients (to, cc and bcc) of one message
// Gmail takes from a consumer account; the fake answers 400 over it.
const MaxRecipients = 500

// accept decodes and records a raw message and answers its Message
// resource; a message Gmail would refuse gets 400 invalidArgument.
func (s *Server) accept(w http.ResponseWriter, raw []byte, token string, upload bool) {
	m, err := Parse(raw)
	if err != nil {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "invalidArgument", "Invalid RFC822 message: "+err.Error()))
		return
	}
	if len(m.To)+len(m.Cc)+len(m.Bcc) == 0 {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "invalidArgument", "Recipient address required"))
		return
	}
	if n := len(m.To) + len(m.Cc) + len(m.Bcc); n > MaxRecipients {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "invalidArgument", fmt.Sprintf("Too many recipients: %d (at most %d per message)", n, MaxRecipients)))
		return
	}
	m.ID, m.ThreadID, m.Upload, m.Token = newID(), newID(), upload, token
	s.messages.Add(m)
	b, _ := json.Marshal(map[string]any{"id": m.ID, "threadId": m.ThreadID, "labelIds": []string{"SENT"}})
	faults.WriteJSON(w, http.StatusOK, string(b))
}

// newID returns a random 16-hex-digit id, the shape of Gmail's ids.
func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
