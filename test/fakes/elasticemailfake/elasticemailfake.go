// Package elasticemailfake is a local stand-in for Elastic Email's REST
// API v4: POST /v4/emails/transactional with the X-ElasticEmail-ApiKey
// header, validated against the part of Elastic Email's OpenAPI
// description in testdata, answered {"TransactionID","MessageID"}, errors
// as {"Error": "..."}, and the authenticated read GET /v4/domains.
package elasticemailfake

import (
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/mail"
	"strings"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/jsonfake"
)

//go:embed testdata/openapi.yaml
var openAPI []byte

// MaxRecipients is the most recipients the fake takes in one send: the
// driver's cap, answered 400 over it.
const MaxRecipients = 50

// New starts a fake that accepts key as its only valid API key.
func New(key string) *jsonfake.Server {
	return jsonfake.New(jsonfake.API{
		Send:       "POST /v4/emails/transactional",
		Reads:      []string{"GET /v4/domains"},
		ReadAnswer: `[{"Domain":"example.com","Spf":true,"Dkim":true}]`,
		Key:        func(r *http.Request, _ []byte) string { return r.Header.Get("X-ElasticEmail-ApiKey") },
		OpenAPI:    openAPI,
		Decode:     jsonfake.Decoding("malformed JSON", decode),
		Accepted: func(id string, _ fakeapi.Mail) (int, string) {
			return http.StatusOK, fmt.Sprintf(`{"TransactionID":"tx-%s","MessageID":"%s"}`, id, id)
		},
		Error: func(_ int, message string) string {
			b, _ := json.Marshal(map[string]string{"Error": message})
			return string(b)
		},
		MaxRecipients: MaxRecipients,
	}, key)
}

type wire struct {
	Recipients struct{ To, CC, BCC []string }
	Content    struct {
		Body        []struct{ ContentType, Content, Charset string }
		Attachments []struct {
			BinaryContent, Name, ContentType string
		}
		Headers                map[string]string
		From, ReplyTo, Subject string
	}
}

func decode(in *wire) (fakeapi.Mail, string) {
	var m fakeapi.Mail
	from, problem := jsonfake.Mailboxes([]string{in.Content.From})
	if problem != "" {
		return m, "Content.From: " + problem
	}
	m.From = from[0]
	lists := []*[]fakeapi.Address{&m.To, &m.Cc, &m.Bcc}
	for i, l := range [][]string{in.Recipients.To, in.Recipients.CC, in.Recipients.BCC} {
		if *lists[i], problem = jsonfake.Mailboxes(l); problem != "" {
			return m, "Recipients: " + problem
		}
	}
	if len(m.To) == 0 {
		return m, "Recipients.To: at least one recipient is required"
	}
	if in.Content.ReplyTo != "" {
		rt, err := mail.ParseAddressList(in.Content.ReplyTo)
		if err != nil {
			return m, "Content.ReplyTo is not a valid address list"
		}
		for _, a := range rt {
			m.ReplyTo = append(m.ReplyTo, fakeapi.Address{Name: a.Name, Email: a.Address})
		}
	}
	m.Subject = in.Content.Subject
	for _, b := range in.Content.Body {
		if !strings.EqualFold(b.Charset, "utf-8") {
			return m, "Body: Charset must be utf-8"
		}
		switch b.ContentType {
		case "HTML":
			m.HTML = b.Content
		case "PlainText":
			m.Text = b.Content
		}
	}
	m.Headers = in.Content.Headers
	for _, a := range in.Content.Attachments {
		data, err := base64.StdEncoding.DecodeString(a.BinaryContent)
		if err != nil {
			return m, "Attachments: BinaryContent is not base64"
		}
		m.Attachments = append(m.Attachments, fakeapi.Attachment{Filename: a.Name, ContentType: a.ContentType, Data: data})
	}
	return m, ""
}
