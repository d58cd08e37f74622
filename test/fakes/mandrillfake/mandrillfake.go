// Package mandrillfake is a local stand-in for the Mailchimp
// Transactional (Mandrill) API 1.0: POST /messages/send with the key in
// the JSON body, answered with one {"email","status","reject_reason",
// "_id"} per recipient, errors as HTTP 500 {"status":"error","code",
// "name","message"} (Invalid_Key for a wrong key), and the key check
// POST /users/ping answered "PONG!". A recipient whose address starts
// with "rejected" is answered status "rejected" (hard-bounce), as
// Mandrill answers an address on its rejection list.
package mandrillfake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/mail"
	"strings"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/jsonfake"
)

// MaxRecipients is the most recipients the fake takes in one send: the
// driver's cap, answered as a ValidationError over it.
const MaxRecipients = 1000

// New starts a fake that accepts key as its only valid API key.
func New(key string) *jsonfake.Server {
	return jsonfake.New(jsonfake.API{
		Send:       "POST /messages/send",
		Reads:      []string{"POST /users/ping"},
		ReadAnswer: `"PONG!"`,
		Key: func(_ *http.Request, body []byte) string {
			var in struct{ Key string }
			_ = json.Unmarshal(body, &in)
			return in.Key
		},
		Decode:             jsonfake.Decoding("You must specify a message value", decode),
		Accepted:           accepted,
		Error:              errorBody,
		UnauthorizedStatus: http.StatusInternalServerError,
		MaxRecipients:      MaxRecipients,
	}, key)
}

// errorBody is Mandrill's error object; every error is sent with HTTP
// 500 by the real API, whatever the status the fake was told to use.
func errorBody(status int, message string) string {
	name, code := "GeneralError", -1
	switch status {
	case http.StatusUnauthorized:
		name = "Invalid_Key"
	case http.StatusBadRequest:
		name, code = "ValidationError", -2
	}
	b, _ := json.Marshal(map[string]any{"status": "error", "code": code, "name": name, "message": message})
	return string(b)
}

func accepted(id string, m fakeapi.Mail) (int, string) {
	type result struct {
		Email        string  `json:"email"`
		Status       string  `json:"status"`
		RejectReason *string `json:"reject_reason"`
		ID           string  `json:"_id"`
	}
	var out []result
	for i, a := range append(append(append([]fakeapi.Address{}, m.To...), m.Cc...), m.Bcc...) {
		r := result{Email: a.Email, Status: "sent", ID: fmt.Sprintf("%s%02d", id, i)}
		if strings.HasPrefix(a.Email, "rejected") {
			reason := "hard-bounce"
			r.Status, r.RejectReason = "rejected", &reason
		}
		out = append(out, r)
	}
	b, _ := json.Marshal(out)
	return http.StatusOK, string(b)
}

type wireFile struct{ Type, Name, Content string }

type wire struct {
	Message *struct {
		HTML, Text, Subject string
		FromEmail           string `json:"from_email"`
		FromName            string `json:"from_name"`
		To                  []struct{ Email, Name, Type string }
		Headers             map[string]string
		Attachments, Images []wireFile
	}
}

func decode(in *wire) (fakeapi.Mail, string) {
	var m fakeapi.Mail
	if in.Message == nil {
		return m, "You must specify a message value"
	}
	msg := in.Message
	if _, err := mail.ParseAddress(msg.FromEmail); err != nil {
		return m, "Validation error: {\"message\":{\"from_email\":\"An email address must contain a single @\"}}"
	}
	m.From = fakeapi.Address{Name: msg.FromName, Email: msg.FromEmail}
	if len(msg.To) == 0 {
		return m, "Validation error: {\"message\":{\"to\":\"Please enter an array\"}}"
	}
	for _, r := range msg.To {
		a := fakeapi.Address{Name: r.Name, Email: r.Email}
		switch r.Type {
		case "", "to":
			m.To = append(m.To, a)
		case "cc":
			m.Cc = append(m.Cc, a)
		case "bcc":
			m.Bcc = append(m.Bcc, a)
		default:
			return m, "Validation error: {\"message\":{\"to\":{\"type\":\"must be one of to, cc, bcc\"}}}"
		}
	}
	m.Subject, m.Text, m.HTML = msg.Subject, msg.Text, msg.HTML
	m.Headers = msg.Headers
	if p := jsonfake.TakeReplyTo(&m); p != "" {
		return m, "Validation error: " + p
	}
	files := func(list []wireFile, inline bool) string {
		for _, f := range list {
			data, err := base64.StdEncoding.DecodeString(f.Content)
			if err != nil || f.Name == "" || f.Type == "" {
				return "Validation error: an attachment or image needs a type, a name and base64 content"
			}
			if inline && !strings.HasPrefix(f.Type, "image/") {
				return "Validation error: an image's type must start with image/"
			}
			a := fakeapi.Attachment{Filename: f.Name, ContentType: f.Type, Data: data}
			if inline {
				a.Inline, a.ContentID = true, f.Name
			}
			m.Attachments = append(m.Attachments, a)
		}
		return ""
	}
	if p := files(msg.Attachments, false); p != "" {
		return m, p
	}
	return m, files(msg.Images, true)
}
