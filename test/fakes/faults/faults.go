// Package faults is the fault injection shared by the local fakes of the
// provider APIs (test/fakes/...): a queue of failures and stalls that the
// next requests meet before the fake's own handlers see them, and a count
// of every request that reached the fake.
//
// A fake embeds a Server started with its handler; the server's Close
// releases stalled requests before it shuts down:
//
//	type Server struct {
//		*faults.Server
//		...
//	}
//	s.Server = faults.NewServer(mux)
//
// A fake with its own server builds a Queue, wraps its handler with
// Queue.Wrap (or calls Queue.Intercept first), and closes the queue when it
// shuts down.
package faults

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Respond writes an injected failure for the request it was served to. It
// lets a fake answer in the error shape of the API the request used.
type Respond func(w http.ResponseWriter, r *http.Request)

// fault is one queued failure: a response to write, or a stall when
// respond is nil; with drop, the fake handles the request and the
// connection is closed instead of its response.
type fault struct {
	respond Respond
	drop    bool
	// take: with drop, the fake handles the request before the drop.
	take bool
}

// Queue holds the faults the next requests meet, oldest first. It is safe
// for concurrent use. Its zero value is not usable; call New.
type Queue struct {
	closed    chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	faults   []fault
	requests int
}

// New returns an empty queue.
func New() *Queue {
	return &Queue{closed: make(chan struct{})}
}

// FailNext makes the next n requests, whatever their path, answer status
// with body as application/json.
func (q *Queue) FailNext(n, status int, body string) {
	q.FailNextWith(n, func(w http.ResponseWriter, _ *http.Request) { WriteJSON(w, status, body) })
}

// FailNextWith makes the next n requests, whatever their path, be answered
// by respond.
func (q *Queue) FailNextWith(n int, respond Respond) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for range n {
		q.faults = append(q.faults, fault{respond: respond})
	}
}

// StallNext makes the next n requests hang until the client gives up or
// the queue is closed.
func (q *Queue) StallNext(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for range n {
		q.faults = append(q.faults, fault{})
	}
}

// TakeAndDropNext makes the next n requests be handled by the fake as
// usual (it keeps what they send) and then answered by closing the
// connection with no response, as when a provider takes a message and
// the answer is lost. A fake that calls Intercept itself (rather than
// Wrap) drops the connection without handling the request.
func (q *Queue) TakeAndDropNext(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for range n {
		q.faults = append(q.faults, fault{drop: true, take: true})
	}
}

// DropNextUnkept makes the next n requests be read whole and answered by
// closing the connection before the fake handles them: the client sent
// everything, and nothing was kept.
func (q *Queue) DropNextUnkept(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for range n {
		q.faults = append(q.faults, fault{drop: true})
	}
}

// Requests returns how many requests went through Wrap or Intercept,
// faults included.
func (q *Queue) Requests() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.requests
}

// Intercept counts the request and, when a fault is queued, takes it and
// serves it: it writes the injected failure, or stalls until the request's
// context ends or the queue is closed. It reports whether it served the
// request; when it did not, the caller handles the request as usual.
func (q *Queue) Intercept(w http.ResponseWriter, r *http.Request) bool {
	return q.serve(w, r, nil)
}

// serve is Intercept, with next handling the request of a drop fault.
func (q *Queue) serve(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
	q.mu.Lock()
	q.requests++
	var f *fault
	if len(q.faults) > 0 {
		f = &q.faults[0]
		q.faults = q.faults[1:]
	}
	q.mu.Unlock()
	if f == nil {
		return false
	}
	if f.drop {
		if next != nil && f.take {
			next.ServeHTTP(httptest.NewRecorder(), r)
		} else {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return true
	}
	if f.respond == nil {
		select {
		case <-r.Context().Done():
		case <-q.closed:
		}
		return true
	}
	f.respond(w, r)
	return true
}

// Wrap returns a handler that passes every request through Intercept
// before next.
func (q *Queue) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q.serve(w, r, next) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Close releases every stalled request, now and later. It is safe to call
// more than once.
func (q *Queue) Close() {
	q.closeOnce.Do(func() { close(q.closed) })
}

// WriteJSON answers status with body as application/json, the way the
// JSON provider APIs answer, errors and successes alike; the fakes use it
// for their own answers too.
func WriteJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// Server is a local HTTP server whose requests meet a fault Queue before
// the fake's own handler. A fake embeds it, so that the fake's URL field
// and its Requests, StallNext and Close methods are the server's.
type Server struct {
	*Queue
	// URL is the server's base URL, http://127.0.0.1:port.
	URL string

	srv *httptest.Server
}

// NewServer starts a server that passes every request through a new
// Queue, then to h.
func NewServer(h http.Handler) *Server {
	q := New()
	srv := httptest.NewServer(q.Wrap(h))
	return &Server{Queue: q, URL: srv.URL, srv: srv}
}

// Set stores v in *field while holding mu: a fake's setter of what its
// handlers read under mu.
func Set[T any](mu *sync.Mutex, field *T, v T) {
	mu.Lock()
	defer mu.Unlock()
	*field = v
}

// Routes are a fake's handlers by their http.ServeMux pattern
// ("POST /v3/mail/send").
type Routes map[string]http.HandlerFunc

// NewRoutedServer is NewServer of an http.ServeMux that serves routes.
func NewRoutedServer(routes Routes) *Server {
	mux := http.NewServeMux()
	for pattern, handler := range routes {
		mux.HandleFunc(pattern, handler)
	}
	return NewServer(mux)
}

// Close releases stalled requests and shuts the server down.
func (s *Server) Close() {
	s.Queue.Close()
	s.srv.Close()
}
