package app

import (
	"context"
	"fmt"
	"maps"

	"github.com/mailsvc/mailsvc/core"
)

// Settings reads and updates the free settings scope: defaults overlaid by
// stored values, with the spec's types and bounds enforced on update.
type Settings struct {
	Store       core.SettingsStore
	Connections core.ConnectionStore
	// Use, on a multisite network, limits the connections these (the
	// network's) settings name to the network's own: a connection a
	// site created for itself is answered as a missing one. Nil (a
	// single site) lets them name any connection.
	Use core.ConnectionUse
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

// General returns the free settings decoded (core.DecodeGeneralSettings):
// what Get returns, as typed values.
func (s *Settings) General(ctx context.Context) (core.GeneralSettings, error) {
	m, err := s.Get(ctx)
	if err != nil {
		return core.GeneralSettings{}, err
	}
	return core.DecodeGeneralSettings(m), nil
}

// Update validates a partial update, checks that connection references
// exist and are the network's (Use), stores it, and returns the full
// settings.
//
// An object setting (summary_report) is merged field by field: the fields
// a patch leaves out keep their current values.
func (s *Settings) Update(ctx context.Context, patch map[string]any) (map[string]any, error) {
	patch, err := s.mergeObjects(ctx, patch)
	if err != nil {
		return nil, err
	}
	values, err := core.ValidateSettingsPatch(core.FreeSettings, patch)
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	if rep, ok := values[core.SummaryReportKey].(map[string]any); ok {
		if id, ok := rep["connection_id"].(int64); ok {
			if err := s.checkConnection(ctx, fields, core.SummaryReportKey+".connection_id", id); err != nil {
				return nil, err
			}
		}
	}
	for _, key := range []string{"default_connection_id", "fallback_connection_id"} {
		if id, ok := values[key].(int64); ok {
			if err := s.checkConnection(ctx, fields, key, id); err != nil {
				return nil, err
			}
		}
	}
	if err := saveValidSettings(ctx, s.Store, core.ScopeFree, "settings", fields, values); err != nil {
		return nil, err
	}
	return s.Get(ctx)
}

// saveValidSettings saves values, when there are any, in scope of store,
// unless fields holds validation errors, which it returns as one
// (core.Invalid); a failed save is wrapped as "save <what>".
func saveValidSettings(ctx context.Context, store core.SettingsStore, scope, what string, fields map[string]string, values map[string]any) error {
	if err := core.Invalid(fields); err != nil {
		return err
	}
	if len(values) > 0 {
		if err := store.SaveSettings(ctx, scope, values); err != nil {
			return fmt.Errorf("save %s: %w", what, err)
		}
	}
	return nil
}

// checkConnection sets fields[key] when connection id does not exist or
// is not the network's to use (the same text for both); an error when it
// cannot be checked.
func (s *Settings) checkConnection(ctx context.Context, fields map[string]string, key string, id int64) error {
	if _, err := s.Connections.FindConnectionByID(ctx, id); core.ErrorCode(err) == core.ENOTFOUND {
		fields[key] = core.NoSuchConnection(id)
		return nil
	} else if err != nil {
		return fmt.Errorf("check %s: %w", key, err)
	}
	usable, err := core.CanUseConnection(ctx, s.Use, 0, id)
	if err != nil {
		return fmt.Errorf("check %s: %w", key, err)
	}
	if !usable {
		fields[key] = core.NoSuchConnection(id)
	}
	return nil
}

// mergeObjects returns patch with each object setting it holds laid over
// the current value of that setting.
func (s *Settings) mergeObjects(ctx context.Context, patch map[string]any) (map[string]any, error) {
	var current map[string]any
	out := patch
	for _, d := range core.FreeSettings {
		given, ok := patch[d.Key].(map[string]any)
		if d.Type != core.SettingObject || !ok {
			continue
		}
		if current == nil {
			var err error
			if current, err = s.Get(ctx); err != nil {
				return nil, err
			}
			out = maps.Clone(patch)
		}
		merged := map[string]any{}
		if cur, ok := current[d.Key].(map[string]any); ok {
			maps.Copy(merged, cur)
		}
		maps.Copy(merged, given)
		out[d.Key] = merged
	}
	return out, nil
}

// normalizeSetting turns integral JSON numbers into int64.
func normalizeSetting(v any) any {
	if n, ok := core.AsInt(v); ok {
		return n
	}
	return v
}
