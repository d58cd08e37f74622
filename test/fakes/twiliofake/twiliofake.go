// Package twiliofake is a local stand-in for Twilio's Messages API
// (https://api.twilio.com) that speaks its wire format: POST
// /2010-04-01/Accounts/{AccountSid}/Messages.json with a
// application/x-www-form-urlencoded body and HTTP basic auth
// AccountSid:AuthToken, answered 201 with the message resource as JSON.
//
// It checks what Twilio checks: the basic auth matches the account of the
// path and its auth token (else 401, code 20003 "Authenticate"), To is
// present (21604), From is present (21603) and Body is not empty (21602)
// and at most 1600 characters (21617). Errors are in Twilio's shape
// {"code":n,"message":"...","more_info":"...","status":s}. FailNext makes
// the next requests fail; a 429 (Twilio code 20429) may carry Retry-After.
package twiliofake

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// Message is one accepted message.
type Message struct {
	SID        string
	AccountSID string
	To         string
	From       string
	Body       string
	// Form is every form field as sent.
	Form map[string][]string
}

// Server is a running fake. Its zero value is not usable; call New.
type Server struct {
	// The embedded server's URL is the API base URL, in place of
	// https://api.twilio.com.
	*faults.Server

	accountSID string
	authToken  string

	mu   sync.Mutex
	sent []Message
}

// New starts a fake whose only account is accountSID with authToken.
func New(accountSID, authToken string) *Server {
	s := &Server{accountSID: accountSID, authToken: authToken}
	s.Server = faults.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Messages returns every accepted message, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sent...)
}

// FailNext makes the next n requests fail with status in Twilio's error
// shape; retryAfter, when positive, is sent as a Retry-After header in
// seconds.
func (s *Server) FailNext(n, status, retryAfter int) {
	code, msg := status*100, http.StatusText(status)
	switch status {
	case http.StatusTooManyRequests:
		code, msg = 20429, "Too Many Requests"
	case http.StatusServiceUnavailable:
		code, msg = 20503, "Service Unavailable"
	}
	s.FailNextWith(n, func(w http.ResponseWriter, _ *http.Request) {
		if retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		}
		writeError(w, status, code, msg)
	})
}

func writeError(w http.ResponseWriter, status, code int, msg string) {
	body, _ := json.Marshal(map[string]any{
		"code": code, "message": msg, "status": status,
		"more_info": fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code),
	})
	faults.WriteJSON(w, status, string(body))
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/2010-04-01/Accounts/")
	account, tail, _ := strings.Cut(rest, "/")
	if !ok || tail != "Messages.json" {
		writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
		return
	}
	user, pass, hasAuth := r.BasicAuth()
	if !hasAuth || user != s.accountSID || pass != s.authToken || account != s.accountSID {
		w.Header().Set("WWW-Authenticate", `Basic realm="Twilio API"`)
		writeError(w, http.StatusUnauthorized, 20003, "Authenticate")
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, 20004, "Method not allowed")
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		writeError(w, http.StatusBadRequest, 20001, "The body must be application/x-www-form-urlencoded.")
		return
	}
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, 20001, "The request body cannot be read.")
		return
	}
	to, from, body := r.PostForm.Get("To"), r.PostForm.Get("From"), r.PostForm.Get("Body")
	switch {
	case to == "":
		writeError(w, http.StatusBadRequest, 21604, "A 'To' phone number is required.")
		return
	case from == "" && r.PostForm.Get("MessagingServiceSid") == "":
		writeError(w, http.StatusBadRequest, 21603, "A 'From' phone number is required.")
		return
	case strings.TrimSpace(body) == "":
		writeError(w, http.StatusBadRequest, 21602, "Message body is required.")
		return
	case utf8.RuneCountInString(body) > 1600:
		writeError(w, http.StatusBadRequest, 21617, "The concatenated message body exceeds the 1600 character limit.")
		return
	}
	s.mu.Lock()
	sid := fmt.Sprintf("SM%032x", len(s.sent)+1)
	s.sent = append(s.sent, Message{SID: sid, AccountSID: account, To: to, From: from, Body: body, Form: r.PostForm})
	s.mu.Unlock()
	now := time.Now().UTC().Format(time.RFC1123Z)
	answer, _ := json.Marshal(map[string]any{
		"sid": sid, "account_sid": account, "to": to, "from": from, "body": body,
		"status": "queued", "direction": "outbound-api", "api_version": "2010-04-01",
		"num_segments": "1", "num_media": "0", "date_created": now, "date_updated": now,
		"uri": "/2010-04-01/Accounts/" + account + "/Messages/" + sid + ".json",
	})
	faults.WriteJSON(w, http.StatusCreated, string(answer))
}
