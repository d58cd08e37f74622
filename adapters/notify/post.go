package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify/netguard"
	"github.com/mailsvc/mailsvc/core"
)

// UserAgent is the User-Agent of every request a channel sends.
const UserAgent = "mailsvc-alerts/1"

// maxAnswer is how much of a channel's answer is read; summaryLimit how
// much of it an error or an answer in words keeps.
const (
	maxAnswer    = 64 << 10
	summaryLimit = 300
)

// Response is a channel's answer to a request.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Summary returns the answer's body trimmed and cut for an error message
// or an answer in words.
func (r *Response) Summary() string { return Summary(r.Body) }

// Summary shortens a channel's response body for a message: spaces
// trimmed, and cut to 300 bytes followed by "..." when longer.
func Summary(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > summaryLimit {
		s = s[:summaryLimit] + "..."
	}
	return s
}

// Post sends body as JSON to rawURL through client, with the extra header
// values, and returns the answer when its status is 2xx. Otherwise the
// error is classified: a network failure or timeout is temporary, a
// request the guard refused (netguard.ErrRefused) is permanent, and a
// non-2xx answer is classified by StatusError. label names the channel
// in the error ("Slack webhook"); the error text never holds rawURL, whose
// path is often the channel's secret.
func Post(ctx context.Context, client *http.Client, label, rawURL string, body []byte, header http.Header) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return nil, core.Permanent(fmt.Errorf("%s: the URL cannot be used", label))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, TransportError(label, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, core.Temporary(fmt.Errorf("%s: reading the answer: %w", label, TransportError(label, err)))
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return r, StatusError(label, r.Status, r.Header, r.Summary())
	}
	return r, nil
}

// TransportError classifies an error from http.Client.Do: permanent when
// the guard refused the request, temporary otherwise. The request's URL
// (which url.Error repeats) is left out of the text.
func TransportError(label string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, netguard.ErrRefused) {
		return core.Permanent(fmt.Errorf("%s: %w", label, err))
	}
	return core.Temporary(fmt.Errorf("%s: %w", label, err))
}

// StatusError classifies a channel's non-2xx answer: 429 and 5xx are
// temporary, any other status permanent. A Retry-After header (seconds or
// an HTTP date) on a temporary answer is kept: RetryAfter finds it.
func StatusError(label string, status int, header http.Header, summary string) error {
	msg := fmt.Sprintf("%s answered HTTP %d", label, status)
	if summary != "" {
		msg += ": " + summary
	}
	err := errors.New(msg)
	if status != http.StatusTooManyRequests && status < 500 {
		return core.Permanent(err)
	}
	if d, ok := parseRetryAfter(header.Get("Retry-After"), time.Now()); ok {
		return core.Temporary(&RetryAfterError{After: d, Err: err})
	}
	return core.Temporary(err)
}

// parseRetryAfter reads a Retry-After value: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// RetryAfterError is a temporary failure for which the channel said how
// long to wait. Callers outside the adapters find it with errors.As and an
// interface { RetryAfter() time.Duration } of their own.
type RetryAfterError struct {
	After time.Duration
	Err   error
}

// Error returns the failure with the wait.
func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("%v (retry after %s)", e.Err, e.After)
}

// Unwrap returns the failure.
func (e *RetryAfterError) Unwrap() error { return e.Err }

// RetryAfter returns how long the channel asked to wait.
func (e *RetryAfterError) RetryAfter() time.Duration { return e.After }

// RetryAfter returns the wait a channel asked for, when err holds one.
func RetryAfter(err error) (time.Duration, bool) {
	var ra *RetryAfterError
	if errors.As(err, &ra) {
		return ra.After, true
	}
	return 0, false
}

// ValidateURL returns the settings key with a message when the URL in it
// is not an http(s) URL with a host (netguard.CheckURL without the address
// check, which the host applies with MAILSVC_ALLOW_PRIVATE_WEBHOOKS).
func ValidateURL(s core.Settings, key string) map[string]string {
	if err := netguard.CheckURL(s.String(key), true); err != nil {
		return map[string]string{key: err.Error()}
	}
	return nil
}

// Client returns the host's guarded HTTP client of env, or a guarded one
// of its own (private addresses refused, 30 seconds) when the host gave
// none.
func Client(env core.NotifierEnv) *http.Client {
	if env.HTTPClient != nil {
		return env.HTTPClient
	}
	return defaultClient
}

var defaultClient = netguard.NewClient(false, 30*time.Second)
