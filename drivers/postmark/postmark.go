// Package postmark is the mail transport for the Postmark email API. It
// registers itself as the driver "postmark" when imported and sends through
// the keighl/postmark SDK.
//
// That SDK predates context support, HTTP status reporting and message
// streams, so every call runs on its own http.Client whose RoundTripper
// (wrapping the host's transport) binds the call's context, records the
// response status and body, and adds MessageStream to the /email body.
package postmark

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	pm "github.com/keighl/postmark"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// Slug is the driver name of Postmark connections.
const Slug = "postmark"

// DefaultBaseURL is the real Postmark API, used when base_url is empty.
const DefaultBaseURL = "https://api.postmarkapp.com"

// DefaultMessageStream is Postmark's default transactional stream.
const DefaultMessageStream = "outbound"

// Settings keys of a Postmark connection.
const (
	KeyAPIKey        = apidriver.KeyAPIKey
	KeyMessageStream = "message_stream"
	KeyFromEmail     = apidriver.KeyFromEmail
	KeyFromName      = apidriver.KeyFromName
	KeyBaseURL       = apidriver.KeyBaseURL
)

func init() {
	core.Register(Driver())
}

// Driver returns the Postmark driver description: schema, rules and
// constructor.
func Driver() core.Driver {
	return core.Driver{
		Slug:               Slug,
		DefaultConcurrency: apidriver.DefaultConcurrency,
		// At most 50 addresses in each of To, Cc and Bcc, and a To in
		// every call.
		RecipientCaps: core.RecipientCaps{To: 50, Cc: 50, Bcc: 50, NeedsTo: true},
		Name:          "Postmark",
		Description:   "Send through the Postmark email API with a server API token.",
		SetupHelp:     "In Postmark, open Servers, choose your server, then API Tokens: copy the Server API token. The From address must be a confirmed Sender Signature or on a verified domain (Sender Signatures).",
		Fields: []core.Field{
			apidriver.APIKeyField("Server API token",
				"The server's API token (Servers → API Tokens)."),
			{Key: KeyMessageStream, Label: "Message stream", Type: core.FieldString, Default: DefaultMessageStream, Advanced: true,
				Help: "The stream id to send through; outbound is the default transactional stream."},
			apidriver.FromEmailField("Sender address; must be a confirmed Sender Signature or on a verified domain."),
			apidriver.FromNameField(),
			{Key: "webhook_username", Label: "Webhook username", Type: core.FieldString, Advanced: true,
				Help: "Pro webhook receiver: the HTTP Basic user name in the webhook URL set in Postmark (optional)."},
			{Key: "webhook_password", Label: "Webhook password", Type: core.FieldPassword, Advanced: true,
				Help: "Pro webhook receiver: the HTTP Basic password in the webhook URL set in Postmark."},
			apidriver.BaseURLField("Leave empty for "+DefaultBaseURL+".", "api.postmarkapp.com"),
		},
		Rules: []string{
			"message_stream must be a stream id: letters, digits, - and _ only.",
			apidriver.SenderRule,
			"base_url, when empty, is " + DefaultBaseURL + ".",
		},
		Validate: validate,
		New:      New,
	}
}

func validate(s core.Settings) map[string]string {
	out := map[string]string{}
	if st := s.String(KeyMessageStream); st != "" && !validStream(st) {
		out[KeyMessageStream] = "Must be a stream id: letters, digits, - and _ only."
	}
	return out
}

