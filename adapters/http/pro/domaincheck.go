package pro

import (
	"context"
	"net/http"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/pro/domaincheck"
)

// DomainChecker is what the domain check route needs
// (app/pro/domaincheck.Service).
type DomainChecker interface {
	Check(ctx context.Context, domain string) (*domaincheck.Report, error)
}

// registerDomainCheckRoutes registers GET /pro/tools/domain-check, behind
// an active licence; none when m.DomainCheck is nil.
func (m *Module) registerDomainCheckRoutes(rt *api.Routes) {
	if m.DomainCheck == nil {
		return
	}
	rt.Private("GET", "/pro/tools/domain-check", m.RequireLicense(func(w http.ResponseWriter, r *http.Request) error {
		report, err := m.DomainCheck.Check(r.Context(), r.URL.Query().Get("domain"))
		if err != nil {
			return err
		}
		writeJSON(w, report)
		return nil
	}))
}
