package cli

import (
	"context"
	"fmt"
	"slices"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/adapters/metrics"
	"github.com/mailsvc/mailsvc/adapters/store"
)

// probes returns the root endpoints of serve: /metrics (the registry,
// behind MAILSVC_METRICS_TOKEN or loopback), /healthz and /readyz (its
// failure reason behind the same token or loopback).
func (rt *runtime) probes(reg *metrics.Registry) *api.Probes {
	return &api.Probes{
		Metrics:      reg.Handler(),
		MetricsToken: rt.consts.String("MAILSVC_METRICS_TOKEN"),
		Ready:        storeReadiness{db: rt.db},
		Health:       true,
	}
}

// storeReadiness is ready when the database answers and every migration
// this build knows is applied.
type storeReadiness struct{ db *store.DB }

// Ready implements api.ReadinessChecker.
func (r storeReadiness) Ready(ctx context.Context) error {
	if err := r.db.Ping(ctx); err != nil {
		return fmt.Errorf("database unreachable: %w", err)
	}
	applied, err := r.db.Schema().AppliedVersions(ctx)
	if err != nil {
		return fmt.Errorf("schema version unreadable: %w", err)
	}
	if latest := store.LatestVersion(); !slices.Contains(applied, latest) {
		return fmt.Errorf("database schema not migrated: version %d is not applied (applied: %v)", latest, applied)
	}
	return nil
}
