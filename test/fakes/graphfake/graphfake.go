// Package graphfake is a local stand-in for the Microsoft Graph mail API
// (v1.0) that speaks its wire protocol at its real paths under /v1.0, for
// the mailbox of the token ("me") or a named one ("users/{id}"):
//
//	POST /v1.0/{mailbox}/sendMail                       send a JSON message (202)
//	GET  /v1.0/{mailbox}                                the user (a read for Verify)
//	POST /v1.0/{mailbox}/messages                       create a draft (201 with its id)
//	POST /v1.0/{mailbox}/messages/{id}/attachments      add a file attachment to a draft
//	POST /v1.0/{mailbox}/messages/{id}/attachments/createUploadSession
//	PUT  /upload/{session}?authtoken=...                one chunk (Content-Range), no Authorization
//	POST /v1.0/{mailbox}/messages/{id}/send             send the draft (202)
//	DELETE /v1.0/{mailbox}/messages/{id}                drop a draft
//
// Every /v1.0 request must carry "Authorization: Bearer <token>" with a
// token the test's validator accepts (oauthfake's Valid), else 401
// InvalidAuthenticationToken. Request bodies over 4 MB are refused with
// 413, as Graph does, so large attachments must go through an upload
// session; createUploadSession refuses attachments under 3 MB. Errors use
// Graph's envelope {"error":{"code","message","innerError"}}, and every
// answer carries a request-id header. Each sent message is recorded
// decoded, attachments with their bytes. Faults are injected through the
// embedded faults.Server.
package graphfake

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// Limits Graph applies and the fake enforces.
const (
	// MaxRequestBytes is the largest JSON request Graph takes (4 MB).
	MaxRequestBytes = 4 << 20
	// MinUploadSessionBytes is the smallest attachment an upload session
	// takes (3 MB).
	MinUploadSessionBytes = 3 << 20
	// MaxChunkBytes is the largest chunk one PUT to an upload URL takes.
	MaxChunkBytes = 4 << 20
	// MaxRecipients is Exchange Online's default recipient limit of one
	// message (to, cc and bcc).
	MaxRecipients = 500
)

// Address is one decoded recipient or sender.
type Address = fakeapi.Address

// Attachment is one decoded file attachment with its bytes. Uploaded is
// true when it came through an upload session.
type Attachment struct {
	fakeapi.Attachment
	Uploaded bool
}

// Message is one sent message, decoded. ID is the draft id for a message
// sent as a draft, else the request-id of the sendMail call. Mailbox is
// "me" or the user id of the path. Exactly one of Text and HTML is set,
// per the body's contentType.
type Message struct {
	ID              string
	Mailbox         string
	Draft           bool
	SaveToSentItems bool
	From            *Address
	fakeapi.Content
	Attachments []Attachment
}

// Server is a running fake. Its zero value is not usable; call New.
type Server struct {
	// The embedded server's URL, with "/v1.0", is the Graph base URL.
	*faults.Server

	valid func(token string) bool

	messages fakeapi.Log[Message]
	tokens   fakeapi.Log[string] // bearer tokens seen, in order
	mu       sync.Mutex
	drafts   map[string]*Message
	uploads  map[string]*upload
	chunks   int
}

// upload is one open upload session.
type upload struct {
	draft     string
	authtoken string
	att       Attachment
	size      int
}

// New starts a fake that accepts the bearer tokens valid approves.
func New(valid func(token string) bool) *Server {
	s := &Server{valid: valid, drafts: map[string]*Message{}, uploads: map[string]*upload{}}
	mux := http.NewServeMux()
	for _, mb := range []string{"/v1.0/me", "/v1.0/users/{user}"} {
		mux.HandleFunc("POST "+mb+"/sendMail", s.api(s.handleSendMail))
		mux.HandleFunc("GET "+mb, s.api(s.handleUser))
		mux.HandleFunc("POST "+mb+"/messages", s.api(s.handleCreateDraft))
		mux.HandleFunc("POST "+mb+"/messages/{id}/attachments", s.api(s.handleAddAttachment))
		mux.HandleFunc("POST "+mb+"/messages/{id}/attachments/createUploadSession", s.api(s.handleCreateUploadSession))
		mux.HandleFunc("POST "+mb+"/messages/{id}/send", s.api(s.handleSendDraft))
		mux.HandleFunc("DELETE "+mb+"/messages/{id}", s.api(s.handleDeleteDraft))
	}
	mux.HandleFunc("PUT /upload/{session}", s.withRequestID(s.handleUploadChunk))
	mux.HandleFunc("/", s.withRequestID(func(w http.ResponseWriter, _ *http.Request) {
		WriteError(w, http.StatusNotFound, "UnknownError", "Resource not found for the segment.")
	}))
	s.Server = faults.NewServer(mux)
	return s
}

