package apidriver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/mailsvc/mailsvc/core"
)

// KeyForceFrom is the settings key of the sender override's scope.
const KeyForceFrom = "force_from"

// ForceFromField returns the force_from field: on (the default), the
// connection's from_email and from_name replace every message's sender;
// off, they only stand in for a sender the message lacks.
func ForceFromField() core.Field {
	return core.Field{Key: KeyForceFrom, Label: "Force from", Type: core.FieldBoolean, Default: true,
		Help: "Replace the sender of every message with From email and From name. Off: they are used only when a message has no sender."}
}

// JSONClient makes the calls of a provider's JSON API: the request body
// encoded as JSON, the connection's credentials set by Authorize, a 2xx
// answer decoded, any other answer classified as core.HTTPResponseError
// does (429 rate limited with its Retry-After, 5xx temporary, other 4xx
// permanent), a request without an answer temporary (uncertain once its
// body was written, see UnansweredTransport), and the secrets masked in
// every error. It is safe for concurrent use.
type JSONClient struct {
	// Provider names the provider in error text ("brevo").
	Provider string
	// BaseURL is where the paths are resolved, without a trailing slash.
	BaseURL string
	// HTTP makes the requests (HTTPClient of the host's env).
	HTTP *http.Client
	// Authorize sets the connection's credentials on a request.
	Authorize func(r *http.Request)
	// Secrets are masked in every error.
	Secrets []string
	// RateLimitReset, when set, is the provider's own header of the
	// seconds until its rate limit resets, read when a 429 has no
	// Retry-After (Brevo's x-sib-ratelimit-reset).
	RateLimitReset string
}

// Response is a provider's answer to a successful call.
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

// maxResponse is the most of an answer the client reads.
const maxResponse = 1 << 20

// Do makes the call op (named in errors: "send", "verify") with method
// to path, body JSON-encoded when not nil, and decodes a 2xx answer's
// JSON into out when out is not nil and the answer has a body.
func (c *JSONClient) Do(ctx context.Context, op, method, path string, body, out any) (*Response, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, core.Permanent(fmt.Errorf("%s: %s: encode request: %w", c.Provider, op, err))
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return nil, c.scrub(core.Permanent(fmt.Errorf("%s: %s: %w", c.Provider, op, err)))
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Authorize != nil {
		c.Authorize(req)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, c.scrub(core.Temporary(fmt.Errorf("%s: %s: %w", c.Provider, op, err)))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, c.scrub(core.Temporary(fmt.Errorf("%s: %s: read response: %w", c.Provider, op, err)))
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
	if r.Status < 200 || r.Status > 299 {
		header := r.Header
		if v := header.Get(c.RateLimitReset); c.RateLimitReset != "" && v != "" && header.Get("Retry-After") == "" {
			header = header.Clone()
			header.Set("Retry-After", v)
		}
		return r, c.scrub(fmt.Errorf("%s: %s: %w", c.Provider, op, core.HTTPResponseError(r.Status, header, Summary(raw))))
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return r, c.scrub(core.Permanent(fmt.Errorf("%s: %s: HTTP %d with an answer that is not the provider's JSON: %s",
				c.Provider, op, r.Status, Summary(raw))))
		}
	}
	return r, nil
}

// Verify makes the authenticated read (method, path, body as Do takes
// them) that checks a connection's credentials without sending: a 401
// or 403 says the key was rejected, other failures are classified as Do
// classifies them. valid, when not nil, reports an answer other than 2xx
// that proves the key valid all the same (a key allowed to send only).
func (c *JSONClient) Verify(ctx context.Context, method, path string, body any, valid func(*Response) bool) error {
	r, err := c.Do(ctx, "verify", method, path, body, nil)
	if err != nil && r != nil && valid != nil && valid(r) {
		return nil
	}
	if r != nil && (r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden) {
		return c.scrub(core.Permanent(fmt.Errorf("%s: verify: the API key was rejected (HTTP %d): %s",
			c.Provider, r.Status, Summary(r.Body))))
	}
	return err
}

func (c *JSONClient) scrub(err error) error { return Scrub(err, c.Secrets...) }
