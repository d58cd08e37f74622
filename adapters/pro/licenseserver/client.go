// Package licenseserver is the client of a vendor's licence server, the
// small JSON protocol of docs/pro.md: POST {base}/{action} with the
// licence id and site, answered 200 {"status", "message"}.
package licenseserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/pro"
)

// DefaultTimeout bounds one call when the Client has no HTTP client.
const DefaultTimeout = 10 * time.Second

// maxAnswer bounds the answer read.
const maxAnswer = 64 << 10

// Client calls a licence server. It implements pro.LicenseServer.
type Client struct {
	// BaseURL is MAILSVC_LICENSE_SERVER, e.g. https://licenses.example.com/v1.
	BaseURL string
	// HTTPClient is used for the calls; nil means a client with
	// DefaultTimeout.
	HTTPClient *http.Client
}

var _ pro.LicenseServer = (*Client)(nil)

// Call sends one action and returns the server's verdict. A transport
// error, a status other than 200, or an answer without a status is an
// error (the caller keeps its offline verdict).
func (c *Client) Call(ctx context.Context, action string, req pro.ServerRequest) (pro.ServerVerdict, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return pro.ServerVerdict{}, fmt.Errorf("encode licence server request: %w", err)
	}
	url := strings.TrimRight(c.BaseURL, "/") + "/" + action
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return pro.ServerVerdict{}, fmt.Errorf("licence server request: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return pro.ServerVerdict{}, fmt.Errorf("licence server %s: %w", action, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return pro.ServerVerdict{}, fmt.Errorf("licence server %s: read answer: %w", action, err)
	}
	if resp.StatusCode != http.StatusOK {
		return pro.ServerVerdict{}, fmt.Errorf("licence server %s: status %d", action, resp.StatusCode)
	}
	var v pro.ServerVerdict
	if err := json.Unmarshal(raw, &v); err != nil || v.Status == "" {
		return pro.ServerVerdict{}, fmt.Errorf("licence server %s: the answer is not {\"status\": ...}", action)
	}
	if len(v.Message) > 500 {
		v.Message = v.Message[:500]
	}
	return v, nil
}