// BaseURL is the Graph base URL of the fake, URL + "/v1.0".
func (s *Server) BaseURL() string { return s.URL + "/v1.0" }

// Messages returns a copy of every sent message, oldest first.
func (s *Server) Messages() []Message { return s.messages.All() }

// Drafts returns how many drafts exist (created, not yet sent or deleted).
func (s *Server) Drafts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.drafts)
}

// Chunks returns how many upload chunks the fake accepted.
func (s *Server) Chunks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chunks
}

// Tokens returns the bearer tokens of the /v1.0 requests, in order,
// refused ones included.
func (s *Server) Tokens() []string { return s.tokens.All() }

// FailNext makes the next n requests answer status in Graph's error
// envelope, with Retry-After on 429 and 503.
func (s *Server) FailNext(n, status int) {
	code := map[int]string{
		http.StatusUnauthorized:       "InvalidAuthenticationToken",
		http.StatusForbidden:          "ErrorAccessDenied",
		http.StatusBadRequest:         "ErrorInvalidRecipients",
		http.StatusTooManyRequests:    "ApplicationThrottled",
		http.StatusServiceUnavailable: "ServiceNotAvailable",
	}[status]
	if code == "" {
		code = "generalException"
	}
	s.FailNextWith(n, func(w http.ResponseWriter, _ *http.Request) {
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		w.Header().Set("request-id", newID())
		WriteError(w, status, code, fmt.Sprintf("simulated failure %d", status))
	})
}

// WriteError answers status with Graph's error envelope.
func WriteError(w http.ResponseWriter, status int, code, message string) {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": code, "message": message,
		"innerError": map[string]string{"request-id": w.Header().Get("request-id"), "date": time.Now().UTC().Format(time.RFC3339)},
	}})
	faults.WriteJSON(w, status, string(body))
}

// withRequestID gives every answer a request-id header.
func (s *Server) withRequestID(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("request-id", newID())
		h(w, r)
	}
}

// api checks the bearer token and the body size of a /v1.0 request.
func (s *Server) api(h func(w http.ResponseWriter, r *http.Request, mailbox string)) http.HandlerFunc {
	return s.withRequestID(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := fakeapi.CheckToken(r, "Bearer ", &s.tokens, s.valid); !ok {
			WriteError(w, http.StatusUnauthorized, "InvalidAuthenticationToken", "Access token is empty or invalid.")
			return
		}
		if r.ContentLength > MaxRequestBytes {
			WriteError(w, http.StatusRequestEntityTooLarge, "ErrorRequestEntityTooLarge", "The request is too large.")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
		mailbox := "me"
		if u := r.PathValue("user"); u != "" {
			mailbox = u
		}
		h(w, r, mailbox)
	})
}

// The JSON shapes of Graph's message resource. Their fields read each
// key into the field of its name in any case, as encoding/json matches
// keys; a tag names a key that differs otherwise.
type (
	emailAddress   struct{ Address, Name string }
	recipient      struct{ EmailAddress emailAddress }
	fileAttachment struct {
		ODataType                       string `json:"@odata.type"`
		Name, ContentType, ContentBytes string
		IsInline                        bool
		ContentID                       string
	}
	message struct {
		Subject                                   string
		Body                                      *struct{ ContentType, Content string }
		From                                      *recipient
		ToRecipients, CcRecipients, BccRecipients []recipient
		ReplyTo                                   []recipient
		InternetMessageHeaders                    []header
		Attachments                               []fileAttachment
	}
	header struct{ Name, Value string }
)

