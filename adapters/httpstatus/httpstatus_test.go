package httpstatus_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/httpstatus"
)

// TestWriterStatus: the first status written is remembered, a body
// written first is a 200, and nothing written is 0, which the client
// gets as a 200.
func TestWriterStatus(t *testing.T) {
	tests := []struct {
		name             string
		handler          func(w http.ResponseWriter)
		status, answered int
	}{
		{"nothing written", func(http.ResponseWriter) {}, 0, http.StatusOK},
		{"body only", func(w http.ResponseWriter) { _, _ = w.Write([]byte("ok")) }, http.StatusOK, http.StatusOK},
		{"status then body", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusTeapot)
			_, _ = w.Write([]byte("tea"))
		}, http.StatusTeapot, http.StatusTeapot},
		{"second status ignored", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusNotFound)
			w.WriteHeader(http.StatusInternalServerError)
		}, http.StatusNotFound, http.StatusNotFound},
		{"body then status", func(w http.ResponseWriter) {
			_, _ = w.Write([]byte("x"))
			w.WriteHeader(http.StatusBadGateway)
		}, http.StatusOK, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			w := httpstatus.NewWriter(rec)
			tc.handler(w)
			if got := w.Status(); got != tc.status {
				t.Errorf("Status = %d, want %d", got, tc.status)
			}
			if got := w.Answered(); got != tc.answered || rec.Code != tc.answered {
				t.Errorf("Answered = %d, the underlying writer got %d, want %d", got, rec.Code, tc.answered)
			}
		})
	}
}
