package http

import (
	"net/http"

	"github.com/mailsvc/mailsvc/app"
)

// heldBody is the body of POST /logs/held/release and /logs/held/discard:
// the filters of GET /logs (each also taken from the query string; the
// body's, when given, win). status, if given, must be held.
type heldBody struct {
	Status   string `json:"status"`
	Search   string `json:"search"`
	DateFrom string `json:"date_from"`
	DateTo   string `json:"date_to"`
}

// heldQuery reads the filters of a held-mail action.
func (s *Server) heldQuery(w http.ResponseWriter, r *http.Request) (app.LogQuery, error) {
	var body heldBody
	if err := s.decodeJSON(w, r, &body); err != nil {
		return app.LogQuery{}, err
	}
	q := r.URL.Query()
	pick := func(b, name string) string {
		if b != "" {
			return b
		}
		return q.Get(name)
	}
	return app.LogQuery{
		Status:   pick(body.Status, "status"),
		Search:   pick(body.Search, "search"),
		DateFrom: pick(body.DateFrom, "date_from"),
		DateTo:   pick(body.DateTo, "date_to"),
	}, nil
}

func (s *Server) releaseHeld(w http.ResponseWriter, r *http.Request) error {
	q, err := s.heldQuery(w, r)
	if err != nil {
		return err
	}
	n, err := s.Logs.ReleaseHeld(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"released": n})
	return nil
}

func (s *Server) discardHeld(w http.ResponseWriter, r *http.Request) error {
	q, err := s.heldQuery(w, r)
	if err != nil {
		return err
	}
	n, err := s.Logs.DiscardHeld(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"discarded": n})
	return nil
}
