// Package httpprobe makes the doctor's unauthenticated HTTP requests
// (app/doctor.Prober): to the service itself, and to the site's own URL
// to see whether it routes the REST namespace to the service.
package httpprobe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// maxBody bounds how much of an answer is read for its error code.
const maxBody = 64 << 10

// Client is a doctor.Prober over net/http.
type Client struct {
	// HTTP is the client; nil means one with a 10-second timeout.
	HTTP *http.Client
	// ServiceBase and ServiceHeader: a request to a URL under ServiceBase
	// (the service's own address) carries ServiceHeader, such as the site
	// key that names the site to a service serving several. Requests to
	// other URLs (the site's own) never do.
	ServiceBase   string
	ServiceHeader http.Header
}

// Get implements doctor.Prober: it fetches url without credentials and
// returns the status and the "code" member of a JSON body ("" when the
// body is not a JSON object with one).
func (c Client) Get(ctx context.Context, url string) (int, string, error) {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", fmt.Errorf("request %s: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.ServiceBase != "" && strings.HasPrefix(url, strings.TrimRight(c.ServiceBase, "/")+"/") {
		for k, vs := range c.ServiceHeader {
			req.Header[k] = vs
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var body struct {
		Code string `json:"code"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	_ = json.Unmarshal(b, &body)
	return resp.StatusCode, body.Code, nil
}
