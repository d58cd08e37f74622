package apidriver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// JSONAPI is a provider API that takes and answers JSON: the request and
// error mapping every API driver without an SDK of its own shares
// (brevo, sparkpost, mailjet, resend, smtp2go, mailersend, elasticemail,
// mandrill, mailtrap, sendlayer, smtpcom, emailit, cloudflare). Every
// failure it returns is classified (core.HTTPResponseError: 429 a rate
// limit honouring Retry-After or the provider's own reset header, 5xx
// temporary, other statuses permanent; a network failure temporary,
// uncertain when the request had left whole, see UnansweredTransport)
// and shows none of Secrets. It is safe for concurrent use.
type JSONAPI struct {
	// Name prefixes every error ("mailtrap: send: ...").
	Name string
	// BaseURL is the API's base URL, without a trailing slash.
	BaseURL string
	// Client makes the requests: HTTPClient(env).
	Client *http.Client
	// Auth sets the request's credentials (a header); nil for an API that
	// takes its key in the body.
	Auth func(h http.Header)
	// Secrets are kept out of every error text.
	Secrets []string
	// Refused, when set, classifies a successful-looking or failed answer
	// the provider's own way (Mandrill's named errors): it returns an
	// error for an answer that is a failure, or nil to let the status
	// decide.
	Refused func(status int, body []byte) error
	// RateLimitReset, when set, is the provider's own header of the
	// seconds until its rate limit resets, read when a 429 has no
	// Retry-After (Brevo's X-Sib-Ratelimit-Reset).
	RateLimitReset string
}

// Response is a provider's answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// StatusLine is the answer's status code and text ("202 Accepted"), the
// response a receipt records.
func (r *Response) StatusLine() string {
	return fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status))
}

// Do sends body (nil for none) as JSON with method to path under
// BaseURL, decodes a 2xx answer into out (when not nil; an unreadable
// one leaves it as it is) and returns the answer's header. what names
// the call in errors ("send", "verify").
func (a *JSONAPI) Do(ctx context.Context, what, method, path string, body, out any) (http.Header, error) {
	return a.DoWithHeader(ctx, what, method, path, nil, body, out)
}

// DoWithHeader is Do with header's fields added to the request (an
// idempotency key).
func (a *JSONAPI) DoWithHeader(ctx context.Context, what, method, path string, header http.Header, body, out any) (http.Header, error) {
	r, err := a.Call(ctx, what, method, path, header, body, out)
	if err != nil {
		return nil, err
	}
	return r.Header, nil
}

// Call is DoWithHeader returning the whole answer: its status, header
// and body, also with the error of an answer that is a failure (nil when
// no answer came).
func (a *JSONAPI) Call(ctx context.Context, what, method, path string, header http.Header, body, out any) (*Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, a.fail(what, core.Permanent(fmt.Errorf("encode the request: %w", err)))
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.BaseURL+path, rd)
	if err != nil {
		return nil, a.fail(what, core.Permanent(err))
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if a.Auth != nil {
		a.Auth(req.Header)
	}
	resp, err := a.Client.Do(req)
	if err != nil {
		return nil, a.fail(what, core.Temporary(err))
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, a.fail(what, core.Temporary(fmt.Errorf("read the answer: %w", err)))
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: answer}
	if a.Refused != nil {
		if err := a.Refused(r.Status, answer); err != nil {
			return r, a.fail(what, err)
		}
	}
	if r.Status < 200 || r.Status > 299 {
		h := r.Header
		if v := h.Get(a.RateLimitReset); a.RateLimitReset != "" && v != "" && h.Get("Retry-After") == "" {
			h = h.Clone()
			h.Set("Retry-After", v)
		}
		return r, a.fail(what, core.HTTPResponseError(r.Status, h, Summary(answer)))
	}
	if out != nil {
		// The provider took the request: an answer it cannot be read from
		// leaves out empty (no message id) rather than fail a message that
		// left.
		_ = json.Unmarshal(answer, out)
	}
	return r, nil
}

// Verify makes the credentials check, an authenticated read that sends
// nothing: 401 and 403 say the key was rejected, for good. valid, when
// not nil, reports an answer other than 2xx that proves the key valid
// all the same (a key allowed to send only).
func (a *JSONAPI) Verify(ctx context.Context, method, path string, body any, valid func(*Response) bool) error {
	r, err := a.Call(ctx, "verify", method, path, nil, body, nil)
	if err == nil || r == nil {
		return err
	}
	if valid != nil && valid(r) {
		return nil
	}
	if r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden {
		return a.fail("verify", core.Permanent(fmt.Errorf("the API key was rejected (HTTP %d): %s", r.Status, Summary(r.Body))))
	}
	return err
}

