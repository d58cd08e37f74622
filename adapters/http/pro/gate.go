package pro

import (
	"context"
	"net/http"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/core"
)

// RequireLicense wraps a Pro route: without an active licence it answers
// 403 license_required and h does not run. Register the result with
// Routes.Private, so authentication and the capability come first.
func (m *Module) RequireLicense(h api.HandlerFunc) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := m.activeLicense(r.Context()); err != nil {
			return err
		}
		return h(w, r)
	}
}

// activeLicense returns the active licence; without one, ELICENSE (403
// license_required).
func (m *Module) activeLicense(ctx context.Context) (*pro.License, error) {
	l, err := m.Licenses.Active(ctx)
	if err != nil {
		return nil, err
	}
	if l == nil {
		return nil, core.Errorf(core.ELICENSE, "This feature needs an active mailsvc Pro licence.")
	}
	return l, nil
}

// RequireFeature wraps a Pro route that needs a licensed feature (named
// with or without its "feature:" prefix): without an active licence it
// answers 403 license_required, with a licence that lacks the feature 403
// rest_forbidden naming it.
func (m *Module) RequireFeature(feature string, h api.HandlerFunc) api.HandlerFunc {
	name := pro.FeatureName(feature)
	return func(w http.ResponseWriter, r *http.Request) error {
		l, err := m.activeLicense(r.Context())
		if err != nil {
			return err
		}
		if !l.HasFeature(name) {
			return core.Errorf(core.EFORBIDDEN, "Your licence does not include the feature %s.", name)
		}
		return h(w, r)
	}
}
