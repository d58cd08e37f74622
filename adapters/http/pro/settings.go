package pro

import (
	"net/http"

	api "github.com/mailsvc/mailsvc/adapters/http"
)

// settingsRoutes registers the spec's "Pro: settings" routes.
func (m *Module) settingsRoutes(rt *api.Routes) {
	rt.Private("GET", "/pro/settings", func(w http.ResponseWriter, r *http.Request) error {
		out, err := m.Settings.Get(r.Context())
		if err != nil {
			return err
		}
		writeJSON(w, out)
		return nil
	})
	rt.Private("PUT", "/pro/settings", func(w http.ResponseWriter, r *http.Request) error {
		var patch map[string]any
		if err := rt.DecodeJSON(w, r, &patch); err != nil {
			return err
		}
		out, err := m.Settings.Update(r.Context(), patch)
		if err != nil {
			return err
		}
		writeJSON(w, out)
		return nil
	})
}
