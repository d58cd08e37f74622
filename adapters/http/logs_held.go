package http

import (
	"context"
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
	return s.moveHeld(w, r, "released", s.Logs.ReleaseHeld)
}

func (s *Server) discardHeld(w http.ResponseWriter, r *http.Request) error {
	return s.moveHeld(w, r, "discarded", s.Logs.DiscardHeld)
}

// moveHeld applies move to the held mail the request's filters select
// (heldQuery) and answers {done: how many messages it moved}.
func (s *Server) moveHeld(w http.ResponseWriter, r *http.Request, done string, move func(context.Context, app.LogQuery) (int, error)) error {
	q, err := s.heldQuery(w, r)
	if err != nil {
		return err
	}
	return Respond(w, r, func(ctx context.Context) (map[string]any, error) {
		n, err := move(ctx, q)
		if err != nil {
			return nil, err
		}
		return map[string]any{done: n}, nil
	})
}
