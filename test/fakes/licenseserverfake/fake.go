// Package licenseserverfake is a local licence server speaking the
// protocol of docs/pro.md, for tests: it records every call and answers
// each licence id with the status a test set (default "active").
package licenseserverfake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// Call is one request the fake received.
type Call struct {
	Action    string
	LicenseID string
	Site      string
}

// Server is a running fake licence server.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	calls    []Call
	statuses map[string][2]string // license id → status, message
	failing  bool
}

// New starts a fake; close it with Close.
func New() *Server {
	f := &Server{statuses: map[string][2]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// SetStatus makes the fake answer a licence id with status and message.
func (f *Server) SetStatus(licenseID, status, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses[licenseID] = [2]string{status, message}
}

// SetFailing makes every answer a 503 (on) or normal again (off).
func (f *Server) SetFailing(on bool) { faults.Set(&f.mu, &f.failing, on) }

// Calls returns the calls received so far.
func (f *Server) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	action := strings.TrimPrefix(r.URL.Path, "/")
	var req struct {
		LicenseID string `json:"license_id"`
		Site      string `json:"site"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil || req.LicenseID == "" ||
		(action != "activate" && action != "deactivate" && action != "check") {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, Call{Action: action, LicenseID: req.LicenseID, Site: req.Site})
	failing := f.failing
	st, ok := f.statuses[req.LicenseID]
	f.mu.Unlock()
	if failing {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	if !ok {
		st = [2]string{"active", ""}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"status": st[0], "message": st[1]})
}
