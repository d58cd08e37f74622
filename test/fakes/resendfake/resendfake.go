// Package resendfake is a local stand-in for the Resend email API, built
// from its reference (https://resend.com/docs/api-reference/emails/send-email):
// POST /emails with a Bearer API key and the JSON body (from, to, cc,
// bcc, reply_to as "Name <email>" strings, subject, html, text, headers,
// attachments with content, filename, content_type and content_id), a
// field it does not name refused; answered 200 with {"id":...}, errors
// as {"statusCode":n,"message":...,"name":...}; GET /domains, the read
// that checks a key. A key with Sending access only (NewSendingOnly) is
// answered 401 restricted_api_key there, as Resend does. It refuses more
// than 50 addresses in to. Each send is first validated against
// openapi.yaml, the send operation of Resend's published OpenAPI
// document; what it refuses is a 422 validation_error, as Resend's is.
//
// It honours the Idempotency-Key header as Resend does
// (https://resend.com/docs/dashboard/emails/idempotency-keys): a send
// whose key it took before with the same body is answered with the
// first send's id and not sent again; the same key with another body is
// refused 409 invalid_idempotent_request, a key whose first send is
// still in progress (Server.HoldSends) 409
// concurrent_idempotent_requests, a key over 256 characters 400
// invalid_idempotency_key. Keys are kept for the fake's life (Resend's
// 24 hours).
package resendfake

import (
	_ "embed"
	"fmt"
	"net/http"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// MaxTo is the most addresses the fake takes in to.
const MaxTo = 50

// MaxKeyLen is the longest Idempotency-Key the fake takes.
const MaxKeyLen = 256

//go:embed openapi.yaml
var openAPI []byte

// New starts a fake that accepts apiKey, with full access, as its only
// valid API key.
func New(apiKey string) *fakeapi.Server { return start(apiKey, false) }

// NewSendingOnly starts a fake whose only valid key, apiKey, has Sending
// access only: it may send but not read the domains.
func NewSendingOnly(apiKey string) *fakeapi.Server { return start(apiKey, true) }

func start(apiKey string, sendingOnly bool) *fakeapi.Server {
	bearer := func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+apiKey }
	p := fakeapi.Provider{
		Send:             "POST /emails",
		Reads:            []string{"GET /domains"},
		ReadBody:         `{"object":"list","has_more":false,"data":[{"id":"d91cd9bd-1176-453e-8fc1-35364d380206","name":"example.com","status":"verified"}]}`,
		Authorized:       bearer,
		UnauthorizedBody: errorBody(401, "validation_error", "API key is invalid"),
		Decode:           fakeapi.Strict(decode),
		Accept: func(w http.ResponseWriter, m fakeapi.Message) {
			faults.WriteJSON(w, http.StatusOK, fmt.Sprintf(`{"id":%q}`, m.ID))
		},
		ErrorBody:         func(_ int, msg string) string { return errorBody(422, "validation_error", msg) },
		OpenAPI:           openAPI,
		InvalidStatus:     http.StatusUnprocessableEntity,
		IdempotencyHeader: "Idempotency-Key",
		MaxIdempotencyKey: MaxKeyLen,
		IdempotencyRefused: func(p fakeapi.KeyProblem) (int, string) {
			switch p {
			case fakeapi.KeyTooLong:
				return http.StatusBadRequest, errorBody(400, "invalid_idempotency_key", "The idempotency key has to be between 1-256 characters.")
			case fakeapi.KeyInProgress:
				return http.StatusConflict, errorBody(409, "concurrent_idempotent_requests", "Another request with the same idempotency key is in progress.")
			}
			return http.StatusConflict, errorBody(409, "invalid_idempotent_request", "The idempotency key was used with another payload.")
		},
	}
	if sendingOnly {
		p.Denied = func(r *http.Request) (int, string) {
			if r.Method == http.MethodPost {
				return 0, ""
			}
			return http.StatusUnauthorized, errorBody(401, "restricted_api_key", "This API key is restricted to only send emails")
		}
	}
	return fakeapi.NewServer(p)
}

// wireEmail is the body of POST /emails. Its fields read each key into
// the field of its name in any case, as encoding/json matches keys; a tag
// names a key that differs otherwise.
type wireEmail struct {
	From                string
	To, Cc, Bcc         []string
	ReplyTo             []string `json:"reply_to"`
	Subject, HTML, Text string
	Headers             map[string]string
	Attachments         []struct {
		Content, Filename string
		ContentType       string `json:"content_type"`
		ContentID         string `json:"content_id"`
	}
}

func decode(in *wireEmail) (fakeapi.Mail, *fakeapi.Refusal) {
	var m fakeapi.Mail
	switch {
	case len(in.To) == 0 || len(in.To) > MaxTo:
		return m, fakeapi.Refuse(422, "to must have 1 to %d addresses", MaxTo)
	case in.Subject == "":
		return m, fakeapi.Refuse(422, "Missing `subject` field.")
	}
	from, r := fakeapi.ParseMailboxes("from", in.From)
	if r != nil {
		return m, r
	}
	m.From = from[0]
	if r = fakeapi.ParseRecipients(&m, in.To, in.Cc, in.Bcc); r != nil {
		return m, r
	}
	if m.ReplyTo, r = fakeapi.ParseMailboxList("reply_to", in.ReplyTo); r != nil {
		return m, r
	}
	m.Subject, m.HTML, m.Text, m.Headers = in.Subject, in.HTML, in.Text, in.Headers
	for i, a := range in.Attachments {
		data, r := fakeapi.Base64(fmt.Sprintf("attachments[%d].content", i), a.Content)
		if r != nil {
			return m, r
		}
		m.Attachments = append(m.Attachments, fakeapi.Attachment{Filename: a.Filename, ContentType: a.ContentType,
			Data: data, Inline: a.ContentID != "", ContentID: a.ContentID})
	}
	return m, nil
}

func errorBody(status int, name, message string) string {
	return fmt.Sprintf(`{"statusCode":%d,"message":%q,"name":%q}`, status, message, name)
}
