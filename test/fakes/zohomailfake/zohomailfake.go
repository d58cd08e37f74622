// Package zohomailfake is a local stand-in for the Zoho Mail REST API,
// speaking its wire protocol for what a sending client uses:
//
//   - GET /api/accounts: the token's accounts ({"status","data":[...]},
//     each with accountId, primaryEmailAddress, emailAddress[],
//     sendMailDetails[], displayName).
//   - POST /api/accounts/{accountId}/messages/attachments: an upload, raw
//     (?fileName=..., the bytes as the body) or multipart
//     (?uploadType=multipart, "attach" file parts); answers storeName,
//     attachmentPath, attachmentName (an object for raw, an array for
//     multipart), and a url for inline (?isInline=true) uploads.
//   - POST /api/accounts/{accountId}/messages: the send, JSON with
//     fromAddress (an address of the account), toAddress, ccAddress,
//     bccAddress (comma-separated), subject, content, mailFormat
//     (html|plaintext), askReceipt, encoding and attachments (refer to
//     uploads); an unknown key is refused as Zoho does
//     (EXTRA_KEY_FOUND_IN_JSON).
//
// Every answer has Zoho's envelope {"status":{"code","description"},
// "data":{...}}; errors carry data.errorCode and data.moreInfo. Requests
// need "Authorization: Zoho-oauthtoken <token>" with a token the test's
// validator accepts, else 401 INVALID_OAUTHTOKEN. The error codes other
// than INVALID_OAUTHTOKEN and EXTRA_KEY_FOUND_IN_JSON are modelled on
// Zoho's shape, not copied from its documentation. Faults come from
// test/fakes/faults.
package zohomailfake

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net/http"
	"net/mail"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// Account is one Zoho Mail account of the token's user.
type Account struct {
	ID          string // a 64-bit number, as Zoho gives it
	Email       string // primaryEmailAddress
	Aliases     []string
	DisplayName string
}

func (a *Account) sendsAs(addr string) bool {
	if strings.EqualFold(a.Email, addr) {
		return true
	}
	for _, al := range a.Aliases {
		if strings.EqualFold(al, addr) {
			return true
		}
	}
	return false
}

// Address is one decoded mailbox.
type Address = fakeapi.Address

// Attachment is one uploaded file. ContentType is what Zoho derives from
// the file name.
type Attachment struct {
	Filename    string
	ContentType string
	Data        []byte
	Inline      bool
	StoreName   string
	Path        string
	URL         string // set for inline uploads
}

// Message is one accepted send, decoded. Text or HTML holds the content,
// by mailFormat.
type Message struct {
	ID          string
	AccountID   string
	Token       string
	From        Address
	To          []Address
	Cc          []Address
	Bcc         []Address
	Subject     string
	Text        string
	HTML        string
	MailFormat  string
	AskReceipt  string
	Encoding    string
	Attachments []Attachment
}

// Server is a running fake. Its zero value is not usable; call New.
type Server struct {
	// The embedded server's URL is the base URL to use in place of
	// https://mail.zoho.<dc>.
	*faults.Server

	valid    func(token string) bool
	accounts []Account

	messages        fakeapi.Log[Message]
	tokens          fakeapi.Log[string]
	mu              sync.Mutex
	uploads         map[string]Attachment // by storeName + "|" + path
	accountRequests atomic.Int64
}

// New starts a fake whose token validator is valid and whose user has the
// accounts, the first one listed first.
func New(valid func(token string) bool, accounts ...Account) *Server {
	s := &Server{valid: valid, accounts: accounts, uploads: map[string]Attachment{}}
	s.Server = faults.NewRoutedServer(faults.Routes{
		"GET /api/accounts":                            s.handleAccounts,
		"POST /api/accounts/{id}/messages/attachments": s.handleUpload,
		"POST /api/accounts/{id}/messages":             s.handleSend,
	})
	return s
}

// Messages returns a copy of every accepted message, oldest first.
func (s *Server) Messages() []Message { return s.messages.All() }

// Uploads returns how many files are stored.
func (s *Server) Uploads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.uploads)
}

// Tokens returns the token of every request, oldest first, the refused
// ones included.
func (s *Server) Tokens() []string { return s.tokens.All() }

// AccountRequests returns how many GET /api/accounts requests the fake
// answered (faults not included).
func (s *Server) AccountRequests() int {
	return int(s.accountRequests.Load())
}

// FailNext makes the next n requests, whatever their path, answer status
// in Zoho's error shape.
func (s *Server) FailNext(n, status int) {
	code := "INTERNAL_SERVER_ERROR"
	switch {
	case status == http.StatusUnauthorized:
		code = "INVALID_OAUTHTOKEN"
	case status == http.StatusTooManyRequests:
		code = "TOO_MANY_REQUESTS"
	case status < 500:
		code = "INVALID_DATA"
	}
	s.Server.FailNext(n, status, ErrorBody(status, code, fmt.Sprintf("simulated failure %d", status)))
}

