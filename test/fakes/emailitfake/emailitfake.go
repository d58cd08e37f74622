// Package emailitfake is a local stand-in for the Emailit Email API v2:
// POST /v2/emails with a Bearer key, from as "Name <email>", to, cc and
// bcc as lists of at most 50 such strings each, reply_to, headers and
// attachments (content_id for an inline image), answered {"object":
// "email","id":"em_...","status":"accepted"}; a request whose
// Idempotency-Key the fake took before is answered with the first
// answer and not sent again. Errors come as {"error": ...}; the
// authenticated read is GET /v2/domains.
package emailitfake

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/jsonfake"
)

// MaxPerField is the most addresses the fake takes in each of to, cc and
// bcc.
const MaxPerField = 50

// New starts a fake that accepts key as its only valid API key.
func New(key string) *jsonfake.Server {
	return jsonfake.New(jsonfake.API{
		Send:              "POST /v2/emails",
		Reads:             []string{"GET /v2/domains"},
		ReadAnswer:        `{"object":"list","data":[{"object":"domain","name":"example.com"}]}`,
		Key:               jsonfake.BearerKey,
		IdempotencyHeader: "Idempotency-Key",
		Decode:            jsonfake.Decoding("malformed JSON (to, cc, bcc and reply_to are taken as lists here)", decode),
		Accepted: func(id string, _ fakeapi.Mail) (int, string) {
			return http.StatusOK, fmt.Sprintf(`{"object":"email","id":"em_%s","status":"accepted"}`, id)
		},
		Error: func(_ int, message string) string {
			b, _ := json.Marshal(map[string]string{"error": message})
			return string(b)
		},
	}, key)
}

type wire struct {
	From                string
	To, Cc, Bcc         []string
	ReplyTo             []string `json:"reply_to"`
	Subject, HTML, Text string
	Headers             map[string]string
	Attachments         []struct {
		Filename, Content string
		ContentType       string `json:"content_type"`
		ContentID         string `json:"content_id"`
	}
}

func decode(in *wire) (fakeapi.Mail, string) {
	var m fakeapi.Mail
	from, p := jsonfake.Mailboxes([]string{in.From})
	if p != "" {
		return m, "from: " + p
	}
	m.From = from[0]
	if len(in.To) == 0 {
		return m, "to is required"
	}
	for name, l := range map[string][]string{"to": in.To, "cc": in.Cc, "bcc": in.Bcc} {
		if len(l) > MaxPerField {
			return m, fmt.Sprintf("%s: maximum %d recipients", name, MaxPerField)
		}
	}
	lists := []*[]fakeapi.Address{&m.To, &m.Cc, &m.Bcc, &m.ReplyTo}
	for i, l := range [][]string{in.To, in.Cc, in.Bcc, in.ReplyTo} {
		if *lists[i], p = jsonfake.Mailboxes(l); p != "" {
			return m, p
		}
	}
	if in.HTML == "" && in.Text == "" {
		return m, "html or text is required"
	}
	m.Subject, m.HTML, m.Text, m.Headers = in.Subject, in.HTML, in.Text, in.Headers
	for _, a := range in.Attachments {
		if a.ContentType == "" {
			return m, "attachments: content_type is required with content"
		}
		disposition := "attachment"
		if a.ContentID != "" {
			disposition = "inline"
		}
		if p := jsonfake.AddFile(&m, a.Filename, a.ContentType, a.Content, disposition, a.ContentID); p != "" {
			return m, p
		}
	}
	return m, ""
}
