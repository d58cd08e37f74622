// Package httpstatus records the status an HTTP handler answers with, for
// the request logs and the test servers that note it.
package httpstatus

import "net/http"

// Writer is an http.ResponseWriter that remembers the status its handler
// wrote: the first WriteHeader's (as net/http sends the first), or 200
// when the handler wrote a body first.
type Writer struct {
	http.ResponseWriter
	status int
}

// NewWriter returns a Writer writing to w.
func NewWriter(w http.ResponseWriter) *Writer { return &Writer{ResponseWriter: w} }

// WriteHeader implements http.ResponseWriter.
func (w *Writer) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *Writer) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Status returns the status written; 0 when the handler has written
// nothing yet.
func (w *Writer) Status() int { return w.status }

// Answered returns the status the client gets once the handler is done:
// the one written, or 200 when it wrote nothing (net/http's answer then).
func (w *Writer) Answered() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