// ErrorBody returns a Zoho Mail error answer.
func ErrorBody(status int, errorCode, moreInfo string) string {
	desc := "Invalid Input"
	if status >= 500 {
		desc = "Internal Error"
	}
	data := map[string]string{"errorCode": errorCode}
	if moreInfo != "" {
		data["moreInfo"] = moreInfo
	}
	b, _ := json.Marshal(map[string]any{"status": map[string]any{"code": status, "description": desc}, "data": data})
	return string(b)
}

func success(w http.ResponseWriter, data any) {
	b, _ := json.Marshal(map[string]any{"status": map[string]any{"code": 200, "description": "success"}, "data": data})
	faults.WriteJSON(w, http.StatusOK, string(b))
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) (string, bool) {
	if tok, ok := fakeapi.CheckToken(r, "Zoho-oauthtoken ", &s.tokens, s.valid); ok {
		return tok, true
	}
	faults.WriteJSON(w, http.StatusUnauthorized, ErrorBody(http.StatusUnauthorized, "INVALID_OAUTHTOKEN", ""))
	return "", false
}

func (s *Server) account(w http.ResponseWriter, r *http.Request) (*Account, bool) {
	id := r.PathValue("id")
	for i := range s.accounts {
		if s.accounts[i].ID == id {
			return &s.accounts[i], true
		}
	}
	faults.WriteJSON(w, http.StatusNotFound, ErrorBody(http.StatusNotFound, "INVALID_ACCOUNTID", "No account with the id "+id))
	return nil, false
}

func (s *Server) handleAccounts(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.authorized(w, r); !ok {
		return
	}
	s.accountRequests.Add(1)
	list := make([]map[string]any, 0, len(s.accounts))
	for _, a := range s.accounts {
		addrs := []map[string]any{{"mailId": a.Email, "isPrimary": true, "isAlias": false, "isConfirmed": true}}
		sendAs := []map[string]any{{"fromAddress": a.Email, "displayName": a.DisplayName, "status": true}}
		for _, al := range a.Aliases {
			addrs = append(addrs, map[string]any{"mailId": al, "isPrimary": false, "isAlias": true, "isConfirmed": true})
			sendAs = append(sendAs, map[string]any{"fromAddress": al, "displayName": a.DisplayName, "status": true})
		}
		list = append(list, map[string]any{
			"accountId":           a.ID,
			"accountName":         a.DisplayName,
			"displayName":         a.DisplayName,
			"primaryEmailAddress": a.Email,
			"mailboxAddress":      a.Email,
			"type":                "ZOHO_ACCOUNT",
			"emailAddress":        addrs,
			"sendMailDetails":     sendAs,
		})
	}
	success(w, list)
}

func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.authorized(w, r); !ok {
		return
	}
	if _, ok := s.account(w, r); !ok {
		return
	}
	q := r.URL.Query()
	inline := q.Get("isInline") == "true"
	if q.Get("uploadType") == "multipart" {
		mr, err := r.MultipartReader()
		if err != nil {
			faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "INVALID_DATA", "multipart body expected"))
			return
		}
		var out []Attachment
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "INVALID_DATA", err.Error()))
				return
			}
			if part.FormName() != "attach" || part.FileName() == "" {
				continue
			}
			data, _ := io.ReadAll(part)
			out = append(out, s.store(part.FileName(), data, inline))
		}
		if len(out) == 0 {
			faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "INVALID_DATA", "no attach part"))
			return
		}
		list := make([]map[string]string, 0, len(out))
		for _, a := range out {
			list = append(list, uploadAnswer(a))
		}
		success(w, list)
		return
	}
	name := q.Get("fileName")
	if name == "" || strings.ContainsAny(name, "/\\") {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "INVALID_DATA", "fileName is required and must not be a path"))
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil || len(data) == 0 {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "INVALID_DATA", "Error with file attached"))
		return
	}
	success(w, uploadAnswer(s.store(name, data, inline)))
}

func uploadAnswer(a Attachment) map[string]string {
	out := map[string]string{"storeName": a.StoreName, "attachmentPath": a.Path, "attachmentName": a.Filename,
		"attachmentSize": fmt.Sprint(len(a.Data))}
	if a.URL != "" {
		out["url"] = a.URL
	}
	return out
}

func (s *Server) store(name string, data []byte, inline bool) Attachment {
	ct := mime.TypeByExtension(path.Ext(name))
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	a := Attachment{Filename: name, ContentType: ct, Data: data, Inline: inline,
		StoreName: "NR_" + randomHex(6), Path: "/Mail/" + randomHex(8) + "/" + name}
	if inline {
		a.URL = "/zm/ImageDisplay?na=" + a.StoreName + "&f=" + name
	}
	s.mu.Lock()
	s.uploads[a.StoreName+"|"+a.Path] = a
	s.mu.Unlock()
	return a
}