func (a *JSONAPI) fail(what string, err error) error {
	return Scrub(fmt.Errorf("%s: %s: %w", a.Name, what, err), a.Secrets...)
}

// Base64 is the standard base64 of data, the form every JSON mail API
// takes attachment content in.
func Base64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

// ContentType is a's content type, application/octet-stream when it has
// none.
func ContentType(a core.Attachment) string {
	if a.ContentType != "" {
		return a.ContentType
	}
	return "application/octet-stream"
}

// IsInline reports whether a is an inline image the HTML refers to by
// its Content-ID.
func IsInline(a core.Attachment) bool { return a.Inline && a.ContentID != "" }

// Reserved reports the header fields a JSON mail API builds itself from
// the message's own fields (sender, recipients, subject, body) and
// refuses as custom headers.
func Reserved(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "From", "To", "Cc", "Bcc", "Subject", "Reply-To", "Sender", "Content-Type",
		"Content-Transfer-Encoding", "Mime-Version", "Dkim-Signature", "Received", "Return-Path":
		return true
	}
	return false
}

// CustomHeaders returns msg's headers a JSON mail API takes as custom
// ones (Reserved left out), as a map; nil when there are none.
func CustomHeaders(msg *core.Message) map[string]string {
	var out map[string]string
	for _, h := range msg.Headers {
		if Reserved(h.Name) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[h.Name] = h.Value
	}
	return out
}

// CheckSize refuses, for good, a message larger than max bytes (the
// provider's cap on a whole message): its bodies, subject, headers and
// attachments counted as the base64 the JSON APIs carry them in.
func CheckSize(msg *core.Message, max int) error {
	n := len(msg.Subject) + len(msg.Text) + len(msg.HTML)
	for _, h := range msg.Headers {
		n += len(h.Name) + len(h.Value)
	}
	for _, a := range msg.Attachments {
		n += base64.StdEncoding.EncodedLen(len(a.Data))
	}
	if n > max {
		return core.Permanent(fmt.Errorf("the message is %d bytes, more than the %d the provider takes", n, max))
	}
	return nil
}

// Mailbox is a as one "Name <email>" string, for the APIs that take a
// mailbox so: the name quoted (UTF-8 kept as it is, quotes and
// backslashes escaped), the bare address when it has no name.
func Mailbox(a core.Address) string {
	if a.Name == "" {
		return a.Email
	}
	name := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(a.Name)
	return `"` + name + `" <` + a.Email + `>`
}

// Mailboxes is Mailbox of each of list.
func Mailboxes(list []core.Address) []string {
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, Mailbox(a))
	}
	return out
}

// Advanced returns f marked Advanced: a field a first-time user need not
// see (base_url, a webhook secret).
func Advanced(f core.Field) core.Field {
	f.Advanced = true
	return f
}

// BearerAuth is the Auth of an API that takes its key as
// "Authorization: Bearer <key>".
func BearerAuth(key string) func(http.Header) {
	return func(h http.Header) { h.Set("Authorization", "Bearer "+key) }
}

// HeaderAuth returns the Auth maker of an API that takes its key in the
// header name.
func HeaderAuth(name string) func(key string) func(http.Header) {
	return func(key string) func(http.Header) {
		return func(h http.Header) { h.Set(name, key) }
	}
}

// NewJSONAPI returns the JSONAPI named name of a connection's settings s:
// its base_url (def when empty), the host's client of env, and its
// api_key, which auth (nil: none, for a key in the body) sets on each
// request and which no error shows. An empty api_key is a field error.
// The key is returned for the APIs that take it in the body.
func NewJSONAPI(name, def string, s core.Settings, env core.DriverEnv, auth func(key string) func(http.Header)) (JSONAPI, string, error) {
	key := s.String(KeyAPIKey)
	if key == "" {
		return JSONAPI{}, "", core.Invalid(map[string]string{KeyAPIKey: "This field is required."})
	}
	a := JSONAPI{Name: name, BaseURL: BaseURL(s, def), Client: HTTPClient(env), Secrets: []string{key}}
	if auth != nil {
		a.Auth = auth(key)
	}
	return a, key, nil
}

// WithReplyTo returns headers with a Reply-To header of list, for the
// APIs whose own reply-to field takes one address only: headers itself
// (made when nil) when list has several addresses, unchanged otherwise.
func WithReplyTo(headers map[string]string, list []core.Address) map[string]string {
	if len(list) < 2 {
		return headers
	}
	if headers == nil {
		headers = map[string]string{}
	}
	headers["Reply-To"] = strings.Join(Mailboxes(list), ", ")
	return headers
}
