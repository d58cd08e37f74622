package pro

import (
	"context"
	"net/http"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/pro"
)

// licenseRoutes registers the spec's "Pro: license" routes (no feature
// gate).
func (m *Module) licenseRoutes(rt *api.Routes) {
	rt.Private("GET", "/pro/license/status", func(w http.ResponseWriter, r *http.Request) error {
		return api.Respond(w, r, m.Licenses.Status)
	})
	rt.Private("POST", "/pro/license/activate", func(w http.ResponseWriter, r *http.Request) error {
		return api.RespondBody(rt.DecodeJSON, w, r, func(ctx context.Context, body licenseKeyBody) (*pro.LicenseStatus, error) {
			return m.Licenses.Activate(ctx, body.LicenseKey)
		})
	})
	rt.Private("POST", "/pro/license/deactivate", func(w http.ResponseWriter, r *http.Request) error {
		return api.Respond(w, r, m.Licenses.Deactivate)
	})
	rt.Private("POST", "/pro/license/refresh", func(w http.ResponseWriter, r *http.Request) error {
		return api.Respond(w, r, m.Licenses.Refresh)
	})
}

// licenseKeyBody is the body of a license activation: the key.
type licenseKeyBody struct {
	LicenseKey string `json:"license_key"`
}
