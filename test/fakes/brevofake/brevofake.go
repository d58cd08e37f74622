// Package brevofake is a local stand-in for Brevo's transactional email
// API, built from its API reference
// (https://developers.brevo.com/reference/sendtransacemail): POST
// /v3/smtp/email with the api-key header and the JSON body (sender, to,
// cc, bcc, replyTo, subject, htmlContent, textContent, headers,
// attachment), a field it does not name refused; answered 201 with
// {"messageId":"<...>"}, errors as {"code":...,"message":...}; GET
// /v3/account, the read that checks a key without sending. It refuses
// more than Brevo's 99 recipients and a call without a To; its 429 says
// when to come back in x-sib-ratelimit-reset. Each send is first
// validated against openapi.yaml, the send operation of Brevo's
// published OpenAPI document.
package brevofake

import (
	_ "embed"
	"fmt"
	"mime"
	"net/http"
	"path"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// RateLimitResetHeader is where Brevo's 429 gives the seconds until
// its rate limit resets; it sends no Retry-After.
const RateLimitResetHeader = "X-Sib-Ratelimit-Reset"

// MaxRecipients is the most recipients the fake takes in one call.
const MaxRecipients = 99

//go:embed openapi.yaml
var openAPI []byte

// New starts a fake that accepts apiKey as its only valid API key.
func New(apiKey string) *fakeapi.Server {
	return fakeapi.NewServer(fakeapi.Provider{
		Send:             "POST /v3/smtp/email",
		Reads:            []string{"GET /v3/account"},
		ReadBody:         `{"email":"owner@example.com","companyName":"Example","plan":[{"type":"free"}]}`,
		Authorized:       func(r *http.Request) bool { return r.Header.Get("api-key") == apiKey },
		UnauthorizedBody: errorBody("unauthorized", "Key not found"),
		Decode:           fakeapi.Strict(decode),
		Accept: func(w http.ResponseWriter, m fakeapi.Message) {
			faults.WriteJSON(w, http.StatusCreated, fmt.Sprintf(`{"messageId":"<%s@smtp-relay.mailin.fr>"}`, m.ID))
		},
		ErrorBody:       func(_ int, msg string) string { return errorBody("invalid_parameter", msg) },
		RateLimitHeader: RateLimitResetHeader,
		OpenAPI:         openAPI,
	})
}

// MessageID is the messageId the fake answers for a recorded message.
func MessageID(m fakeapi.Message) string { return "<" + m.ID + "@smtp-relay.mailin.fr>" }

// The wire types below read each key of the body into the field of its
// name in any case, as encoding/json matches keys; a tag names a key that
// differs otherwise.

type address struct{ Name, Email string }

// wireEmail is the body of POST /v3/smtp/email.
type wireEmail struct {
	Sender, ReplyTo          *address
	To, Cc, Bcc              []address
	Subject                  string
	HTMLContent, TextContent string
	Headers                  map[string]string
	Attachment               []struct{ Content, Name string }
}

func decode(in *wireEmail) (fakeapi.Mail, *fakeapi.Refusal) {
	var m fakeapi.Mail
	switch {
	case in.Sender == nil || in.Sender.Email == "":
		return m, fakeapi.Refuse(400, "sender is missing")
	case len(in.To) == 0:
		return m, fakeapi.Refuse(400, "to is missing")
	case len(in.To)+len(in.Cc)+len(in.Bcc) > MaxRecipients:
		return m, fakeapi.Refuse(400, "more than %d recipients", MaxRecipients)
	case in.Subject == "":
		return m, fakeapi.Refuse(400, "subject is missing")
	case in.HTMLContent == "" && in.TextContent == "":
		return m, fakeapi.Refuse(400, "htmlContent or textContent is missing")
	}
	fakeapi.SetEnvelope(&m, toAddress, *in.Sender, in.To, in.Cc, in.Bcc, in.ReplyTo)
	m.Subject, m.HTML, m.Text, m.Headers = in.Subject, in.HTMLContent, in.TextContent, in.Headers
	for i, a := range in.Attachment {
		data, r := fakeapi.Base64(fmt.Sprintf("attachment[%d].content", i), a.Content)
		if r != nil {
			return m, r
		}
		if a.Name == "" {
			return m, fakeapi.Refuse(400, "attachment[%d].name is missing", i)
		}
		m.Attachments = append(m.Attachments, fakeapi.Attachment{Filename: a.Name, Data: data,
			ContentType: mime.TypeByExtension(path.Ext(a.Name))})
	}
	return m, nil
}

func errorBody(code, message string) string {
	return fmt.Sprintf(`{"code":%q,"message":%q}`, code, message)
}

func toAddress(a address) fakeapi.Address { return fakeapi.Address(a) }
