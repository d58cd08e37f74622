// Package mailjetfake is a local stand-in for Mailjet's Send API v3.1,
// built from its reference
// (https://dev.mailjet.com/email/reference/send-emails/): POST
// /v3.1/send with HTTP Basic auth (API key and secret key) and the JSON
// body {"Messages":[...]} (From, To, Cc, Bcc, ReplyTo, Subject, TextPart,
// HTMLPart, Headers, Attachments, InlinedAttachments, CustomID), a field
// it does not name refused; answered 200 with each message's Status,
// CustomID and its recipients' MessageID and MessageUUID, errors in
// Mailjet's shape; GET /v3/REST/user, the read that checks the keys. It
// refuses more than 50 recipients in a message or one without To.
package mailjetfake

import (
	"fmt"
	"net/http"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// MaxRecipients is the most recipients the fake takes in one message.
const MaxRecipients = 50

// New starts a fake that accepts only apiKey with secret.
func New(apiKey, secret string) *fakeapi.Server {
	return fakeapi.NewServer(fakeapi.Provider{
		Send:     "POST /v3.1/send",
		Reads:    []string{"GET /v3/REST/user"},
		ReadBody: `{"Count":1,"Data":[{"ID":1,"Email":"owner@example.com"}],"Total":1}`,
		Authorized: func(r *http.Request) bool {
			k, sec, ok := r.BasicAuth()
			return ok && k == apiKey && sec == secret
		},
		UnauthorizedBody: `{"ErrorIdentifier":"00000000-0000-0000-0000-000000000000","ErrorCode":"mj-0002","StatusCode":401,"ErrorMessage":"API key authentication/authorization failure. You may be unauthorized to access the API or your API key may be expired. Visit API keys management section to check your keys."}`,
		Decode:           fakeapi.Strict(decode),
		Accept: func(w http.ResponseWriter, m fakeapi.Message) {
			faults.WriteJSON(w, http.StatusOK, fmt.Sprintf(`{"Messages":[{"Status":"success","CustomID":%q,"To":[{"Email":%q,"MessageUUID":%q,"MessageID":288230376151711744,"MessageHref":"https://api.mailjet.com/v3/REST/message/288230376151711744"}],"Cc":[],"Bcc":[]}]}`,
				m.Meta["CustomID"], m.To[0].Email, m.ID))
		},
		ErrorBody: func(_ int, msg string) string {
			return fmt.Sprintf(`{"Messages":[{"Status":"error","Errors":[{"ErrorIdentifier":"1","ErrorCode":"send-0003","StatusCode":400,"ErrorMessage":%q,"ErrorRelatedTo":[]}]}]}`, msg)
		},
	})
}

// The wire types below read each key of the body into the field of its
// name in any case, as encoding/json matches keys; a tag names a key that
// differs otherwise.

type address struct{ Name, Email string }

type attachment struct{ ContentType, Filename, ContentID, Base64Content string }

// wireMessage is one message of a send call.
type wireMessage struct {
	From, ReplyTo                   *address
	To, Cc, Bcc                     []address
	Subject, TextPart, HTMLPart     string
	Headers                         map[string]string
	Attachments, InlinedAttachments []attachment
	CustomID                        string
}

// wireCall is the body of a send call: its messages.
type wireCall struct{ Messages []wireMessage }

// decode validates one call of a single message (what the driver
// sends), its CustomID noted in Meta.
func decode(in *wireCall) (fakeapi.Mail, *fakeapi.Refusal) {
	var m fakeapi.Mail
	if len(in.Messages) != 1 {
		return m, fakeapi.Refuse(400, "the fake takes one message per call, got %d", len(in.Messages))
	}
	w := in.Messages[0]
	switch {
	case w.From == nil || w.From.Email == "":
		return m, fakeapi.Refuse(400, "From is required")
	case len(w.To) == 0:
		return m, fakeapi.Refuse(400, "To is required")
	case len(w.To)+len(w.Cc)+len(w.Bcc) > MaxRecipients:
		return m, fakeapi.Refuse(400, "a message has at most %d recipients", MaxRecipients)
	case w.TextPart == "" && w.HTMLPart == "":
		return m, fakeapi.Refuse(400, "TextPart or HTMLPart is required")
	}
	fakeapi.SetEnvelope(&m, toAddress, *w.From, w.To, w.Cc, w.Bcc, w.ReplyTo)
	m.Subject, m.Text, m.HTML, m.Headers = w.Subject, w.TextPart, w.HTMLPart, w.Headers
	for _, group := range []struct {
		list   []attachment
		inline bool
	}{{w.Attachments, false}, {w.InlinedAttachments, true}} {
		for i, a := range group.list {
			data, r := fakeapi.Base64(fmt.Sprintf("attachment %d Base64Content", i), a.Base64Content)
			if r != nil {
				return m, r
			}
			if a.Filename == "" || a.ContentType == "" || group.inline != (a.ContentID != "") {
				return m, fakeapi.Refuse(400, "an attachment needs Filename and ContentType, and ContentID exactly when inlined")
			}
			m.Attachments = append(m.Attachments, fakeapi.Attachment{Filename: a.Filename, ContentType: a.ContentType,
				Data: data, Inline: group.inline, ContentID: a.ContentID})
		}
	}
	m.Meta = map[string]string{"CustomID": w.CustomID}
	return m, nil
}

func toAddress(a address) fakeapi.Address { return fakeapi.Address(a) }
