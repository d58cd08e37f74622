// Package cloudflarefake is a local stand-in for Cloudflare Email
// Service's Email Sending REST API: POST
// /client/v4/accounts/{account_id}/email/sending/send with a Bearer API
// token (for the one account the fake has), validated against the part
// of Cloudflare's published OpenAPI description in testdata, at most 50
// recipients, answered in Cloudflare's envelope {"success","errors",
// "messages","result":{"delivered","permanent_bounces","queued"}}; a
// recipient whose address starts with "bounce" is a permanent bounce.
// The token check is GET /client/v4/user/tokens/verify.
package cloudflarefake

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/jsonfake"
)

//go:embed testdata/openapi.yaml
var openAPI []byte

// AccountID is the only account the fake has.
const AccountID = "0123456789abcdef0123456789abcdef"

// MaxRecipients is the most recipients (to, cc and bcc) one send takes.
const MaxRecipients = 50

// New starts a fake that accepts token as its only valid API token.
func New(token string) *jsonfake.Server {
	return jsonfake.New(jsonfake.API{
		Send:          "POST /client/v4/accounts/" + AccountID + "/email/sending/send",
		Reads:         []string{"GET /client/v4/user/tokens/verify"},
		ReadAnswer:    `{"success":true,"errors":[],"messages":[],"result":{"id":"tok","status":"active"}}`,
		Key:           jsonfake.BearerKey,
		OpenAPI:       openAPI,
		Decode:        jsonfake.Decoding("malformed JSON (the fake takes from as an object and to, cc, bcc as lists)", decode),
		Accepted:      accepted,
		Error:         errorBody,
		MaxRecipients: MaxRecipients,
	}, token)
}

func errorBody(status int, message string) string {
	code := 10001
	if status == http.StatusUnauthorized {
		code, message = 10000, "Authentication error"
	}
	b, _ := json.Marshal(map[string]any{"success": false, "errors": []map[string]any{{"code": code, "message": message}}, "messages": []string{}, "result": nil})
	return string(b)
}

func accepted(_ string, m fakeapi.Mail) (int, string) {
	result := map[string][]string{"delivered": {}, "queued": {}, "permanent_bounces": {}}
	for _, a := range append(append(append([]fakeapi.Address{}, m.To...), m.Cc...), m.Bcc...) {
		k := "delivered"
		if strings.HasPrefix(a.Email, "bounce") {
			k = "permanent_bounces"
		}
		result[k] = append(result[k], a.Email)
	}
	b, _ := json.Marshal(map[string]any{"success": true, "errors": []string{}, "messages": []string{}, "result": result})
	return http.StatusOK, string(b)
}

type wireAddress struct{ Address, Name string }

type wire struct {
	From        wireAddress
	To, Cc, Bcc []string
	ReplyTo     *wireAddress `json:"reply_to"`
	Subject     string
	HTML, Text  string
	Headers     map[string]string
	Attachments []struct {
		Content, Filename, Type, Disposition string
		ContentID                            string `json:"content_id"`
	}
}

func decode(in *wire) (fakeapi.Mail, string) {
	var m fakeapi.Mail
	m.From = fakeapi.Address{Name: in.From.Name, Email: in.From.Address}
	lists := []*[]fakeapi.Address{&m.To, &m.Cc, &m.Bcc}
	for i, l := range [][]string{in.To, in.Cc, in.Bcc} {
		var p string
		if *lists[i], p = jsonfake.Mailboxes(l); p != "" {
			return m, p
		}
	}
	if in.ReplyTo != nil {
		m.ReplyTo = []fakeapi.Address{{Name: in.ReplyTo.Name, Email: in.ReplyTo.Address}}
	}
	m.Subject, m.HTML, m.Text, m.Headers = in.Subject, in.HTML, in.Text, in.Headers
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
