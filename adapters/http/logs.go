package http

import (
	"context"
	"net/http"

	"github.com/mailsvc/mailsvc/app"
)

func (s *Server) listLogs(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	res, err := s.Logs.ListPage(r.Context(), app.LogQuery{
		Status:   q.Get("status"),
		Search:   q.Get("search"),
		DateFrom: q.Get("date_from"),
		DateTo:   q.Get("date_to"),
		Offset:   p.Offset(),
		Limit:    p.PerPage,
	})
	if err != nil {
		return err
	}
	if res.Capped {
		// X-WP-Total counts only this far; more logs match.
		w.Header().Set(totalCappedHeader, "true")
	}
	if res.Partial {
		// The search's index is still being filled: matches may be missing.
		w.Header().Set(searchPartialHeader, "true")
	}
	writeList(w, res.Logs, res.Total, p)
	return nil
}

// totalCappedHeader marks a list whose X-WP-Total is a lower bound.
const totalCappedHeader = "X-Mailsvc-Total-Capped"

// searchPartialHeader marks a search whose index is still being filled.
const searchPartialHeader = "X-Mailsvc-Search-Partial"

func (s *Server) logStats(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, s.Logs.Stats)
}

func (s *Server) getLog(w http.ResponseWriter, r *http.Request) error {
	return respondID(w, r, s.Logs.Get)
}

// resendBody is the body of the resend routes: the ids (bulk only) and,
// optionally, recipients replacing the original ones.
type resendBody struct {
	IDs []int64  `json:"ids"`
	To  []string `json:"to"`
	Cc  []string `json:"cc"`
	Bcc []string `json:"bcc"`
}

func (b resendBody) recipients() app.ResendRecipients {
	return app.ResendRecipients{To: b.To, Cc: b.Cc, Bcc: b.Bcc}
}

func (s *Server) resendLogs(w http.ResponseWriter, r *http.Request) error {
	var body resendBody
	if err := s.decodeJSON(w, r, &body); err != nil {
		return err
	}
	if body.recipients().Given() {
		ids, err := s.Logs.ResendTo(r.Context(), body.IDs, body.recipients())
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"resent": len(ids), "new_ids": ids})
		return nil
	}
	n, err := s.Logs.Resend(r.Context(), body.IDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"resent": n})
	return nil
}

func (s *Server) resendLog(w http.ResponseWriter, r *http.Request) error {
	return respondIDBody(s.decodeJSON, w, r, func(ctx context.Context, id int64, body resendBody) (map[string]any, error) {
		if body.recipients().Given() {
			nid, err := s.Logs.ResendOneTo(ctx, id, body.recipients())
			if err != nil {
				return nil, err
			}
			return map[string]any{"resent": true, "id": id, "new_id": nid}, nil
		}
		if err := s.Logs.ResendOne(ctx, id); err != nil {
			return nil, err
		}
		return map[string]any{"resent": true, "id": id}, nil
	})
}

func (s *Server) deleteLog(w http.ResponseWriter, r *http.Request) error {
	return deleteByID(w, r, s.Logs.Delete)
}

func (s *Server) deleteLogs(w http.ResponseWriter, r *http.Request) error {
	return deleteIDs(s.decodeJSON, w, r, s.Logs.DeleteMany)
}
