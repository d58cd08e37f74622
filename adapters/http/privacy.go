package http

import (
	"context"
	"net/http"
	"strconv"

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
	q := r.URL.Query()
	page := 1 // a page that is not a whole number is 0, which Export rejects
	if v := q.Get("page"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			page = n
		} else {
			page = 0
		}
	}
	out, err := s.Privacy.Export(r.Context(), q.Get("email"), page)
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
