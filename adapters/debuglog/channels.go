package debuglog

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/mailsvc/mailsvc/adapters/httpstatus"
	"github.com/mailsvc/mailsvc/core"
)

// maxCapturedBody bounds how much of a body is read for a log line; the
// rest still flows to its reader untouched.
const maxCapturedBody = 1 << 20

// HTTPClient returns the client drivers use (core.DriverEnv.HTTPClient):
// base with its transport wrapped by RoundTripper. With the HTTP channel
// off it returns base unchanged (http.DefaultClient when base is nil).
func (l *Log) HTTPClient(base *http.Client) *http.Client {
	if base == nil {
		base = http.DefaultClient
	}
	if l == nil || !l.opts.HTTP {
		return base
	}
	c := *base
	c.Transport = l.RoundTripper(base.Transport)
	return &c
}

// RoundTripper wraps next (http.DefaultTransport when nil) so that every
// request writes an HTTP OUT line: method, URL, status, duration, and the
// request and response headers and bodies, redacted and truncated. With
// the HTTP channel off it returns next unchanged.
func (l *Log) RoundTripper(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if l == nil || !l.opts.HTTP {
		return next
	}
	return &roundTripper{log: l, next: next}
}

type roundTripper struct {
	log  *Log
	next http.RoundTripper
}

// httpOutLine is the JSON of an HTTP OUT line.
type httpOutLine struct {
	Method          string            `json:"method"`
	URL             string            `json:"url"`
	Status          int               `json:"status,omitempty"`
	DurationMS      int64             `json:"duration_ms"`
	RequestHeaders  map[string]string `json:"request_headers,omitempty"`
	RequestBody     string            `json:"request_body,omitempty"`
	ResponseHeaders map[string]string `json:"response_headers,omitempty"`
	ResponseBody    string            `json:"response_body,omitempty"`
	Error           string            `json:"error,omitempty"`
}

// RoundTrip implements http.RoundTripper.
func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	red := t.log.redactor()
	line := httpOutLine{Method: req.Method, URL: red.URL(req.URL), RequestHeaders: red.Headers(req.Header)}
	if req.Body != nil && req.Body != http.NoBody {
		captured, rest, err := capture(req.Body)
		if err != nil {
			return nil, err
		}
		line.RequestBody = t.log.truncate(red.Body(captured, req.Header.Get("Content-Type")))
		req = req.Clone(req.Context())
		req.Body = rest
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	line.DurationMS = time.Since(start).Milliseconds()
	if err != nil {
		line.Error = red.Text(err.Error())
		t.log.write(TagHTTPOut, line)
		return nil, err
	}
	line.Status = resp.StatusCode
	line.ResponseHeaders = red.Headers(resp.Header)
	if resp.Body != nil {
		captured, rest, cerr := capture(resp.Body)
		if cerr != nil {
			line.Error = red.Text(cerr.Error())
		}
		line.ResponseBody = t.log.truncate(red.Body(captured, resp.Header.Get("Content-Type")))
		resp.Body = rest
	}
	t.log.write(TagHTTPOut, line)
	return resp, nil
}

// capture reads up to maxCapturedBody bytes of body and returns them with
// a reader that yields the whole body again.
func capture(body io.ReadCloser) ([]byte, io.ReadCloser, error) {
	head, err := io.ReadAll(io.LimitReader(body, maxCapturedBody))
	if err != nil {
		body.Close()
		return nil, nil, err
	}
	return head, readCloser{Reader: io.MultiReader(bytes.NewReader(head), body), Closer: body}, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// requestLine is the JSON of a REQUEST line.
type requestLine struct {
	Method        string            `json:"method"`
	URL           string            `json:"url"`
	Remote        string            `json:"remote"`
	Headers       map[string]string `json:"headers,omitempty"`
	ContentLength int64             `json:"content_length"`
	Status        int               `json:"status"`
	DurationMS    int64             `json:"duration_ms"`
}

// payloadLine is the JSON of a REQUEST PAYLOAD line.
type payloadLine struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	Body   string `json:"body"`
}

// Middleware wraps next so that every incoming request writes a REQUEST
// line (method, URL, remote address, headers with credentials redacted,
// status, duration) and, when it has a body, a REQUEST PAYLOAD line
// redacted with the request secret visibility. With the Request channel
// off it returns next unchanged.
func (l *Log) Middleware(next http.Handler) http.Handler {
	if l == nil || !l.opts.Request {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		red := l.redactor()
		line := requestLine{Method: r.Method, URL: red.URL(r.URL), Remote: r.RemoteAddr, Headers: red.Headers(r.Header), ContentLength: r.ContentLength}
		if r.Body != nil && r.Body != http.NoBody {
			captured, rest, err := capture(r.Body)
			if err == nil {
				r.Body = rest
				if len(captured) > 0 {
					l.write(TagRequestPayload, payloadLine{
						Method: r.Method, URL: line.URL,
						Body: l.truncate(l.requestRedactor().Body(captured, r.Header.Get("Content-Type"))),
					})
				}
			}
		}
		sw := httpstatus.NewWriter(w)
		start := time.Now()
		next.ServeHTTP(sw, r)
		line.DurationMS = time.Since(start).Milliseconds()
		line.Status = sw.Answered()
		l.write(TagRequest, line)
	})
}

// RegisterMailer adds an action on the mail_svc_api_debug hook that
// writes a MAILER line with the hook's arguments, redacted. With the
// Mailer channel off it registers nothing.
func (l *Log) RegisterMailer(hooks *core.Hooks) {
	if l == nil || !l.opts.Mailer || hooks == nil {
		return
	}
	hooks.AddAction(core.HookAPIDebug, func(args ...any) {
		red := l.redactor()
		out := make([]any, len(args))
		for i, a := range args {
			out[i] = red.Value(jsonValue(a))
		}
		l.write(TagMailer, map[string]any{"payload": out})
	})
}

// jsonValue converts v to its decoded-JSON form (maps, slices, strings,
// numbers), so redaction sees struct fields by their JSON names. Byte
// slices and strings that hold JSON are decoded.
func jsonValue(v any) any {
	var raw []byte
	switch t := v.(type) {
	case []byte:
		raw = t
	case string:
		raw = []byte(t)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return "unloggable value"
		}
		raw = b
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil || dec.More() {
		return string(raw)
	}
	return out
}
