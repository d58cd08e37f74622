package pro

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/core"
)

// Keys of the Pro settings scope (core.ScopePro).
const (
	// SettingMaxRetries is the delivery engine's retry limit: how many
	// times a temporary failure is retried on one connection after the
	// first attempt, 0 to 10.
	SettingMaxRetries = "max_retries"
	// SettingPluginExclusions switches the plugin exclusions on: mail
	// from a plugin in SettingExcludedPlugins is left to the host's own
	// mailer by the bridge (not taken over).
	SettingPluginExclusions = "plugin_exclusions_enabled"
	// SettingExcludedPlugins lists the excluded plugins' slugs.
	SettingExcludedPlugins = "excluded_plugins"
	// SettingDisabledLogSources lists message sources (plugin slugs,
	// "sendmail", "smtp", "test", ...) whose mail is delivered but not
	// kept in the log.
	SettingDisabledLogSources = "disabled_log_sources"
)

// SettingDefs are the scalar keys of the Pro settings scope, with their
// defaults and bounds; the list keys are listKeys.
var SettingDefs = []core.SettingDef{
	{Key: SettingMaxRetries, Type: core.SettingInt, Default: int64(3), Min: core.Int64(0), Max: core.Int64(10)},
	{Key: SettingPluginExclusions, Type: core.SettingBool, Default: false},
}

// Values is the Pro settings scope as typed values (DecodeSettings).
type Values struct {
	// MaxRetries: max_retries.
	MaxRetries int64
	// PluginExclusions: plugin_exclusions_enabled.
	PluginExclusions bool
	// ExcludedPlugins and DisabledLogSources: excluded_plugins,
	// disabled_log_sources (nil when not lists of strings).
	ExcludedPlugins, DisabledLogSources []string
}

// DecodeSettings decodes m (the Pro settings as Settings.Get gives them)
// into Values, each scalar key as its SettingDefs definition says: its
// default and bounds live there only.
func DecodeSettings(m map[string]any) Values {
	v := Values{}
	for i := range SettingDefs {
		d := &SettingDefs[i]
		switch d.Key {
		case SettingMaxRetries:
			v.MaxRetries, _ = d.Decode(m).(int64)
		case SettingPluginExclusions:
			v.PluginExclusions, _ = d.Decode(m).(bool)
		}
	}
	v.ExcludedPlugins, _ = m[SettingExcludedPlugins].([]string)
	v.DisabledLogSources, _ = m[SettingDisabledLogSources].([]string)
	return v
}

// listKeys are the Pro settings holding a list of source slugs.
var listKeys = []string{SettingExcludedPlugins, SettingDisabledLogSources}

// Bounds of the slug lists.
const (
	MaxSlugs   = 200
	maxSlugLen = 100
)

// slugPattern is a plugin or theme slug (its directory name) or one of
// the service's own sources.
var slugPattern = regexp.MustCompile(`^(theme:)?[A-Za-z0-9][A-Za-z0-9._-]*$`)

// policyTTL is how long DeliveryPolicy reuses what it read.
const policyTTL = time.Second

// Settings reads and updates the Pro settings scope, and gives the
// delivery engine its Policy from it. An update also writes the WordPress
// bridge's directive the settings decide (SaveSettingsAndDirective).
type Settings struct {
	Store core.SettingsStore
	// Tx, when set, runs an update's writes (the Pro settings and the
	// bridge directive) in one transaction; without it they are two
	// writes to Store.
	Tx SettingsTransactor

	mu       sync.Mutex
	cachedAt time.Time
	cached   delivery.Policy
}

// Get returns every Pro setting: the stored value, else the default.
// Lists are never null.
func (s *Settings) Get(ctx context.Context) (map[string]any, error) {
	stored, err := s.Store.LoadSettings(ctx, core.ScopePro)
	if err != nil {
		return nil, fmt.Errorf("load pro settings: %w", err)
	}
	out := core.SettingsDefaults(SettingDefs)
	for k, v := range stored {
		if _, known := out[k]; known {
			if n, ok := core.AsInt(v); ok {
				v = n
			}
			out[k] = v
		}
	}
	for _, k := range listKeys {
		list, _ := checkSlugs(stored[k])
		if list == nil {
			list = []string{}
		}
		out[k] = list
	}
	return out, nil
}

// Update validates a partial update (unknown keys and bad values are an
// EINVALID error naming each field), stores it and returns every setting.
// Lists are stored trimmed of repeats, in the order given.
func (s *Settings) Update(ctx context.Context, patch map[string]any) (map[string]any, error) {
	values, err := CheckSettings(patch)
	if err != nil {
		return nil, err
	}
	if len(values) > 0 {
		save := func(st core.SettingsStore) error { return SaveSettingsAndDirective(ctx, st, values) }
		var err error
		if s.Tx != nil {
			err = s.Tx.InSettingsTransaction(ctx, save)
		} else {
			err = save(s.Store)
		}
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.cachedAt = time.Time{}
		s.mu.Unlock()
	}
	return s.Get(ctx)
}

// checkSlugs validates a list of slugs (nil for a stored value that is
// not one), returning it without repeats, or a message.
func checkSlugs(v any) ([]string, string) {
	items, ok := v.([]any)
	if !ok {
		if strs, isStrs := v.([]string); isStrs {
			items = make([]any, len(strs))
			for i, s := range strs {
				items[i] = s
			}
		} else {
			return nil, "Must be a list of slugs."
		}
	}
	if len(items) > MaxSlugs {
		return nil, fmt.Sprintf("At most %d entries.", MaxSlugs)
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		str, ok := it.(string)
		if !ok || len(str) > maxSlugLen || !slugPattern.MatchString(str) {
			return nil, fmt.Sprintf("Entry %d is not a source: a plugin slug or theme:<slug> (letters, digits, dot, dash and underscore, at most %d characters).", i+1, maxSlugLen)
		}
		if !slices.Contains(out, str) {
			out = append(out, str)
		}
	}
	return out, ""
}

// DeliveryPolicy gives the delivery engine the retry limit and the
// unlogged sources, from settings read at most a second ago (an update
// through this Settings applies at once).
func (s *Settings) DeliveryPolicy(ctx context.Context) (delivery.Policy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.cachedAt.IsZero() && time.Since(s.cachedAt) < policyTTL {
		return s.cached, nil
	}
	m, err := s.Get(ctx)
	if err != nil {
		return delivery.Policy{}, err
	}
	v := DecodeSettings(m)
	p := delivery.Policy{MaxRetries: int(v.MaxRetries), UnloggedSources: v.DisabledLogSources}
	s.cached, s.cachedAt = p, time.Now()
	return p, nil
}

var _ delivery.PolicySource = (*Settings)(nil)
