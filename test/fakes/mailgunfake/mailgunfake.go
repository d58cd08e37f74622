// Package mailgunfake is a local stand-in for the Mailgun v3 API that
// speaks its wire protocol closely enough for the real mailgun-go SDK:
// POST /v3/{domain}/messages as multipart/form-data (or form-urlencoded)
// with HTTP Basic auth api:KEY, answered with
// {"id":"<...>","message":"Queued. Thank you."}, errors as {"message":...},
// GET /v3/domains/{domain} used to check credentials without sending, and
// GET /v3/{domain}/events filtered by message-id (an "accepted" event for
// each message kept whose Message-ID header, without brackets, matches).
// Every accepted message is recorded decoded. The fake can be told to fail
// or stall the next requests.
package mailgunfake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/mail"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// Address is one decoded mailbox.
type Address = fakeapi.Address

// Attachment is one decoded file part with its raw bytes. PartContentType
// is the Content-Type of the multipart part as sent; ContentType is the
// type Mailgun gives the attachment in the delivered MIME: the type of the
// filename's extension when it has a known one, else the part's type.
// Inline parts are referenced by their filename, which is their content id.
type Attachment struct {
	Filename        string
	ContentType     string
	PartContentType string
	Data            []byte
	Inline          bool
	ContentID       string
}

// Message is one accepted messages request, decoded. Headers holds the h:
// fields other than Reply-To.
type Message struct {
	ID     string
	Domain string
	From   Address
	fakeapi.Content
	Variables   map[string]string // the v: fields
	Options     map[string]string // the o: fields
	Attachments []Attachment
}

// Server is a running fake. Its zero value is not usable; call New.
type Server struct {
	// The embedded server's URL is the fake's root; the SDK's API base is
	// URL + "/v3".
	*faults.Server

	apiKey string
	domain string

	messages     fakeapi.Log[Message]
	eventQueries atomic.Int64
}

// New starts a fake that knows one sending domain and accepts apiKey as
// its only valid API key.
func New(apiKey, domain string) *Server {
	s := &Server{apiKey: apiKey, domain: domain}
	s.Server = faults.NewRoutedServer(faults.Routes{
		"POST /v3/{domain}/messages": s.handleSend,
		"GET /v3/domains/{domain}":   s.handleDomain,
		// "/v3/{domain}/events" would clash with "/v3/domains/{domain}".
		"GET /v3/{domain}/{resource}": s.handleEvents,
	})
	return s
}

// Messages returns a copy of every accepted message, oldest first.
func (s *Server) Messages() []Message { return s.messages.All() }

// FailNext makes the next n requests, whatever their path, answer status
// with body (a Mailgun {"message":...} JSON when body is empty).
func (s *Server) FailNext(n, status int, body string) {
	if body == "" {
		body = messageBody(fmt.Sprintf("simulated failure %d", status))
	}
	s.Server.FailNext(n, status, body)
}

// authorized checks HTTP Basic auth with user "api" and the API key, as
// Mailgun does, and answers 401 "Forbidden" (plain text) otherwise.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if ok && user == "api" && pass == s.apiKey {
		return true
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = io.WriteString(w, "Forbidden")
	return false
}

func (s *Server) handleDomain(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	d := r.PathValue("domain")
	if d != s.domain {
		faults.WriteJSON(w, http.StatusNotFound, messageBody("Domain not found"))
		return
	}
	body, _ := json.Marshal(map[string]any{
		"domain": map[string]any{
			"created_at":  time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC).Format(time.RFC1123Z),
			"name":        d,
			"smtp_login":  "postmaster@" + d,
			"state":       "active",
			"type":        "custom",
			"wildcard":    false,
			"spam_action": "disabled",
			"web_scheme":  "https",
		},
		"receiving_dns_records": []any{},
		"sending_dns_records":   []any{},
	})
	faults.WriteJSON(w, http.StatusOK, string(body))
}

