// Package mailersendfake is a local stand-in for the MailerSend email
// API, built from its reference (https://developers.mailersend.com/api/v1/email.html):
// POST /v1/email with a Bearer API token and the JSON body (from, to,
// cc, bcc, reply_to, subject, text, html, headers as name/value pairs,
// attachments with content, filename, disposition and id), a field it
// does not name refused; answered 202 with an empty body and the
// X-Message-Id header, errors as {"message":...,"errors":{...}} with
// 422; GET /v1/api-quota, the read that checks a token. It refuses more
// than 50 addresses in to or 10 in cc or bcc, and an inline attachment
// without id.
package mailersendfake

import (
	"fmt"
	"mime"
	"net/http"
	"path"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
)

// Recipient caps of one email, as MailerSend's.
const (
	MaxTo  = 50
	MaxCc  = 10
	MaxBcc = 10
)

// New starts a fake that accepts token as its only valid API token.
func New(token string) *fakeapi.Server {
	return fakeapi.NewServer(fakeapi.Provider{
		Send:             "POST /v1/email",
		Reads:            []string{"GET /v1/api-quota"},
		ReadBody:         `{"quota":100000,"remaining":99990,"reset":"2026-12-07T00:00:00Z"}`,
		Authorized:       func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+token },
		UnauthorizedBody: `{"message":"Unauthenticated."}`,
		Decode:           fakeapi.Strict(decode),
		Accept: func(w http.ResponseWriter, m fakeapi.Message) {
			w.Header().Set("X-Message-Id", m.ID)
			w.WriteHeader(http.StatusAccepted)
		},
		ErrorBody: func(_ int, msg string) string { return fmt.Sprintf(`{"message":%q,"errors":{}}`, msg) },
	})
}

// The wire types below read each key of the body into the field of its
// name in any case, as encoding/json matches keys; a tag names a key that
// differs otherwise.

type address struct{ Name, Email string }

// wireEmail is the body of POST /v1/email.
type wireEmail struct {
	From                *address
	ReplyTo             *address `json:"reply_to"`
	To, Cc, Bcc         []address
	Subject, Text, HTML string
	Headers             []struct{ Name, Value string }
	Attachments         []struct{ Content, Filename, Disposition, ID string }
}

func decode(in *wireEmail) (fakeapi.Mail, *fakeapi.Refusal) {
	var m fakeapi.Mail
	switch {
	case in.From == nil || in.From.Email == "":
		return m, fakeapi.Refuse(422, "The from.email field is required.")
	case len(in.To) == 0 || len(in.To) > MaxTo:
		return m, fakeapi.Refuse(422, "The to field must have between 1 and %d items.", MaxTo)
	case len(in.Cc) > MaxCc || len(in.Bcc) > MaxBcc:
		return m, fakeapi.Refuse(422, "The cc and bcc fields may not have more than %d items.", MaxCc)
	case in.Subject == "":
		return m, fakeapi.Refuse(422, "The subject field is required.")
	case in.Text == "" && in.HTML == "":
		return m, fakeapi.Refuse(422, "The text or html field is required.")
	}
	fakeapi.SetEnvelope(&m, toAddress, *in.From, in.To, in.Cc, in.Bcc, in.ReplyTo)
	m.Subject, m.Text, m.HTML = in.Subject, in.Text, in.HTML
	m.Headers = map[string]string{}
	for _, h := range in.Headers {
		m.Headers[h.Name] = h.Value
	}
	for i, a := range in.Attachments {
		data, r := fakeapi.Base64(fmt.Sprintf("attachments.%d.content", i), a.Content)
		if r != nil {
			return m, r
		}
		inline := a.Disposition == "inline"
		switch {
		case a.Filename == "":
			return m, fakeapi.Refuse(422, "The attachments.%d.filename field is required.", i)
		case a.Disposition != "inline" && a.Disposition != "attachment":
			return m, fakeapi.Refuse(422, "The attachments.%d.disposition must be inline or attachment.", i)
		case inline && a.ID == "":
			return m, fakeapi.Refuse(422, "The attachments.%d.id field is required when disposition is inline.", i)
		}
		m.Attachments = append(m.Attachments, fakeapi.Attachment{Filename: a.Filename, Data: data, Inline: inline, ContentID: a.ID,
			ContentType: mime.TypeByExtension(path.Ext(a.Filename))})
	}
	return m, nil
}

func toAddress(a address) fakeapi.Address { return fakeapi.Address(a) }
