package cli

import (
	"log/slog"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/app/floodguard"
	"github.com/mailsvc/mailsvc/core"
)

// floodGuard returns the flood guard of the site whose store is db (one
// per delivery service: each site of a fleet has its own) and adds its
// stage to the delivery options.
func floodGuard(db *store.DB, opts *delivery.Options, settings floodguard.SettingsSource, alerts core.Alerter, site string, log *slog.Logger) *floodguard.Guard {
	g := &floodguard.Guard{Volumes: db.Flood(), Settings: settings, Alerts: alerts, Site: site, Logger: log}
	opts.Stages = append(opts.Stages, delivery.FloodStage(g))
	return g
}
