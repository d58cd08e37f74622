// Package mailtrapfake is a local stand-in for Mailtrap's sending API:
// POST /api/send with a Bearer token, validated against the part of
// Mailtrap's published OpenAPI description in testdata, at most 1,000
// addresses in each of to, cc and bcc, answered {"success":true,
// "message_ids":[...]} (one id per recipient), errors as
// {"success":false,"errors":[...]}, and the general API's read GET
// /api/accounts.
package mailtrapfake

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/jsonfake"
)

//go:embed testdata/openapi.yaml
var openAPI []byte

// MaxPerField is the most addresses the fake takes in each of to, cc and
// bcc.
const MaxPerField = 1000

// New starts a fake that accepts token as its only valid API token.
func New(token string) *jsonfake.Server {
	return jsonfake.New(jsonfake.API{
		Send:       "POST /api/send",
		Reads:      []string{"GET /api/accounts"},
		ReadAnswer: `[{"id":1,"name":"Shop","access_levels":[1000]}]`,
		Key:        jsonfake.BearerKey,
		OpenAPI:    openAPI,
		Decode:     jsonfake.Decoding("'from' is required", decode),
		Accepted: func(id string, m fakeapi.Mail) (int, string) {
			var ids []string
			for i := range len(m.To) + len(m.Cc) + len(m.Bcc) {
				ids = append(ids, fmt.Sprintf("%s-%d", id, i))
			}
			b, _ := json.Marshal(map[string]any{"success": true, "message_ids": ids})
			return http.StatusOK, string(b)
		},
		Error: func(status int, message string) string {
			if status == http.StatusUnauthorized {
				message = "Unauthorized"
			}
			b, _ := json.Marshal(map[string]any{"success": false, "errors": []string{message}})
			return string(b)
		},
	}, token)
}

type wireAddress struct{ Email, Name string }

type wire struct {
	From        *wireAddress
	To, Cc, Bcc []wireAddress
	ReplyTo     *wireAddress `json:"reply_to"`
	Subject     string
	Text, HTML  string
	Headers     map[string]string
	Attachments []struct {
		Content, Filename, Type, Disposition string
		ContentID                            string `json:"content_id"`
	}
}

func address(a wireAddress) fakeapi.Address { return fakeapi.Address{Name: a.Name, Email: a.Email} }

func decode(in *wire) (fakeapi.Mail, string) {
	var m fakeapi.Mail
	if in.From == nil {
		return m, "'from' is required"
	}
	if len(in.To) == 0 {
		return m, "'to' is required"
	}
	for name, l := range map[string][]wireAddress{"to": in.To, "cc": in.Cc, "bcc": in.Bcc} {
		if len(l) > MaxPerField {
			return m, fmt.Sprintf("'%s' must have at most %d items", name, MaxPerField)
		}
	}
	if in.Text == "" && in.HTML == "" {
		return m, "'text' or 'html' is required"
	}
	fakeapi.SetEnvelope(&m, address, *in.From, in.To, in.Cc, in.Bcc, in.ReplyTo)
	m.Subject, m.Text, m.HTML, m.Headers = in.Subject, in.Text, in.HTML, in.Headers
	if p := jsonfake.TakeReplyTo(&m); p != "" {
		return m, p
	}
	for _, a := range in.Attachments {
		if p := jsonfake.AddFile(&m, a.Filename, a.Type, a.Content, a.Disposition, a.ContentID); p != "" {
			return m, p
		}
	}
	return m, ""
}