// MessageIDHeader returns the Message-ID header of m without angle
// brackets: the h:Message-Id field when it was sent, else its id.
func (m Message) MessageIDHeader() string {
	for k, v := range m.Headers {
		if strings.EqualFold(k, "Message-Id") {
			return strings.Trim(v, "<> ")
		}
	}
	return strings.Trim(m.ID, "<>")
}

// EventQueries returns how many events requests the fake answered.
func (s *Server) EventQueries() int { return int(s.eventQueries.Load()) }

func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if r.PathValue("resource") != "events" || r.PathValue("domain") != s.domain {
		faults.WriteJSON(w, http.StatusNotFound, messageBody("Not found"))
		return
	}
	want := strings.Trim(r.URL.Query().Get("message-id"), "<> ")
	s.eventQueries.Add(1)
	items := []any{}
	for i, m := range s.messages.All() {
		if want != "" && m.MessageIDHeader() != want {
			continue
		}
		items = append(items, map[string]any{
			"event": "accepted", "id": fmt.Sprintf("ev%d", i+1), "timestamp": float64(time.Now().Unix()),
			"message": map[string]any{"headers": map[string]any{"message-id": m.MessageIDHeader(), "subject": m.Subject}},
		})
	}
	page := "http://" + r.Host + r.URL.Path + "/page"
	body, _ := json.Marshal(map[string]any{"items": items,
		"paging": map[string]string{"next": page, "previous": page, "first": page, "last": page}})
	faults.WriteJSON(w, http.StatusOK, string(body))
}

func (s *Server) handleSend(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	domain := r.PathValue("domain")
	if domain != s.domain {
		faults.WriteJSON(w, http.StatusNotFound, messageBody("Domain not found: "+domain))
		return
	}
	m := Message{Domain: domain, Content: fakeapi.Content{Headers: map[string]string{}}, Variables: map[string]string{}, Options: map[string]string{}}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var values map[string][]string
	switch ct {
	case "multipart/form-data":
		form, err := readMultipart(r)
		if err != nil {
			faults.WriteJSON(w, http.StatusBadRequest, messageBody("Invalid multipart body"))
			return
		}
		values = form.values
		for _, f := range form.files {
			if f.field != "attachment" {
				continue
			}
			m.Attachments = append(m.Attachments, fileAttachment(f))
		}
		for _, f := range form.files {
			if f.field != "inline" {
				continue
			}
			m.Attachments = append(m.Attachments, fileAttachment(f))
		}
	case "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			faults.WriteJSON(w, http.StatusBadRequest, messageBody("Invalid form body"))
			return
		}
		values = r.PostForm
	default:
		faults.WriteJSON(w, http.StatusBadRequest, messageBody("Content-Type must be multipart/form-data or application/x-www-form-urlencoded"))
		return
	}
	if msg := decodeFields(&m, values); msg != "" {
		faults.WriteJSON(w, http.StatusBadRequest, messageBody(msg))
		return
	}
	m.ID = newMessageID(domain)
	s.messages.Add(m)
	body, _ := json.Marshal(map[string]string{"id": m.ID, "message": "Queued. Thank you."})
	faults.WriteJSON(w, http.StatusOK, string(body))
}

// decodeFields fills m from the form fields and returns Mailgun's message
// fileAttachment returns a form file as the attachment it records: its
// content type from its name's extension when known.
func fileAttachment(f formFile) Attachment {
	a := Attachment{Filename: f.filename, PartContentType: f.contentType, ContentType: f.contentType, Data: f.data}
	if t := mime.TypeByExtension(path.Ext(f.filename)); t != "" {
		a.ContentType, _, _ = strings.Cut(t, ";")
	}
	if f.field == "inline" {
		a.Inline, a.ContentID = true, f.filename
	}
	return a
}

// multipartForm is a multipart/form-data body: its values and its
// "attachment" and "inline" files, in order.
type multipartForm struct {
	values map[string][]string
	files  []formFile
}