func validStream(s string) bool {
	if len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Transport sends through one Postmark connection. It is safe for
// concurrent use.
type Transport struct {
	token   string
	baseURL string
	stream  string
	sender  apidriver.Sender
	http    *http.Client
}

// New builds the transport of a Postmark connection from its effective
// settings.
func New(conn *core.Connection, env core.DriverEnv) (core.Transport, error) {
	s := conn.Settings
	token := s.String(KeyAPIKey)
	if token == "" {
		return nil, core.Invalid(map[string]string{KeyAPIKey: "This field is required."})
	}
	stream := s.String(KeyMessageStream)
	if stream == "" {
		stream = DefaultMessageStream
	}
	if !validStream(stream) {
		return nil, core.Invalid(map[string]string{KeyMessageStream: "Must be a stream id: letters, digits, - and _ only."})
	}
	hc := apidriver.HTTPClient(env)
	return &Transport{token: token, baseURL: apidriver.BaseURL(s, DefaultBaseURL), stream: stream,
		sender: apidriver.SenderOf(s), http: hc}, nil
}

// BaseURL returns the API base URL the transport talks to.
func (t *Transport) BaseURL() string { return t.baseURL }

// MessageStream returns the stream the transport sends through.
func (t *Transport) MessageStream() string { return t.stream }

// call is one SDK call: its client and what its round trip observed.
type call struct {
	client *pm.Client
	rt     *callRoundTripper
}

func (t *Transport) newCall(ctx context.Context) *call {
	base := t.http.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	rt := &callRoundTripper{base: base, ctx: ctx, stream: t.stream}
	hc := *t.http
	hc.Transport = rt
	c := pm.NewClient(t.token, "")
	c.BaseURL = t.baseURL
	c.HTTPClient = &hc
	return &call{client: c, rt: rt}
}

// callRoundTripper binds a context to the SDK's requests, adds
// MessageStream to /email bodies and records the last response.
type callRoundTripper struct {
	base   http.RoundTripper
	ctx    context.Context
	stream string

	status int
	body   []byte
}

// RoundTrip implements http.RoundTripper.
func (rt *callRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(rt.ctx)
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/email") && req.Body != nil {
		raw, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, fmt.Errorf("decode request body: %w", err)
		}
		fields["MessageStream"], _ = json.Marshal(rt.stream)
		if raw, err = json.Marshal(fields); err != nil {
			return nil, fmt.Errorf("encode request body: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(raw))
		req.ContentLength = int64(len(raw))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	}
	resp, err := rt.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read response body: %w", err)
	}
	rt.status, rt.body = resp.StatusCode, body
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// Send implements core.Transport with POST /email.
func (t *Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	c := t.newCall(ctx)
	res, err := c.client.SendEmail(t.build(msg))
	if err := t.outcome("send", c.rt, err); err != nil {
		return core.Receipt{}, err
	}
	return core.Receipt{MessageID: res.MessageID, Response: fmt.Sprintf("%d %s", c.rt.status, res.Message)}, nil
}

// Verify implements core.Verifier with the authenticated read GET /server,
// which sends nothing.
func (t *Transport) Verify(ctx context.Context) error {
	c := t.newCall(ctx)
	_, err := c.client.GetCurrentServer()
	if c.rt.status == http.StatusUnauthorized || c.rt.status == http.StatusForbidden {
		return t.scrub(core.Permanent(fmt.Errorf("postmark: verify: the server token was rejected (HTTP %d): %s",
			c.rt.status, apidriver.Summary(c.rt.body))))
	}
	return t.outcome("verify", c.rt, err)
}

// outcome classifies the result of one SDK call from the status its round
// trip saw: no response at all is temporary (network, timeout), 2xx with no
// error is success, other statuses follow core.HTTPStatusError, except that
// Postmark's ErrorCode 100 (maintenance) and 429 (rate limit) are temporary.
func (t *Transport) outcome(op string, rt *callRoundTripper, err error) error {
	switch {
	case rt.status == 0:
		if err == nil {
			err = errors.New("no response")
		}
		return t.scrub(core.Temporary(fmt.Errorf("postmark: %s: %w", op, err)))
	case rt.status >= 200 && rt.status <= 299:
		if err != nil {
			return t.scrub(core.Permanent(fmt.Errorf("postmark: %s: HTTP %d: %w", op, rt.status, err)))
		}
		return nil
	}
	var apiErr struct{ ErrorCode int64 }
	_ = json.Unmarshal(rt.body, &apiErr)
	if apiErr.ErrorCode == 100 || apiErr.ErrorCode == 429 {
		return t.scrub(core.Temporary(fmt.Errorf("postmark: %s: provider answered HTTP %d: %s", op, rt.status, apidriver.Summary(rt.body))))
	}
	return t.scrub(fmt.Errorf("postmark: %s: %w", op, core.HTTPStatusError(rt.status, apidriver.Summary(rt.body))))
}

// emptyBody is the TextBody of a message with neither text nor HTML:
// Postmark requires one of them, and a line break is what an empty body
// is on the wire (the SMTP driver sends the same).
const emptyBody = "\r\n"

// build turns a message (the part its Envelope names) into the SDK's
// email.
func (t *Transport) build(msg *core.Message) pm.Email {
	msg = msg.ForEnvelope()
	from := t.sender.Apply(msg.From)
	e := pm.Email{
		From:     from.String(),
		To:       join(msg.To),
		Cc:       join(msg.Cc),
		Bcc:      join(msg.Bcc),
		ReplyTo:  join(msg.ReplyTo),
		Subject:  msg.Subject,
		TextBody: msg.Text,
		HtmlBody: msg.HTML,
	}
	if e.TextBody == "" && e.HtmlBody == "" {
		e.TextBody = emptyBody
	}
	for _, h := range msg.Headers {
		e.Headers = append(e.Headers, pm.Header{Name: h.Name, Value: h.Value})
	}
	if v := metadataValue(msg.MessageID()); v != "" {
		e.Metadata = map[string]string{MetadataKey: v}
	}
	for _, a := range msg.Attachments {
		ct := a.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		att := pm.Attachment{Name: a.Filename, Content: base64.StdEncoding.EncodeToString(a.Data), ContentType: ct}
		if a.Inline && a.ContentID != "" {
			att.ContentID = "cid:" + a.ContentID
		}
		e.Attachments = append(e.Attachments, att)
	}
	return e
}

func join(list []core.Address) string {
	parts := make([]string, 0, len(list))
	for _, a := range list {
		parts = append(parts, a.String())
	}
	return strings.Join(parts, ", ")
}

// scrub returns err with the server token masked in its text.
func (t *Transport) scrub(err error) error { return apidriver.Scrub(err, t.token) }