// MaxRecipients is the most external recipients (to, cc and bcc) of one
// message Zoho Mail takes from a free account; the fake answers 400 over
// it.
const MaxRecipients = 100

// sendFields are the keys the send accepts.
var sendFields = map[string]bool{
	"fromAddress": true, "toAddress": true, "ccAddress": true, "bccAddress": true, "subject": true,
	"content": true, "mailFormat": true, "askReceipt": true, "encoding": true, "attachments": true,
	"isSchedule": true, "scheduleType": true, "timeZone": true, "scheduleTime": true,
}

type wireAttachment struct {
	StoreName      string `json:"storeName"`
	AttachmentPath string `json:"attachmentPath"`
	AttachmentName string `json:"attachmentName"`
}

func (s *Server) handleSend(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.authorized(w, r)
	if !ok {
		return
	}
	acct, ok := s.account(w, r)
	if !ok {
		return
	}
	body, err := io.ReadAll(r.Body)
	var keys map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(body, &keys)
	}
	if err != nil {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "JSON_PARSE_ERROR", "The request body is not JSON"))
		return
	}
	for k := range keys {
		if !sendFields[k] {
			faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "EXTRA_KEY_FOUND_IN_JSON", k))
			return
		}
	}
	var in struct {
		FromAddress string           `json:"fromAddress"`
		ToAddress   string           `json:"toAddress"`
		CcAddress   string           `json:"ccAddress"`
		BccAddress  string           `json:"bccAddress"`
		Subject     string           `json:"subject"`
		Content     string           `json:"content"`
		MailFormat  string           `json:"mailFormat"`
		AskReceipt  string           `json:"askReceipt"`
		Encoding    string           `json:"encoding"`
		Attachments []wireAttachment `json:"attachments"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "JSON_PARSE_ERROR", err.Error()))
		return
	}
	m := Message{AccountID: acct.ID, Token: tok, Subject: in.Subject, MailFormat: in.MailFormat, AskReceipt: in.AskReceipt, Encoding: in.Encoding}
	from, err := mail.ParseAddress(in.FromAddress)
	if err != nil || !acct.sendsAs(from.Address) {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "INVALID_FROM_ADDRESS", "fromAddress must be an address of the account"))
		return
	}
	m.From = Address{Name: from.Name, Email: from.Address}
	for _, f := range []struct {
		name, value string
		dst         *[]Address
	}{{"toAddress", in.ToAddress, &m.To}, {"ccAddress", in.CcAddress, &m.Cc}, {"bccAddress", in.BccAddress, &m.Bcc}} {
		if strings.TrimSpace(f.value) == "" {
			continue
		}
		list, err := mail.ParseAddressList(f.value)
		if err != nil {
			faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "INVALID_DATA", "invalid "+f.name))
			return
		}
		for _, a := range list {
			*f.dst = append(*f.dst, Address{Name: a.Name, Email: a.Address})
		}
	}
	if len(m.To) == 0 {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "INVALID_DATA", "toAddress is required"))
		return
	}
	if n := len(m.To) + len(m.Cc) + len(m.Bcc); n > MaxRecipients {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "INVALID_DATA", fmt.Sprintf("too many recipients: %d, at most %d", n, MaxRecipients)))
		return
	}
	switch in.MailFormat {
	case "", "html":
		m.MailFormat, m.HTML = "html", in.Content
	case "plaintext":
		m.Text = in.Content
	default:
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "INVALID_DATA", "mailFormat must be html or plaintext"))
		return
	}
	if in.AskReceipt != "" && in.AskReceipt != "yes" && in.AskReceipt != "no" {
		faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "INVALID_DATA", "askReceipt must be yes or no"))
		return
	}
	s.mu.Lock()
	for _, a := range in.Attachments {
		up, ok := s.uploads[a.StoreName+"|"+a.AttachmentPath]
		if !ok {
			s.mu.Unlock()
			faults.WriteJSON(w, http.StatusBadRequest, ErrorBody(400, "INVALID_DATA", "unknown attachment "+a.AttachmentName))
			return
		}
		up.Filename = a.AttachmentName
		up.Data = bytes.Clone(up.Data)
		m.Attachments = append(m.Attachments, up)
	}
	s.mu.Unlock()
	m.ID = newMessageID()
	s.messages.Add(m)
	success(w, map[string]any{
		"messageId":   m.ID,
		"fromAddress": in.FromAddress,
		"toAddress":   in.ToAddress,
		"subject":     in.Subject,
		"askReceipt":  in.AskReceipt,
		"mailId":      "<" + randomHex(10) + "@zoho.com>",
	})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newMessageID returns a 19-digit decimal id, the shape of Zoho's ids.
func newMessageID() string {
	n, _ := rand.Int(rand.Reader, new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
	return fmt.Sprintf("1%018d", n)
}
