package http

import "net/http"

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
