// Package jsonfake describes the providers whose mail API takes one JSON
// request per message (elasticemailfake, mandrillfake, mailtrapfake,
// sendlayerfake, smtpcomfake, emailitfake, cloudflarefake) to fakeapi's
// server, which runs every JSON fake alike: the key checked where the
// provider reads it (a header, or the JSON body), each send request
// validated against the part of the provider's published OpenAPI
// description the fake carries (when the provider publishes one) and then
// decoded by the provider's own rules, the recipient cap answered 400 as
// the API does, the accepted messages recorded, the authenticated reads a
// credentials check makes, and the faults of test/fakes/faults plus a 429
// with Retry-After. A provider's fake package holds only its wire shapes
// and rules, in an API; this package adds the readers of the wire forms
// those APIs share (mailbox strings, a Reply-To header, base64 files).
package jsonfake

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/mail"
	"strings"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// API describes one provider's JSON mail API to the fake.
type API struct {
	// Send is the send route, method and path ("POST /api/send").
	Send string
	// Reads are the authenticated reads a credentials check may make
	// ("GET /v4/account"), each answered ReadAnswer.
	Reads      []string
	ReadAnswer string
	// Key returns the API key a request carries, read where the provider
	// reads it (a header, or the JSON body).
	Key func(r *http.Request, body []byte) string
	// OpenAPI, when set, is the provider's published description of the
	// send route (YAML or JSON); a send request it does not allow is
	// answered 400 with the validation's message.
	OpenAPI []byte
	// Decode reads a send body as the provider does: the message, or the
	// problem it answers 400 for.
	Decode func(body []byte) (fakeapi.Mail, string)
	// Accepted returns the status and body of the answer to an accepted
	// message m with the fake's id for it.
	Accepted func(id string, m fakeapi.Mail) (int, string)
	// Error returns the provider's error body for an answer of status.
	Error func(status int, message string) string
	// UnauthorizedStatus is the status of a wrong or missing key: 401
	// when 0.
	UnauthorizedStatus int
	// MaxRecipients is the most recipients (To, Cc and Bcc) one send
	// takes; 0: no cap.
	MaxRecipients int
	// IdempotencyHeader, when set, names the request header whose value
	// makes a send once: a send with a key the fake took before is
	// answered as the first was and not recorded again.
	IdempotencyHeader string
}

// Message is one accepted send request, decoded.
type Message = fakeapi.Message

// Server is a running fake: fakeapi's server of the provider the API
// describes.
type Server = fakeapi.Server

// BearerKey is the Key of an API that takes its key as
// "Authorization: Bearer <key>".
func BearerKey(r *http.Request, _ []byte) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// New starts a fake of api that accepts key as its only valid API key.
// It panics when api.OpenAPI does not load: a fake's own description is
// fixed test data.
func New(api API, key string) *Server {
	return fakeapi.NewServer(fakeapi.Provider{
		Send:     api.Send,
		Reads:    api.Reads,
		ReadBody: api.ReadAnswer,
		Authorized: func(r *http.Request) bool {
			// The key may be in the body (Mandrill): read it, and leave
			// it to be read again.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return false
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			k := api.Key(r, body)
			return k != "" && k == key
		},
		UnauthorizedStatus: api.UnauthorizedStatus,
		UnauthorizedBody:   api.Error(http.StatusUnauthorized, "Invalid API key"),
		Decode: func(body []byte) (fakeapi.Mail, *fakeapi.Refusal) {
			m, problem := api.Decode(body)
			if problem != "" {
				return m, fakeapi.Refuse(http.StatusBadRequest, "%s", problem)
			}
			return m, nil
		},
		Accept: func(w http.ResponseWriter, m fakeapi.Message) {
			status, body := api.Accepted(m.ID, m.Mail)
			faults.WriteJSON(w, status, body)
		},
		ErrorBody:         api.Error,
		OpenAPI:           api.OpenAPI,
		MaxRecipients:     api.MaxRecipients,
		IdempotencyHeader: api.IdempotencyHeader,
	})
}

// Decoding returns an API's Decode for a send body of type T: a body that
// is not JSON of T is answered 400 with malformed; read checks the rest
// and turns it into the message, or names the problem.
func Decoding[T any](malformed string, read func(in *T) (fakeapi.Mail, string)) func(body []byte) (fakeapi.Mail, string) {
	return func(body []byte) (fakeapi.Mail, string) {
		var in T
		if err := json.Unmarshal(body, &in); err != nil {
			return fakeapi.Mail{}, malformed
		}
		return read(&in)
	}
}

// Mailboxes parses "Name <email>" strings (or bare addresses), as the
// APIs that take a mailbox as one string read them; problem names the
// first that does not parse.
func Mailboxes(list []string) (out []fakeapi.Address, problem string) {
	for _, s := range list {
		a, err := mail.ParseAddress(s)
		if err != nil {
			return out, "invalid address " + s
		}
		out = append(out, fakeapi.Address{Name: a.Name, Email: a.Address})
	}
	return out, ""
}

// TakeReplyTo moves a Reply-To header (any case) out of headers into the
// message's Reply-To addresses, as the APIs that carry several Reply-To
// addresses as a header apply it; it returns the problem when the
// header's value is not an address list.
func TakeReplyTo(m *fakeapi.Mail) string {
	for k, v := range m.Headers {
		if !strings.EqualFold(k, "Reply-To") {
			continue
		}
		list, err := mail.ParseAddressList(v)
		if err != nil {
			return "Reply-To is not an address list"
		}
		for _, a := range list {
			m.ReplyTo = append(m.ReplyTo, fakeapi.Address{Name: a.Name, Email: a.Address})
		}
		delete(m.Headers, k)
	}
	return ""
}

// AddFile reads one attachment as a JSON API carries it into m's
// attachments, in the recorded form: base64 content, the disposition
// "inline" with a Content-ID for an inline image. It returns the problem
// of an attachment the API refuses, adding nothing then.
func AddFile(m *fakeapi.Mail, filename, contentType, content, disposition, contentID string) string {
	data, err := base64.StdEncoding.DecodeString(content)
	if err != nil || filename == "" {
		return "an attachment needs a file name and base64 content"
	}
	a := fakeapi.Attachment{Filename: filename, ContentType: contentType, Data: data}
	switch disposition {
	case "", "attachment":
	case "inline":
		if contentID == "" {
			return "an inline attachment needs a content id"
		}
		a.Inline, a.ContentID = true, contentID
	default:
		return "disposition must be attachment or inline"
	}
	m.Attachments = append(m.Attachments, a)
	return ""
}