// decode reads a JSON body into v, answering 400 (or 413) when it cannot.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, http.StatusRequestEntityTooLarge, "ErrorRequestEntityTooLarge", "The request is too large.")
		return false
	}
	if err := json.Unmarshal(data, v); err != nil {
		WriteError(w, http.StatusBadRequest, "RequestBodyRead", "Invalid JSON: "+err.Error())
		return false
	}
	return true
}

// convert checks and decodes a message resource; it answers 400 and
// returns false when Graph would refuse it.
func convert(w http.ResponseWriter, in message, mailbox string, needRecipients bool) (*Message, bool) {
	m := &Message{Mailbox: mailbox, Content: fakeapi.Content{Subject: in.Subject, Headers: map[string]string{}}}
	addrs := func(rs []recipient) []Address {
		var out []Address
		for _, r := range rs {
			out = append(out, Address{Name: r.EmailAddress.Name, Email: r.EmailAddress.Address})
		}
		return out
	}
	m.To, m.Cc, m.Bcc, m.ReplyTo = addrs(in.ToRecipients), addrs(in.CcRecipients), addrs(in.BccRecipients), addrs(in.ReplyTo)
	for _, list := range [][]Address{m.To, m.Cc, m.Bcc, m.ReplyTo} {
		for _, a := range list {
			if !strings.Contains(a.Email, "@") {
				WriteError(w, http.StatusBadRequest, "ErrorInvalidRecipients", "At least one recipient isn't valid.")
				return nil, false
			}
		}
	}
	if n := len(m.To) + len(m.Cc) + len(m.Bcc); n > MaxRecipients {
		WriteError(w, http.StatusBadRequest, "ErrorTooManyRecipients", fmt.Sprintf("A message can't have more than %d recipients.", MaxRecipients))
		return nil, false
	}
	if needRecipients && len(m.To)+len(m.Cc)+len(m.Bcc) == 0 {
		WriteError(w, http.StatusBadRequest, "ErrorInvalidRecipients", "At least one recipient is required.")
		return nil, false
	}
	if in.From != nil {
		m.From = &Address{Name: in.From.EmailAddress.Name, Email: in.From.EmailAddress.Address}
	}
	if in.Body != nil {
		// bodyType's members are "text" and "html" in Microsoft's
		// metadata; the fake takes exactly those.
		switch in.Body.ContentType {
		case "html":
			m.HTML = in.Body.Content
		case "text", "":
			m.Text = in.Body.Content
		default:
			WriteError(w, http.StatusBadRequest, "RequestBodyRead", "Unknown body contentType "+in.Body.ContentType)
			return nil, false
		}
	}
	for _, h := range in.InternetMessageHeaders {
		if !strings.HasPrefix(strings.ToLower(h.Name), "x-") {
			WriteError(w, http.StatusBadRequest, "InvalidInternetMessageHeader",
				fmt.Sprintf("The internet message header name '%s' should start with 'x-' or 'X-'.", h.Name))
			return nil, false
		}
		m.Headers[h.Name] = h.Value
	}
	for _, a := range in.Attachments {
		att, ok := convertAttachment(w, a)
		if !ok {
			return nil, false
		}
		m.Attachments = append(m.Attachments, att)
	}
	return m, true
}

func convertAttachment(w http.ResponseWriter, a fileAttachment) (Attachment, bool) {
	if a.ODataType != "#microsoft.graph.fileAttachment" {
		WriteError(w, http.StatusBadRequest, "RequestBodyRead", "Unknown attachment type "+a.ODataType)
		return Attachment{}, false
	}
	data, err := base64.StdEncoding.DecodeString(a.ContentBytes)
	if err != nil {
		WriteError(w, http.StatusBadRequest, "ErrorInvalidBase64String", "Invalid base64 string for attachment content.")
		return Attachment{}, false
	}
	return Attachment{Attachment: fakeapi.Attachment{Filename: a.Name, ContentType: a.ContentType, Data: data, Inline: a.IsInline, ContentID: a.ContentID}}, true
}

