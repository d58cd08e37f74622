// Package webhooksink is a local HTTP server that stands in for every
// webhook receiver an alert channel posts to (Slack, Discord, Teams, a
// user's own URL): it records every request (method, path, query,
// headers, body) whatever its path, answers with a configurable status
// and body (200 "ok" by default), and can be told to fail the next
// requests. Tests await the requests they expect with a deadline.
package webhooksink

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/adapters/httpstatus"
	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// Request is one recorded request.
type Request struct {
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte
	// Status is the status the sink answered.
	Status int
}

// Sink is a running webhook receiver. Its zero value is not usable; call
// New.
type Sink struct {
	// URL is the sink's base URL, http://127.0.0.1:port; any path under
	// it is accepted.
	URL string

	srv    *httptest.Server
	faults *faults.Queue

	mu          sync.Mutex
	requests    []Request
	arrived     chan struct{} // closed and replaced at each request
	status      int
	contentType string
	body        string
}

// New starts a sink answering 200 "ok" as text/plain.
func New() *Sink {
	s := &Sink{
		faults:      faults.New(),
		arrived:     make(chan struct{}),
		status:      http.StatusOK,
		contentType: "text/plain; charset=utf-8",
		body:        "ok",
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close shuts the sink down, releasing stalled requests.
func (s *Sink) Close() {
	s.faults.Close()
	s.srv.Close()
}

// Respond sets the answer to every request that meets no fault.
func (s *Sink) Respond(status int, contentType, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.contentType, s.body = status, contentType, body
}

// FailNext makes the next n requests answer status, with the status text
// as a text/plain body.
func (s *Sink) FailNext(n, status int) {
	s.FailNextWith(n, status, nil, http.StatusText(status))
}

// FailNextWith makes the next n requests answer status with the given
// extra headers (a Retry-After, say) and body.
func (s *Sink) FailNextWith(n, status int, header http.Header, body string) {
	s.faults.FailNextWith(n, func(w http.ResponseWriter, _ *http.Request) {
		for k, vs := range header {
			w.Header()[k] = vs
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	})
}

// StallNext makes the next n requests hang until the client gives up or
// the sink is closed.
func (s *Sink) StallNext(n int) { s.faults.StallNext(n) }

// Requests returns a copy of every request recorded so far, oldest first.
func (s *Sink) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Await waits until at least n requests were recorded and returns them
// all, or returns an error when timeout passes first.
func (s *Sink) Await(n int, timeout time.Duration) ([]Request, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got, wake := len(s.requests), s.arrived
		s.mu.Unlock()
		if got >= n {
			return s.Requests(), nil
		}
		select {
		case <-wake:
		case <-deadline.C:
			return s.Requests(), fmt.Errorf("webhooksink: %d of %d requests within %s", got, n, timeout)
		}
	}
}

func (s *Sink) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := httpstatus.NewWriter(w)
	if !s.faults.Intercept(rec, r) {
		s.mu.Lock()
		status, ct, answer := s.status, s.contentType, s.body
		s.mu.Unlock()
		w.Header().Set("Content-Type", ct)
		rec.WriteHeader(status)
		_, _ = io.WriteString(rec, answer)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{
		Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body, Status: rec.Status(),
	})
	close(s.arrived)
	s.arrived = make(chan struct{})
}
