package zoho

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
)

// Transport sends through the Zoho Mail API for one connection. It is safe
// for concurrent use.
type Transport struct {
	connID int64
	tokens core.TokenSource
	client *client
	from   core.Address // from_email, and from_name when set

	mu        sync.Mutex
	accountID string // from settings, or looked up once
}

// BaseURL returns the Mail API base URL the transport talks to.
func (t *Transport) BaseURL() string { return t.client.base }

// AccountID returns the account id the transport sends from, "" until it
// is known.
func (t *Transport) AccountID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.accountID
}

// account returns the account id, looking it up the first time.
func (t *Transport) account(ctx context.Context, token string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.accountID != "" {
		return t.accountID, nil
	}
	id, err := t.client.lookupAccount(ctx, token, t.from.Email)
	if err != nil {
		return "", fmt.Errorf("look up the account id: %w", err)
	}
	t.accountID = id
	return id, nil
}

// uploaded is the answer of an attachment upload.
type uploaded struct {
	StoreName      string `json:"storeName"`
	AttachmentPath string `json:"attachmentPath"`
	AttachmentName string `json:"attachmentName"`
	URL            string `json:"url,omitempty"`
}

// outgoing is the JSON body of POST /api/accounts/{id}/messages.
type outgoing struct {
	FromAddress string     `json:"fromAddress"`
	ToAddress   string     `json:"toAddress"`
	CcAddress   string     `json:"ccAddress,omitempty"`
	BccAddress  string     `json:"bccAddress,omitempty"`
	Subject     string     `json:"subject"`
	Content     string     `json:"content"`
	MailFormat  string     `json:"mailFormat"`
	AskReceipt  string     `json:"askReceipt"`
	Encoding    string     `json:"encoding"`
	Attachments []uploaded `json:"attachments,omitempty"`
}

// Send implements core.Transport: the account id (once), one upload per
// attachment, then the send.
func (t *Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	msg = msg.ForEnvelope()
	from := apidriver.Sender{Email: t.from.Email, Name: t.from.Name}.Apply(msg.From)
	var rc core.Receipt
	err := oauthdriver.WithToken(ctx, t.tokens, t.connID, func(token string) error {
		id, err := t.account(ctx, token)
		if err != nil {
			return err
		}
		out := outgoing{
			FromAddress: mailbox(from),
			ToAddress:   mailboxes(msg.To),
			CcAddress:   mailboxes(msg.Cc),
			BccAddress:  mailboxes(msg.Bcc),
			Subject:     msg.Subject,
			Content:     msg.Text,
			MailFormat:  "plaintext",
			AskReceipt:  "no",
			Encoding:    "UTF-8",
		}
		html := msg.HTML
		for i, a := range msg.Attachments {
			up, err := t.upload(ctx, token, id, a, i)
			if err != nil {
				return fmt.Errorf("upload attachment %d: %w", i+1, err)
			}
			if a.Inline && a.ContentID != "" && up.URL != "" {
				html = replaceCID(html, strings.Trim(a.ContentID, "<>"), up.URL)
			}
			out.Attachments = append(out.Attachments, uploaded{StoreName: up.StoreName, AttachmentPath: up.AttachmentPath, AttachmentName: up.AttachmentName})
		}
		if msg.HTML != "" {
			out.Content, out.MailFormat = html, "html"
		}
		body, err := json.Marshal(out)
		if err != nil {
			return core.Permanent(fmt.Errorf("encode the message: %w", err))
		}
		data, err := t.client.call(ctx, token, http.MethodPost, "/api/accounts/"+url.PathEscape(id)+"/messages", "application/json", body)
		if err != nil {
			return err
		}
		rc = core.Receipt{MessageID: messageID(data), Response: "200 success"}
		return nil
	})
	if err != nil {
		return core.Receipt{}, fmt.Errorf("zoho: send: %w", err)
	}
	return rc, nil
}

// upload stores one attachment with Zoho (raw body) and returns what the
// send refers to it by.
func (t *Transport) upload(ctx context.Context, token, accountID string, a core.Attachment, i int) (uploaded, error) {
	name := a.Filename
	if name == "" {
		name = fmt.Sprintf("attachment-%d", i+1)
	}
	q := url.Values{"fileName": {name}}
	if a.Inline {
		q.Set("isInline", "true")
	}
	path := "/api/accounts/" + url.PathEscape(accountID) + "/messages/attachments?" + q.Encode()
	data, err := t.client.call(ctx, token, http.MethodPost, path, "application/octet-stream", a.Data)
	if err != nil {
		return uploaded{}, err
	}
	var up uploaded
	if err := json.Unmarshal(data, &up); err != nil || up.StoreName == "" || up.AttachmentPath == "" {
		return uploaded{}, core.Permanent(fmt.Errorf("the upload answer names no stored file: %s", apidriver.Summary(data)))
	}
	if up.AttachmentName == "" {
		up.AttachmentName = name
	}
	return up, nil
}

// Verify implements core.Verifier with GET /api/accounts, an
// authenticated read that sends nothing.
func (t *Transport) Verify(ctx context.Context) error {
	err := oauthdriver.WithToken(ctx, t.tokens, t.connID, func(token string) error {
		_, err := t.client.call(ctx, token, http.MethodGet, "/api/accounts", "", nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("zoho: verify: %w", err)
	}
	return nil
}

// messageID returns the messageId of a send answer's data, a string or a
// number, or "" when it has none.
func messageID(data json.RawMessage) string {
	var d struct {
		MessageID json.RawMessage `json:"messageId"`
	}
	if json.Unmarshal(data, &d) != nil || len(d.MessageID) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(d.MessageID, &s) == nil {
		return s
	}
	if d.MessageID[0] >= '0' && d.MessageID[0] <= '9' {
		return string(d.MessageID)
	}
	return ""
}

// mailbox renders an address as Zoho takes it: "Name <addr>", the name
// quoted when it holds a character that would end it, or the bare address.
func mailbox(a core.Address) string {
	if a.Name == "" {
		return a.Email
	}
	name := a.Name
	if strings.ContainsAny(name, "\"(),.:;<>@[\\]") {
		var b bytes.Buffer
		b.WriteByte('"')
		for _, r := range name {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
		name = b.String()
	}
	return name + " <" + a.Email + ">"
}

// mailboxes joins addresses with commas, as Zoho's address fields take them.
func mailboxes(list []core.Address) string {
	parts := make([]string, 0, len(list))
	for _, a := range list {
		parts = append(parts, mailbox(a))
	}
	return strings.Join(parts, ",")
}

// replaceCID replaces each whole "cid:<id>" reference in html with url:
// one followed by the end of an attribute or of a CSS url() (a quote,
// white space, ")" or ">") or by the end of html, so that the reference
// to "1" leaves "cid:10" alone (WordPress numbers a list's embeds 0, 1,
// 2, ...).
func replaceCID(html, id, url string) string {
	ref := "cid:" + id
	if !strings.Contains(html, ref) {
		return html
	}
	var b strings.Builder
	for {
		i := strings.Index(html, ref)
		if i < 0 {
			b.WriteString(html)
			return b.String()
		}
		end := i + len(ref)
		b.WriteString(html[:i])
		if end == len(html) || strings.IndexByte("\"' \t\r\n)>", html[end]) >= 0 {
			b.WriteString(url)
		} else {
			b.WriteString(ref)
		}
		html = html[end:]
	}
}
