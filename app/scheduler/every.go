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

// FromSettings returns a Job.Every that reads, on every call, the boolean
// setting enabledKey and the interval in minutes minutesKey (e.g.
// health_check_enabled and health_check_interval), so a change through
// PUT /settings applies at the Runner's next tick. A missing enabled key
// means enabled; an interval below one minute is one minute.
func FromSettings(src SettingsSource, enabledKey, minutesKey string) func(context.Context) (time.Duration, bool, error) {
	return func(ctx context.Context) (time.Duration, bool, error) {
		m, err := src.Get(ctx)
		if err != nil {
			return 0, false, fmt.Errorf("read settings %s, %s: %w", enabledKey, minutesKey, err)
		}
		st := core.Settings(m)
		minutes := max(st.Int(minutesKey, 0), 1)
		return time.Duration(minutes) * time.Minute, st.Bool(enabledKey, true), nil
	}
}