func (s *Server) handleSendMail(w http.ResponseWriter, r *http.Request, mailbox string) {
	var req struct {
		Message         *message `json:"message"`
		SaveToSentItems *bool    `json:"saveToSentItems"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.Message == nil {
		WriteError(w, http.StatusBadRequest, "ErrorInvalidParameter", "The message parameter is missing.")
		return
	}
	m, ok := convert(w, *req.Message, mailbox, true)
	if !ok {
		return
	}
	m.ID = w.Header().Get("request-id")
	m.SaveToSentItems = req.SaveToSentItems == nil || *req.SaveToSentItems
	s.messages.Add(*m)
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) handleUser(w http.ResponseWriter, _ *http.Request, mailbox string) {
	id := mailbox
	if id == "me" {
		id = "00000000-0000-0000-0000-000000000001"
	}
	body, _ := json.Marshal(map[string]string{"id": id, "userPrincipalName": "user@contoso.test", "mail": "user@contoso.test"})
	faults.WriteJSON(w, http.StatusOK, string(body))
}

func (s *Server) handleCreateDraft(w http.ResponseWriter, r *http.Request, mailbox string) {
	var in message
	if !decode(w, r, &in) {
		return
	}
	m, ok := convert(w, in, mailbox, false)
	if !ok {
		return
	}
	m.ID = "AAMk" + newID()
	m.Draft = true
	m.SaveToSentItems = true
	s.mu.Lock()
	s.drafts[m.ID] = m
	s.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"id": m.ID, "isDraft": true, "subject": m.Subject})
	faults.WriteJSON(w, http.StatusCreated, string(body))
}

// withDraft runs f on the draft of the path under the server's lock,
// answering 404 when there is none.
func (s *Server) withDraft(w http.ResponseWriter, r *http.Request, mailbox string, f func(m *Message)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.drafts[r.PathValue("id")]
	if m == nil || m.Mailbox != mailbox {
		WriteError(w, http.StatusNotFound, "ErrorItemNotFound", "The specified object was not found in the store.")
		return
	}
	f(m)
}

func (s *Server) handleAddAttachment(w http.ResponseWriter, r *http.Request, mailbox string) {
	var in fileAttachment
	if !decode(w, r, &in) {
		return
	}
	att, ok := convertAttachment(w, in)
	if !ok {
		return
	}
	s.withDraft(w, r, mailbox, func(m *Message) {
		m.Attachments = append(m.Attachments, att)
		faults.WriteJSON(w, http.StatusCreated, `{"id":"att-`+newID()+`"}`)
	})
}

func (s *Server) handleCreateUploadSession(w http.ResponseWriter, r *http.Request, mailbox string) {
	var in struct {
		AttachmentItem *struct {
			AttachmentType string `json:"attachmentType"`
			Name           string `json:"name"`
			Size           int    `json:"size"`
			ContentType    string `json:"contentType"`
			IsInline       bool   `json:"isInline"`
			ContentID      string `json:"contentId"`
		} `json:"AttachmentItem"`
	}
	if !decode(w, r, &in) {
		return
	}
	it := in.AttachmentItem
	if it == nil || it.AttachmentType != "file" || it.Name == "" {
		WriteError(w, http.StatusBadRequest, "ErrorInvalidParameter", "AttachmentItem with attachmentType file and a name is required.")
		return
	}
	if it.Size < MinUploadSessionBytes {
		WriteError(w, http.StatusBadRequest, "ErrorAttachmentSizeShouldNotBeLessThanMinimumSize",
			"Attachment size must be greater than the minimum size.")
		return
	}
	s.withDraft(w, r, mailbox, func(m *Message) {
		id, auth := newID(), newID()
		s.uploads[id] = &upload{draft: m.ID, authtoken: auth, size: it.Size,
			att: Attachment{Attachment: fakeapi.Attachment{Filename: it.Name, ContentType: it.ContentType, Inline: it.IsInline, ContentID: it.ContentID}, Uploaded: true}}
		body, _ := json.Marshal(map[string]any{
			"uploadUrl":          s.URL + "/upload/" + id + "?authtoken=" + auth,
			"expirationDateTime": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			"nextExpectedRanges": []string{"0-"},
		})
		faults.WriteJSON(w, http.StatusCreated, string(body))
	})
}

// handleUploadChunk takes one chunk of an upload session: Content-Range
// "bytes first-last/total" starting where the last chunk ended.
func (s *Server) handleUploadChunk(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		// The upload URL carries its own token; Graph refuses a bearer token.
		WriteError(w, http.StatusUnauthorized, "InvalidAuthenticationToken", "Do not send an Authorization header to an upload URL.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	up := s.uploads[r.PathValue("session")]
	if up == nil || r.URL.Query().Get("authtoken") != up.authtoken {
		WriteError(w, http.StatusNotFound, "ErrorItemNotFound", "Unknown upload session.")
		return
	}
	first, last, total, err := contentRange(r.Header.Get("Content-Range"))
	if err != nil || total != up.size || first != len(up.att.Data) || last-first+1 > MaxChunkBytes {
		WriteError(w, http.StatusBadRequest, "InvalidContentRange", fmt.Sprintf("Bad Content-Range %q (have %d of %d bytes).",
			r.Header.Get("Content-Range"), len(up.att.Data), up.size))
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxChunkBytes+1))
	if err != nil || len(data) != last-first+1 {
		WriteError(w, http.StatusBadRequest, "InvalidContentRange", "The body does not match Content-Range.")
		return
	}
	up.att.Data = append(up.att.Data, data...)
	s.chunks++
	if len(up.att.Data) < up.size {
		body, _ := json.Marshal(map[string]any{
			"expirationDateTime": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			"nextExpectedRanges": []string{strconv.Itoa(len(up.att.Data)) + "-"},
		})
		faults.WriteJSON(w, http.StatusOK, string(body))
		return
	}
	delete(s.uploads, r.PathValue("session"))
	if m := s.drafts[up.draft]; m != nil {
		m.Attachments = append(m.Attachments, up.att)
	}
	w.Header().Set("Location", s.URL+"/v1.0/me/messages/"+up.draft+"/attachments/att-"+newID())
	w.WriteHeader(http.StatusCreated)
}

// contentRange parses "bytes first-last/total".
func contentRange(v string) (first, last, total int, err error) {
	spec, ok := strings.CutPrefix(v, "bytes ")
	rng, tot, ok2 := strings.Cut(spec, "/")
	a, b, ok3 := strings.Cut(rng, "-")
	if !ok || !ok2 || !ok3 {
		return 0, 0, 0, fmt.Errorf("malformed Content-Range %q", v)
	}
	if first, err = strconv.Atoi(a); err != nil {
		return
	}
	if last, err = strconv.Atoi(b); err != nil {
		return
	}
	if total, err = strconv.Atoi(tot); err != nil {
		return
	}
	if last < first {
		err = fmt.Errorf("empty range %q", v)
	}
	return
}

func (s *Server) handleSendDraft(w http.ResponseWriter, r *http.Request, mailbox string) {
	s.withDraft(w, r, mailbox, func(m *Message) {
		if len(m.To)+len(m.Cc)+len(m.Bcc) == 0 {
			WriteError(w, http.StatusBadRequest, "ErrorInvalidRecipients", "At least one recipient is required.")
			return
		}
		for _, up := range s.uploads {
			if up.draft == m.ID {
				WriteError(w, http.StatusBadRequest, "ErrorUploadInProgress", "An attachment upload is not finished.")
				return
			}
		}
		delete(s.drafts, m.ID)
		s.messages.Add(*m)
		w.WriteHeader(http.StatusAccepted)
	})
}

func (s *Server) handleDeleteDraft(w http.ResponseWriter, r *http.Request, mailbox string) {
	s.withDraft(w, r, mailbox, func(m *Message) {
		delete(s.drafts, m.ID)
		w.WriteHeader(http.StatusNoContent)
	})
}

// newID returns a random hex id.
func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
