// Package smtpcomfake is a local stand-in for the SMTP.com API v4: POST
// /v4/messages with a Bearer key, a channel the account has, the
// recipients and originator objects, body parts and base64 attachments
// (disposition and cid), answered {"status":"success","data":{"message":
// "... msg_id: <id>"}}, errors as {"status":"fail","data":{...}}, and
// the authenticated read GET /v4/channels.
package smtpcomfake

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/jsonfake"
)

// Channel is the only sender channel the fake's account has.
const Channel = "shop-channel"

// MaxRecipients is the most recipients the fake takes in one send: the
// driver's cap, answered 400 over it.
const MaxRecipients = 50

// New starts a fake that accepts key as its only valid API key.
func New(key string) *jsonfake.Server {
	return jsonfake.New(jsonfake.API{
		Send:       "POST /v4/messages",
		Reads:      []string{"GET /v4/channels"},
		ReadAnswer: `{"status":"success","data":{"items":[{"name":"` + Channel + `","status":"active"}]}}`,
		Key:        jsonfake.BearerKey,
		Decode:     jsonfake.Decoding("malformed JSON", decode),
		Accepted: func(id string, _ fakeapi.Mail) (int, string) {
			return http.StatusOK, fmt.Sprintf(`{"status":"success","data":{"message":"Message queued for delivery, msg_id: %s"}}`, id)
		},
		Error: func(_ int, message string) string {
			b, _ := json.Marshal(map[string]any{"status": "fail", "data": map[string]string{"error": message}})
			return string(b)
		},
		MaxRecipients: MaxRecipients,
	}, key)
}

type wireAddress struct{ Name, Address string }

type wire struct {
	Channel    string
	Recipients struct{ To, Cc, Bcc []wireAddress }
	Originator struct {
		From    *wireAddress
		ReplyTo *wireAddress `json:"reply_to"`
	}
	Subject string
	Body    struct {
		Parts       []struct{ Type, Charset, Encoding, Content string }
		Attachments []struct{ Content, Type, Encoding, Filename, Disposition, CID string }
	}
	CustomHeaders map[string]string `json:"custom_headers"`
}

func addresses(in []wireAddress) []fakeapi.Address {
	return fakeapi.Addresses(in, func(a wireAddress) fakeapi.Address { return fakeapi.Address{Name: a.Name, Email: a.Address} })
}

func decode(in *wire) (fakeapi.Mail, string) {
	var m fakeapi.Mail
	if in.Channel != Channel {
		return m, "channel: unknown sender name " + in.Channel
	}
	if in.Originator.From == nil || in.Originator.From.Address == "" {
		return m, "originator.from.address is required"
	}
	if len(in.Recipients.To) == 0 {
		return m, "recipients.to is required"
	}
	if len(in.Body.Parts) == 0 {
		return m, "body.parts is required"
	}
	m.From = fakeapi.Address{Name: in.Originator.From.Name, Email: in.Originator.From.Address}
	m.To, m.Cc, m.Bcc = addresses(in.Recipients.To), addresses(in.Recipients.Cc), addresses(in.Recipients.Bcc)
	if in.Originator.ReplyTo != nil {
		m.ReplyTo = []fakeapi.Address{{Name: in.Originator.ReplyTo.Name, Email: in.Originator.ReplyTo.Address}}
	}
	m.Subject, m.Headers = in.Subject, in.CustomHeaders
	if p := jsonfake.TakeReplyTo(&m); p != "" {
		return m, p
	}
	for _, p := range in.Body.Parts {
		if p.Encoding != "8bit" && p.Encoding != "7bit" {
			return m, "the fake takes body parts as 7bit or 8bit content only"
		}
		switch p.Type {
		case "text/plain":
			m.Text = p.Content
		case "text/html":
			m.HTML = p.Content
		default:
			return m, "body.parts.type must be text/plain or text/html"
		}
	}
	for _, a := range in.Body.Attachments {
		if a.Encoding != "base64" {
			return m, "attachments.encoding must be base64"
		}
		if p := jsonfake.AddFile(&m, a.Filename, a.Type, a.Content, a.Disposition, a.CID); p != "" {
			return m, p
		}
	}
	return m, ""
}
