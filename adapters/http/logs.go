package http

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/core"
)

func (s *Server) listLogs(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	logs, total, err := s.Logs.List(r.Context(), core.LogFilter{
		Status: q.Get("status"),
		Search: q.Get("search"),
		Offset: p.Offset(),
		Limit:  p.PerPage,
	})
	if err != nil {
		return err
	}
	writeList(w, logs, total, p)
	return nil
}

func (s *Server) logStats(w http.ResponseWriter, r *http.Request) error {
	st, err := s.Logs.Stats(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *Server) getLog(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	l, err := s.Logs.Get(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func (s *Server) resendLogs(w http.ResponseWriter, r *http.Request) error {
	var body idsBody
	if err := s.decodeJSON(w, r, &body); err != nil {
		return err
	}
	n, err := s.Logs.Resend(r.Context(), body.IDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"resent": n})
	return nil
}

func (s *Server) resendLog(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	if err := s.Logs.ResendOne(r.Context(), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"resent": true, "id": id})
	return nil
}

func (s *Server) deleteLog(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	if err := s.Logs.Delete(r.Context(), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true, "id": id})
	return nil
}

func (s *Server) deleteLogs(w http.ResponseWriter, r *http.Request) error {
	var body idsBody
	if err := s.decodeJSON(w, r, &body); err != nil {
		return err
	}
	n, err := s.Logs.DeleteMany(r.Context(), body.IDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": n})
	return nil
}
