package http

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/app"
)

// PrivacyService is what the personal data routes need (app.Privacy).
type PrivacyService interface {
	Export(ctx context.Context, email string, page int) (*app.PersonalDataExport, error)
	Erase(ctx context.Context, email string) (*app.PersonalDataErasure, error)
}

// privacyRoutes registers the personal data export and erase routes,
// additions to the spec's routes that answer as WordPress's exporters and
// erasers do.
func (s *Server) privacyRoutes(api *mux.Router) {
	s.private(api, "GET", "/privacy/export", s.exportPersonalData)
	s.private(api, "POST", "/privacy/erase", s.erasePersonalData)
}

func (s *Server) exportPersonalData(w http.ResponseWriter, r *http.Request) error {
	// Pages hold app.PrivacyPageSize logs, as WordPress's exporters have
	// a page size of their own; page is bounded as on every list.
	p, err := ParsePage(r, app.PrivacyPageSize)
	if err != nil {
		return err
	}
	out, err := s.Privacy.Export(r.Context(), r.URL.Query().Get("email"), p.Page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// eraseBody is POST /privacy/erase's body. Page is accepted as WordPress
// sends it to erasers and not needed: each call erases the next batch.
type eraseBody struct {
	Email string `json:"email"`
	Page  int    `json:"page"`
}

func (s *Server) erasePersonalData(w http.ResponseWriter, r *http.Request) error {
	var body eraseBody
	if err := s.decodeJSON(w, r, &body); err != nil {
		return err
	}
	out, err := s.Privacy.Erase(r.Context(), body.Email)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
