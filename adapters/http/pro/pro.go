// Package pro serves the Pro add-on's routes under /pro/... of the REST
// namespace, one file per section (licence, settings, routing rules,
// sender groups, analytics, domain check, SES identities, export and
// import, one-click OAuth, webhooks, suppression list), with the licence
// and feature gates they go through (gate.go), and holds the Pro admin
// screens (Screens). It is an adapters/http Module: cmd/ builds it and adds it to
// the server; without it, every /pro/... path answers as an unknown route.
package pro

import (
	"context"
	"net/http"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/pro"
)

// LicenseService is what the licence routes and the gates need
// (app/pro.Licenses).
type LicenseService interface {
	Status(ctx context.Context) (*pro.LicenseStatus, error)
	Activate(ctx context.Context, key string) (*pro.LicenseStatus, error)
	Deactivate(ctx context.Context) (*pro.LicenseStatus, error)
	Refresh(ctx context.Context) (*pro.LicenseStatus, error)
	// Active returns the active licence, or nil when there is none.
	Active(ctx context.Context) (*pro.License, error)
}

// SettingsService is what the Pro settings routes need (app/pro.Settings).
type SettingsService interface {
	Get(ctx context.Context) (map[string]any, error)
	Update(ctx context.Context, patch map[string]any) (map[string]any, error)
}

// Module is the Pro add-on's route set. Set its fields, then add it to
// api.Server.Modules.
type Module struct {
	Licenses LicenseService
	Settings SettingsService
	// Transfer serves settings export and import; nil registers no
	// export and import routes.
	Transfer TransferService
	// OneClick serves one-click OAuth; nil registers no one-click routes.
	OneClick OneClickService
	// SES serves the SES identity routes; nil registers none.
	SES SESService
	// DomainCheck serves the domain check; nil registers no route.
	DomainCheck DomainChecker
	// Webhooks receives provider webhooks; nil registers no webhook route.
	Webhooks WebhookReceiver
	// Suppressions serves the suppression list routes, LogEvents a log's
	// provider events; nil Suppressions registers neither.
	Suppressions SuppressionAdmin
	LogEvents    LogEventReader
	// RoutingRules serves the routing rules; nil registers none.
	RoutingRules RoutingRuleService
	// SenderGroups serves the sender groups; nil registers none.
	SenderGroups SenderGroupService
	// Analytics serves the analytics routes; nil registers none.
	Analytics AnalyticsService
}

// RegisterRoutes implements api.Module.
func (m *Module) RegisterRoutes(rt *api.Routes) {
	m.licenseRoutes(rt)
	m.settingsRoutes(rt)
	m.registerTransferRoutes(rt)
	m.registerOneClickRoutes(rt)
	m.registerSESRoutes(rt)
	m.registerDomainCheckRoutes(rt)
	m.registerWebhookRoutes(rt)
	m.registerSuppressionRoutes(rt)
	m.registerRoutingRoutes(rt)
	m.registerSenderGroupRoutes(rt)
	m.registerAnalyticsRoutes(rt)
}

var _ api.Module = (*Module)(nil)

// writeJSON answers 200 with v.
func writeJSON(w http.ResponseWriter, v any) { api.WriteJSON(w, http.StatusOK, v) }
