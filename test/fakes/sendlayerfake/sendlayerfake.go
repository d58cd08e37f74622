// Package sendlayerfake is a local stand-in for the SendLayer API: POST
// /api/v1/email with a Bearer key and SendLayer's capitalised JSON body
// (From, To, CC, BCC, ReplyTo, ContentType "HTML" or "Text",
// HTMLContent, PlainContent, Headers, Attachments), answered
// {"MessageID": ...}, errors as {"Errors":[{"Code","Message"}]}, and the
// authenticated read GET /api/v1/webhooks.
package sendlayerfake

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/jsonfake"
)

// MaxRecipients is the most recipients the fake takes in one send: the
// driver's cap, answered 400 over it.
const MaxRecipients = 50

// New starts a fake that accepts key as its only valid API key.
func New(key string) *jsonfake.Server {
	return jsonfake.New(jsonfake.API{
		Send:       "POST /api/v1/email",
		Reads:      []string{"GET /api/v1/webhooks"},
		ReadAnswer: `{"Webhooks":[]}`,
		Key:        jsonfake.BearerKey,
		Decode:     jsonfake.Decoding("From is required", decode),
		Accepted: func(id string, _ fakeapi.Mail) (int, string) {
			return http.StatusOK, fmt.Sprintf(`{"MessageID":%q}`, id)
		},
		Error: func(status int, message string) string {
			b, _ := json.Marshal(map[string]any{"Errors": []map[string]any{{"Code": status, "Message": message}}})
			return string(b)
		},
		MaxRecipients: MaxRecipients,
	}, key)
}

type wireAddress struct{ Name, Email string }

type wire struct {
	From                      *wireAddress
	To, CC, BCC, ReplyTo      []wireAddress
	Subject, ContentType      string
	HTMLContent, PlainContent string
	Headers                   map[string]string
	Attachments               []struct{ Content, Type, Filename, Disposition, ContentID string }
}

func addresses(in []wireAddress) []fakeapi.Address {
	return fakeapi.Addresses(in, func(a wireAddress) fakeapi.Address { return fakeapi.Address{Name: a.Name, Email: a.Email} })
}

func decode(in *wire) (fakeapi.Mail, string) {
	var m fakeapi.Mail
	if in.From == nil || in.From.Email == "" {
		return m, "From is required"
	}
	if len(in.To) == 0 {
		return m, "To is required"
	}
	switch in.ContentType {
	case "HTML":
		if in.HTMLContent == "" {
			return m, "HTMLContent is required when ContentType is HTML"
		}
	case "Text":
		if in.HTMLContent != "" {
			return m, "HTMLContent needs ContentType HTML"
		}
	default:
		return m, "ContentType must be HTML or Text"
	}
	m.From = fakeapi.Address{Name: in.From.Name, Email: in.From.Email}
	m.To, m.Cc, m.Bcc, m.ReplyTo = addresses(in.To), addresses(in.CC), addresses(in.BCC), addresses(in.ReplyTo)
	m.Subject, m.HTML, m.Text, m.Headers = in.Subject, in.HTMLContent, in.PlainContent, in.Headers
	for _, a := range in.Attachments {
		if p := jsonfake.AddFile(&m, a.Filename, a.Type, a.Content, a.Disposition, a.ContentID); p != "" {
			return m, p
		}
	}
	return m, ""
}
