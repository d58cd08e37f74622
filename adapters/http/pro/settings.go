package pro

import (
	"net/http"

	api "github.com/mailsvc/mailsvc/adapters/http"
)

// settingsRoutes registers the spec's "Pro: settings" routes.
func (m *Module) settingsRoutes(rt *api.Routes) {
	rt.Private("GET", "/pro/settings", func(w http.ResponseWriter, r *http.Request) error {
		return api.Respond(w, r, m.Settings.Get)
	})
	rt.Private("PUT", "/pro/settings", func(w http.ResponseWriter, r *http.Request) error {
		return api.RespondBody(rt.DecodeJSON, w, r, m.Settings.Update)
	})
}
