package oauthdriver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/mailsvc/mailsvc/core"
)

// Request is one call of an OAuth driver to its provider's REST API.
type Request struct {
	Method, URL string
	// Scheme and Token make the Authorization header ("Bearer" and the
	// access token); the token never shows in an error.
	Scheme, Token string
	// ContentType is the body's media type; empty: no body type.
	ContentType string
	Body        []byte
	// Limit is the most bytes of the answer read.
	Limit int64
}

// Do sends r with hc, accepting JSON, and returns the answer's status and
// body, whatever the status. A request that cannot be built
// is a permanent error; a network error or an answer that cannot be read
// is a temporary one (the status is known in the latter case).
func (r Request) Do(ctx context.Context, hc *http.Client) (int, []byte, error) {
	var rd io.Reader
	if r.Body != nil {
		rd = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, rd)
	if err != nil {
		return 0, nil, core.Permanent(fmt.Errorf("build request: %w", err))
	}
	req.Header.Set("Authorization", r.Scheme+" "+r.Token)
	req.Header.Set("Accept", "application/json")
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, core.Scrub(core.Temporary(fmt.Errorf("%s %s: %w", r.Method, req.URL.Path, err)), r.Token)
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, r.Limit))
	if err != nil {
		return resp.StatusCode, nil, core.Temporary(fmt.Errorf("read answer: %w", err))
	}
	return resp.StatusCode, answer, nil
}