type formFile struct {
	field, filename, contentType string
	data                         []byte
}

// readMultipart reads a multipart/form-data body part by part, as
// Mailgun does: a message to 1,000 recipients sends 1,000 "to" parts,
// past the part limit of net/http's ParseMultipartForm.
func readMultipart(r *http.Request) (*multipartForm, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, err
	}
	form := &multipartForm{values: map[string][]string{}}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return form, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(p, 64<<20))
		if err != nil {
			return nil, err
		}
		name := p.FormName()
		if p.FileName() != "" && (name == "attachment" || name == "inline") {
			form.files = append(form.files, formFile{field: name, filename: p.FileName(), contentType: p.Header.Get("Content-Type"), data: data})
			continue
		}
		form.values[name] = append(form.values[name], string(data))
	}
}

// MaxRecipients is the most recipients (to, cc and bcc) Mailgun takes in
// one message; the fake answers 400 over it.
const MaxRecipients = 1000

// for a missing or malformed parameter, or "".
func decodeFields(m *Message, v map[string][]string) string {
	first := func(k string) string {
		if len(v[k]) > 0 {
			return v[k][0]
		}
		return ""
	}
	if first("from") == "" {
		return "'from' parameter is missing"
	}
	from, err := mail.ParseAddress(first("from"))
	if err != nil {
		return "'from' parameter is not a valid address. please check documentation"
	}
	m.From = Address{Name: from.Name, Email: from.Address}
	var ok bool
	if m.To, ok = addressList(v["to"]); !ok {
		return "'to' parameter is not a valid address. please check documentation"
	}
	if len(m.To) == 0 {
		return "'to' parameter is missing"
	}
	if m.Cc, ok = addressList(v["cc"]); !ok {
		return "'cc' parameter is not a valid address. please check documentation"
	}
	if m.Bcc, ok = addressList(v["bcc"]); !ok {
		return "'bcc' parameter is not a valid address. please check documentation"
	}
	if n := len(m.To) + len(m.Cc) + len(m.Bcc); n > MaxRecipients {
		return fmt.Sprintf("Too many recipients: %d; a message may have at most %d (to, cc and bcc)", n, MaxRecipients)
	}
	m.Subject, m.Text, m.HTML = first("subject"), first("text"), first("html")
	if m.Text == "" && m.HTML == "" && first("template") == "" {
		return "Need at least one of 'text', 'html' or 'template' parameters specified"
	}
	for k, vals := range v {
		if len(vals) == 0 {
			continue
		}
		switch {
		case strings.EqualFold(k, "h:Reply-To"):
			if m.ReplyTo, ok = addressList(vals); !ok {
				return "'h:Reply-To' parameter is not a valid address. please check documentation"
			}
		case strings.HasPrefix(k, "h:"):
			m.Headers[k[2:]] = vals[0]
		case strings.HasPrefix(k, "v:"):
			m.Variables[k[2:]] = vals[0]
		case strings.HasPrefix(k, "o:"):
			m.Options[k[2:]] = vals[0]
		}
	}
	return ""
}

// addressList parses repeated fields that may each hold a comma-separated
// list.
func addressList(fields []string) ([]Address, bool) {
	var out []Address
	for _, f := range fields {
		if strings.TrimSpace(f) == "" {
			continue
		}
		list, err := mail.ParseAddressList(f)
		if err != nil {
			return nil, false
		}
		for _, a := range list {
			out = append(out, Address{Name: a.Name, Email: a.Address})
		}
	}
	return out, true
}

func messageBody(msg string) string {
	b, _ := json.Marshal(map[string]string{"message": msg})
	return string(b)
}

// newMessageID returns an id shaped like Mailgun's, angle brackets included.
func newMessageID(domain string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return fmt.Sprintf("<%s.%s@%s>", time.Now().UTC().Format("20060102150405"), hex.EncodeToString(b), domain)
}
