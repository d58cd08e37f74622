package pro

import (
	"net/http"

	api "github.com/mailsvc/mailsvc/adapters/http"
)

// licenseRoutes registers the spec's "Pro: license" routes (no feature
// gate).
func (m *Module) licenseRoutes(rt *api.Routes) {
	rt.Private("GET", "/pro/license/status", func(w http.ResponseWriter, r *http.Request) error {
		return api.Respond(w, r, m.Licenses.Status)
	})
	rt.Private("POST", "/pro/license/activate", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			LicenseKey string `json:"license_key"`
		}
		if err := rt.DecodeJSON(w, r, &body); err != nil {
			return err
		}
		st, err := m.Licenses.Activate(r.Context(), body.LicenseKey)
		if err != nil {
			return err
		}
		writeJSON(w, st)
		return nil
	})
	rt.Private("POST", "/pro/license/deactivate", func(w http.ResponseWriter, r *http.Request) error {
		return api.Respond(w, r, m.Licenses.Deactivate)
	})
	rt.Private("POST", "/pro/license/refresh", func(w http.ResponseWriter, r *http.Request) error {
		return api.Respond(w, r, m.Licenses.Refresh)
	})
}
