package app

import (
	"context"
	"fmt"

	"github.com/mailsvc/mailsvc/core"
)

// Settings reads and updates the free settings scope: defaults overlaid by
// stored values, with the spec's types and bounds enforced on update.
type Settings struct {
	Store       core.SettingsStore
	Connections core.ConnectionStore
}

// Get returns every free setting: the stored value, else the default.
func (s *Settings) Get(ctx context.Context) (map[string]any, error) {
	stored, err := s.Store.LoadSettings(ctx, core.ScopeFree)
	if err != nil {
		return nil, fmt.Errorf("load settings: %w", err)
	}
	out := core.SettingsDefaults(core.FreeSettings)
	for k, v := range stored {
		if _, known := out[k]; known {
			out[k] = normalizeSetting(v)
		}
	}
	return out, nil
}

// Update validates a partial update, checks that connection references
// exist, stores it, and returns the full settings.
func (s *Settings) Update(ctx context.Context, patch map[string]any) (map[string]any, error) {
	values, err := core.ValidateSettingsPatch(core.FreeSettings, patch)
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	for _, key := range []string{"default_connection_id", "fallback_connection_id"} {
		id, ok := values[key].(int64)
		if !ok {
			continue
		}
		if _, err := s.Connections.FindConnectionByID(ctx, id); core.ErrorCode(err) == core.ENOTFOUND {
			fields[key] = fmt.Sprintf("Connection %d does not exist.", id)
		} else if err != nil {
			return nil, fmt.Errorf("check %s: %w", key, err)
		}
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	if len(values) > 0 {
		if err := s.Store.SaveSettings(ctx, core.ScopeFree, values); err != nil {
			return nil, fmt.Errorf("save settings: %w", err)
		}
	}
	return s.Get(ctx)
}

// normalizeSetting turns integral JSON numbers into int64.
func normalizeSetting(v any) any {
	if n, ok := core.AsInt(v); ok {
		return n
	}
	return v
}
