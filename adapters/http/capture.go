package http

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

// CaptureService is what the staging guard routes need (app/capture).
type CaptureService interface {
	// State returns the capture state now, with the count of captured
	// messages.
	State(ctx context.Context) (core.CaptureState, error)
	// Adopt records the running site as the live one.
	Adopt(ctx context.Context) (core.CaptureState, error)
	// Release puts captured messages back in the queue and returns how
	// many.
	Release(ctx context.Context, ids []int64, all bool) (int, error)
}

// captureRoutes registers the staging guard routes.
func (s *Server) captureRoutes(api *mux.Router) {
	s.private(api, "GET", "/capture", s.getCapture)
	s.private(api, "POST", "/capture/release", s.releaseCaptured)
	s.private(api, "POST", "/capture/adopt", s.adoptSite)
}

// captureView is the answer of GET /capture: the state and one page of
// the captured messages (newest first, as GET /logs lists them).
type captureView struct {
	core.CaptureState
	Messages []*core.Log `json:"messages"`
}

func (s *Server) getCapture(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r)
	if err != nil {
		return err
	}
	st, err := s.Capture.State(r.Context())
	if err != nil {
		return err
	}
	view := captureView{CaptureState: st, Messages: []*core.Log{}}
	total := 0
	if s.Logs != nil {
		res, err := s.Logs.ListPage(r.Context(), app.LogQuery{Status: core.StatusCaptured, Offset: p.Offset(), Limit: p.PerPage})
		if err != nil {
			return err
		}
		if res.Logs != nil {
			view.Messages = res.Logs
		}
		total = res.Total
	}
	setPageHeaders(w, total, p)
	writeJSON(w, http.StatusOK, view)
	return nil
}

// releaseBody is the body of POST /capture/release: ids, or all.
type releaseBody struct {
	IDs []int64 `json:"ids"`
	All *bool   `json:"all"`
}

func (s *Server) releaseCaptured(w http.ResponseWriter, r *http.Request) error {
	var body releaseBody
	if err := s.decodeJSON(w, r, &body); err != nil {
		return err
	}
	all := body.All != nil && *body.All
	switch {
	case body.All != nil && !*body.All && body.IDs == nil:
		return core.InvalidField("all", "Must be true to release every captured message; or give ids.")
	case all && body.IDs != nil:
		return core.InvalidField("ids", "Give ids or all, not both.")
	case !all && body.IDs == nil:
		return core.InvalidField("ids", "Give the ids of the messages to release, or all: true.")
	case !all:
		if err := app.CheckIDs(body.IDs); err != nil {
			return err
		}
	}
	n, err := s.Capture.Release(r.Context(), body.IDs, all)
	if err != nil {
		return err
	}
	if !all && n == 0 {
		return core.Errorf(core.ENOTFOUND, "None of these messages is captured: they were released, sent or deleted, or never existed.")
	}
	writeJSON(w, http.StatusOK, map[string]any{"released": n})
	return nil
}

func (s *Server) adoptSite(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, s.Capture.Adopt)
}
