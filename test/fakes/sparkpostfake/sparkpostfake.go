// Package sparkpostfake is a local stand-in for the SparkPost
// Transmissions API, built from its API reference
// (https://developers.sparkpost.com/api/transmissions/): POST
// /api/v1/transmissions with the API key as the whole Authorization
// header and the JSON body (recipients with address.email, name and
// header_to; content with from, subject, text, html, reply_to, headers,
// attachments and inline_images), a field it does not name refused;
// answered 200 with {"results":{"total_rejected_recipients":0,
// "total_accepted_recipients":n,"id":"..."}}, errors as
// {"errors":[{"message":...}]}; GET /api/v1/account, the read that
// checks a key. It records a recipient without header_to as To, one
// listed in the CC header as Cc and any other as Bcc, and refuses more
// than MaxRecipients recipients or none in To.
package sparkpostfake

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// MaxRecipients is the most recipients the fake takes in one call.
const MaxRecipients = 1000

// New starts a fake that accepts apiKey as its only valid API key.
func New(apiKey string) *fakeapi.Server {
	return fakeapi.NewServer(fakeapi.Provider{
		Send:             "POST /api/v1/transmissions",
		Reads:            []string{"GET /api/v1/account"},
		ReadBody:         `{"results":{"customer_id":123,"status":"active"}}`,
		Authorized:       func(r *http.Request) bool { return r.Header.Get("Authorization") == apiKey },
		UnauthorizedBody: errorBody("Unauthorized."),
		Decode:           fakeapi.Strict(decode),
		Accept: func(w http.ResponseWriter, m fakeapi.Message) {
			n := len(m.To) + len(m.Cc) + len(m.Bcc)
			faults.WriteJSON(w, http.StatusOK, fmt.Sprintf(`{"results":{"total_rejected_recipients":0,"total_accepted_recipients":%d,"id":%q}}`, n, m.ID))
		},
		ErrorBody: func(_ int, msg string) string { return errorBody(msg) },
	})
}

// The wire types below read each key of the body into the field of its
// name in any case, as encoding/json matches keys; a tag names a key that
// differs otherwise.

type address struct {
	Name, Email string
	HeaderTo    string `json:"header_to"`
}

type file struct{ Name, Type, Data string }

// wireTransmission is the body of POST /api/v1/transmissions.
type wireTransmission struct {
	Recipients []struct{ Address address }
	Content    struct {
		From                *address
		Subject, Text, HTML string
		ReplyTo             string `json:"reply_to"`
		Headers             map[string]string
		Attachments         []file
		InlineImages        []file `json:"inline_images"`
	}
}

func decode(in *wireTransmission) (fakeapi.Mail, *fakeapi.Refusal) {
	var m fakeapi.Mail
	c := in.Content
	switch {
	case c.From == nil || c.From.Email == "":
		return m, fakeapi.Refuse(422, "content.from is required")
	case c.Subject == "":
		return m, fakeapi.Refuse(422, "content.subject is required")
	case len(in.Recipients) == 0 || len(in.Recipients) > MaxRecipients:
		return m, fakeapi.Refuse(422, "between 1 and %d recipients are required", MaxRecipients)
	}
	cc := map[string]bool{}
	if v := c.Headers["CC"]; v != "" {
		list, r := fakeapi.ParseMailboxes("content.headers.CC", v)
		if r != nil {
			return m, r
		}
		for _, a := range list {
			cc[strings.ToLower(a.Email)] = true
		}
	}
	for _, r := range in.Recipients {
		a := fakeapi.Address{Name: r.Address.Name, Email: r.Address.Email}
		switch {
		case r.Address.HeaderTo == "":
			m.To = append(m.To, a)
		case cc[strings.ToLower(a.Email)]:
			m.Cc = append(m.Cc, a)
		default:
			m.Bcc = append(m.Bcc, a)
		}
	}
	if len(m.To) == 0 {
		return m, fakeapi.Refuse(422, "no recipient is in the To header")
	}
	m.From = fakeapi.Address{Name: c.From.Name, Email: c.From.Email}
	m.Subject, m.Text, m.HTML = c.Subject, c.Text, c.HTML
	if c.ReplyTo != "" {
		var r *fakeapi.Refusal
		if m.ReplyTo, r = fakeapi.ParseMailboxes("content.reply_to", c.ReplyTo); r != nil {
			return m, r
		}
	}
	m.Headers = map[string]string{}
	for k, v := range c.Headers {
		if k != "CC" {
			m.Headers[k] = v
		}
	}
	for _, group := range []struct {
		files  []file
		inline bool
	}{{c.Attachments, false}, {c.InlineImages, true}} {
		for i, f := range group.files {
			data, r := fakeapi.Base64(fmt.Sprintf("file %d data", i), f.Data)
			if r != nil {
				return m, r
			}
			if f.Name == "" || f.Type == "" {
				return m, fakeapi.Refuse(422, "a file needs a name and a type")
			}
			a := fakeapi.Attachment{Filename: f.Name, ContentType: f.Type, Data: data, Inline: group.inline}
			if group.inline {
				a.ContentID = f.Name
			}
			m.Attachments = append(m.Attachments, a)
		}
	}
	return m, nil
}

func errorBody(message string) string {
	return fmt.Sprintf(`{"errors":[{"message":%q}]}`, message)
}
