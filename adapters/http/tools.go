package http

import (
	"context"
	"net/http"

	"github.com/mailsvc/mailsvc/app/doctor"
)

// DoctorService runs the installation checks (GET /tools/doctor).
type DoctorService interface {
	Diagnose(ctx context.Context) doctor.Report
}

// diagnose answers GET /tools/doctor: 200 with the report, whatever the
// verdicts (a failing check is a finding, not an API error).
func (s *Server) diagnose(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, s.Doctor.Diagnose(r.Context()))
	return nil
}

func (s *Server) listDebugLogs(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r)
	if err != nil {
		return err
	}
	list, total, err := s.Transcripts.List(r.Context(), p.Offset(), p.PerPage)
	if err != nil {
		return err
	}
	writeList(w, list, total, p)
	return nil
}

func (s *Server) clearDebugLogs(w http.ResponseWriter, r *http.Request) error {
	n, err := s.Transcripts.Clear(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": n})
	return nil
}
