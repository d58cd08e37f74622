package pro

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/app/pro/suppression"
	"github.com/mailsvc/mailsvc/core"
)

// SuppressionAdmin is what the suppression list routes need
// (app/pro/suppression.Service).
type SuppressionAdmin interface {
	List(ctx context.Context, search string, offset, limit int) ([]*suppression.Suppression, int, error)
	Add(ctx context.Context, email, reason string) (*suppression.Suppression, error)
	Remove(ctx context.Context, ref string) (*suppression.Suppression, error)
}

// LogEventReader reads the provider events of a log
// (adapters/pro/store.DB).
type LogEventReader interface {
	FindLogEvents(ctx context.Context, logID int64) ([]events.LogEvent, error)
}

// suppressionsPerPage is the suppression list's page size when the
// request sets no per_page.
const suppressionsPerPage = 20

// registerSuppressionRoutes registers the suppression list's admin
// routes (GET and POST /pro/suppressions, DELETE
// /pro/suppressions/{ref} with an id or an address) and GET
// /pro/logs/{id}/events, each needing manage_options and no licence, so
// an address can always be taken off the list. None when
// m.Suppressions is nil.
func (m *Module) registerSuppressionRoutes(rt *api.Routes) {
	if m.Suppressions == nil {
		return
	}
	rt.Private("GET", "/pro/suppressions", func(w http.ResponseWriter, r *http.Request) error {
		p, err := api.ParsePage(r, suppressionsPerPage)
		if err != nil {
			return err
		}
		list, total, err := m.Suppressions.List(r.Context(), r.URL.Query().Get("search"), p.Offset(), p.PerPage)
		if err != nil {
			return err
		}
		w.Header().Set("X-WP-Total", strconv.Itoa(total))
		w.Header().Set("X-WP-TotalPages", strconv.Itoa((total+p.PerPage-1)/p.PerPage))
		writeJSON(w, list)
		return nil
	})
	rt.Private("POST", "/pro/suppressions", func(w http.ResponseWriter, r *http.Request) error {
		var in struct {
			Email  string `json:"email"`
			Reason string `json:"reason"`
		}
		if err := rt.DecodeJSON(w, r, &in); err != nil {
			return err
		}
		s, err := m.Suppressions.Add(r.Context(), in.Email, in.Reason)
		if err != nil {
			return err
		}
		api.WriteJSON(w, http.StatusCreated, s)
		return nil
	})
	rt.Private("DELETE", "/pro/suppressions/{ref}", func(w http.ResponseWriter, r *http.Request) error {
		s, err := m.Suppressions.Remove(r.Context(), mux.Vars(r)["ref"])
		if err != nil {
			return err
		}
		writeJSON(w, map[string]any{"deleted": true, "previous": s})
		return nil
	})
	if m.LogEvents == nil {
		return
	}
	rt.Private("GET", "/pro/logs/{id}/events", func(w http.ResponseWriter, r *http.Request) error {
		id, err := strconv.ParseInt(mux.Vars(r)["id"], 10, 64)
		if err != nil || id < 1 {
			return core.Errorf(core.ENOTFOUND, "Log not found.")
		}
		evs, err := m.LogEvents.FindLogEvents(r.Context(), id)
		if err != nil {
			return err
		}
		writeJSON(w, evs)
		return nil
	})
}
