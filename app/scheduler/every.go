package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// SettingsSource returns the free settings with defaults applied
// (app.Settings.Get).
type SettingsSource interface {
	Get(ctx context.Context) (map[string]any, error)
}

// Fixed returns a Job.Every for a job that always runs every d.
func Fixed(d time.Duration) func(context.Context) (time.Duration, bool, error) {
	return func(context.Context) (time.Duration, bool, error) { return d, true, nil }
}

// Interval picks a job's switch and interval in minutes from the typed
// free settings (e.g. HealthCheckEnabled and HealthCheckInterval), whose
// defaults and bounds are their definitions' (core.FreeSettings).
type Interval func(core.GeneralSettings) (enabled bool, minutes int64)

// HealthCheckInterval is the health check's Interval:
// health_check_enabled and health_check_interval.
func HealthCheckInterval(g core.GeneralSettings) (bool, int64) {
	return g.HealthCheckEnabled, g.HealthCheckInterval
}

// OAuthRefreshInterval is the OAuth token refresh's Interval:
// oauth_refresh_enabled and oauth_refresh_interval.
func OAuthRefreshInterval(g core.GeneralSettings) (bool, int64) {
	return g.OAuthRefreshEnabled, g.OAuthRefreshInterval
}

// FromSettings returns a Job.Every that reads, on every call, the free
// settings and takes the job's switch and interval from them with pick,
// so a change through PUT /settings applies at the Runner's next tick. An
// interval below one minute is one minute.
func FromSettings(src SettingsSource, pick Interval) func(context.Context) (time.Duration, bool, error) {
	return func(ctx context.Context) (time.Duration, bool, error) {
		m, err := src.Get(ctx)
		if err != nil {
			return 0, false, fmt.Errorf("read settings: %w", err)
		}
		enabled, minutes := pick(core.DecodeGeneralSettings(m))
		return time.Duration(max(minutes, 1)) * time.Minute, enabled, nil
	}
}
