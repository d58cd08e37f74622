// Package smtp2gofake is a local stand-in for the SMTP2GO API, built from
// its reference (https://developers.smtp2go.com/reference/send-standard-email):
// POST /v3/email/send with the X-Smtp2go-Api-Key header and the JSON
// body (sender, to, cc, bcc as "Name <email>" strings, subject,
// html_body, text_body, custom_headers, attachments and inlines with
// filename, fileblob and mimetype), a field it does not name refused;
// answered 200 with {"request_id":...,"data":{"succeeded":n,"failed":0,
// "failures":[],"email_id":...}}, errors as {"request_id":...,"data":
// {"error":...,"error_code":...}}; POST /v3/stats/email_summary, the read
// that checks a key. It records a Reply-To custom header as the Reply-To
// addresses, an inline as an inline image whose Content-ID is its file
// name, and refuses more than 100 addresses in any of to, cc and bcc.
package smtp2gofake

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// MaxPerList is the most addresses the fake takes in each of to, cc and
// bcc.
const MaxPerList = 100

// New starts a fake that accepts apiKey as its only valid API key.
func New(apiKey string) *fakeapi.Server {
	return fakeapi.NewServer(fakeapi.Provider{
		Send:             "POST /v3/email/send",
		Reads:            []string{"POST /v3/stats/email_summary"},
		ReadBody:         `{"request_id":"aa253464-0bd0-467a-b24b-6159dcd7be60","data":{"cycle_max":1000,"cycle_remaining":990,"email_count":10}}`,
		Authorized:       func(r *http.Request) bool { return r.Header.Get("X-Smtp2go-Api-Key") == apiKey },
		UnauthorizedBody: errorBody("Invalid API key", "E_ApiResponseCodes.API_EXCEPTION"),
		Decode:           fakeapi.Strict(decode),
		Accept: func(w http.ResponseWriter, m fakeapi.Message) {
			n := len(m.To) + len(m.Cc) + len(m.Bcc)
			faults.WriteJSON(w, http.StatusOK, fmt.Sprintf(`{"request_id":"aa253464-0bd0-467a-b24b-6159dcd7be60","data":{"succeeded":%d,"failed":0,"failures":[],"email_id":%q}}`, n, m.ID))
		},
		ErrorBody: func(_ int, msg string) string { return errorBody(msg, "E_ApiResponseCodes.NON_VALIDATING_IN_PAYLOAD") },
	})
}

// The wire types below read each key of the body into the field of its
// name in any case, as encoding/json matches keys; a tag names a key that
// differs otherwise.

type file struct{ Filename, Fileblob, Mimetype string }

// wireEmail is the body of POST /v3/email/send.
type wireEmail struct {
	Sender               string
	To, Cc, Bcc          []string
	Subject              string
	HTMLBody             string                           `json:"html_body"`
	TextBody             string                           `json:"text_body"`
	CustomHeaders        []struct{ Header, Value string } `json:"custom_headers"`
	Attachments, Inlines []file
}

func decode(in *wireEmail) (fakeapi.Mail, *fakeapi.Refusal) {
	var m fakeapi.Mail
	switch {
	case len(in.To) == 0:
		return m, fakeapi.Refuse(400, "to is required")
	case len(in.To) > MaxPerList || len(in.Cc) > MaxPerList || len(in.Bcc) > MaxPerList:
		return m, fakeapi.Refuse(400, "to, cc and bcc take at most %d addresses each", MaxPerList)
	case in.HTMLBody == "" && in.TextBody == "":
		return m, fakeapi.Refuse(400, "html_body or text_body is required")
	}
	from, r := fakeapi.ParseMailboxes("sender", in.Sender)
	if r != nil {
		return m, r
	}
	m.From = from[0]
	if r = fakeapi.ParseRecipients(&m, in.To, in.Cc, in.Bcc); r != nil {
		return m, r
	}
	m.Subject, m.HTML, m.Text = in.Subject, in.HTMLBody, in.TextBody
	m.Headers = map[string]string{}
	for _, h := range in.CustomHeaders {
		if strings.EqualFold(h.Header, "Reply-To") {
			if m.ReplyTo, r = fakeapi.ParseMailboxes("Reply-To", h.Value); r != nil {
				return m, r
			}
			continue
		}
		m.Headers[h.Header] = h.Value
	}
	for _, group := range []struct {
		files  []file
		inline bool
	}{{in.Attachments, false}, {in.Inlines, true}} {
		for i, f := range group.files {
			data, r := fakeapi.Base64(fmt.Sprintf("file %d fileblob", i), f.Fileblob)
			if r != nil {
				return m, r
			}
			if f.Filename == "" || f.Mimetype == "" {
				return m, fakeapi.Refuse(400, "a file needs filename and mimetype")
			}
			a := fakeapi.Attachment{Filename: f.Filename, ContentType: f.Mimetype, Data: data, Inline: group.inline}
			if group.inline {
				a.ContentID = f.Filename
			}
			m.Attachments = append(m.Attachments, a)
		}
	}
	return m, nil
}

func errorBody(message, code string) string {
	return fmt.Sprintf(`{"request_id":"aa253464-0bd0-467a-b24b-6159dcd7be60","data":{"error":%q,"error_code":%q}}`, message, code)
}
