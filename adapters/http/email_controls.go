package http

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/app"
)

// EmailControlService is what the email control routes need
// (app.EmailControls).
type EmailControlService interface {
	Get(ctx context.Context) (*app.EmailControlsState, error)
	Update(ctx context.Context, patch map[string]any) (*app.EmailControlsState, error)
}

// emailControlRoutes registers GET and PUT /settings/email-controls: the
// WordPress core emails switched off and how many of each were stopped.
func (s *Server) emailControlRoutes(api *mux.Router) {
	s.private(api, "GET", "/settings/email-controls", s.getEmailControls)
	s.private(api, "PUT", "/settings/email-controls", s.updateEmailControls)
}

func (s *Server) getEmailControls(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, s.EmailControls.Get)
}

// updateEmailControls takes an object of kinds to booleans (false stops
// the kind's emails, true sends them again); kinds left out keep their
// switch.
func (s *Server) updateEmailControls(w http.ResponseWriter, r *http.Request) error {
	return RespondBody(s.decodeJSON, w, r, s.EmailControls.Update)
}
