package pro

import (
	"context"
	"slices"
	"testing"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

func TestSettingsDefaultsAndRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := &Settings{Store: apptest.NewSettingsStore()}
	got, err := s.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got[SettingMaxRetries] != int64(3) || got[SettingPluginExclusions] != false ||
		len(got[SettingExcludedPlugins].([]string)) != 0 || len(got[SettingDisabledLogSources].([]string)) != 0 {
		t.Fatalf("defaults = %v", got)
	}
	p, _ := s.DeliveryPolicy(ctx)
	if p.MaxRetries != 3 || len(p.UnloggedSources) != 0 {
		t.Fatalf("default policy = %+v", p)
	}
	got, err = s.Update(ctx, map[string]any{
		SettingMaxRetries:         float64(0),
		SettingPluginExclusions:   true,
		SettingExcludedPlugins:    []any{"woocommerce", "wpforms-lite", "woocommerce", "theme:astra"},
		SettingDisabledLogSources: []any{"sendmail"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got[SettingMaxRetries] != int64(0) || got[SettingPluginExclusions] != true ||
		!slices.Equal(got[SettingExcludedPlugins].([]string), []string{"woocommerce", "wpforms-lite", "theme:astra"}) {
		t.Fatalf("after update = %v", got)
	}
	// The update applies to delivery at once, not after the cache ages.
	p, _ = s.DeliveryPolicy(ctx)
	if p.MaxRetries != 0 || !slices.Equal(p.UnloggedSources, []string{"sendmail"}) {
		t.Fatalf("policy after update = %+v", p)
	}
}

func TestSettingsValidation(t *testing.T) {
	tests := []struct {
		name   string
		patch  map[string]any
		fields []string
	}{
		{"retries above 10", map[string]any{SettingMaxRetries: float64(11)}, []string{SettingMaxRetries}},
		{"retries negative", map[string]any{SettingMaxRetries: float64(-1)}, []string{SettingMaxRetries}},
		{"retries fractional", map[string]any{SettingMaxRetries: 1.5}, []string{SettingMaxRetries}},
		{"retries as text", map[string]any{SettingMaxRetries: "3"}, []string{SettingMaxRetries}},
		{"exclusions not bool", map[string]any{SettingPluginExclusions: "yes"}, []string{SettingPluginExclusions}},
		{"list not a list", map[string]any{SettingExcludedPlugins: "woocommerce"}, []string{SettingExcludedPlugins}},
		{"list with a number", map[string]any{SettingDisabledLogSources: []any{"ok", float64(3)}}, []string{SettingDisabledLogSources}},
		{"list with a path", map[string]any{SettingExcludedPlugins: []any{"../etc"}}, []string{SettingExcludedPlugins}},
		{"list with another prefix", map[string]any{SettingExcludedPlugins: []any{"plugin:woocommerce"}}, []string{SettingExcludedPlugins}},
		{"theme prefix alone", map[string]any{SettingDisabledLogSources: []any{"theme:"}}, []string{SettingDisabledLogSources}},
		{"list null", map[string]any{SettingExcludedPlugins: nil}, []string{SettingExcludedPlugins}},
		{"unknown key", map[string]any{"log_emails": false}, []string{"log_emails"}},
		{"several at once", map[string]any{SettingMaxRetries: float64(99), "nope": 1, SettingExcludedPlugins: []any{""}}, []string{SettingMaxRetries, "nope", SettingExcludedPlugins}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := apptest.NewSettingsStore()
			s := &Settings{Store: store}
			_, err := s.Update(context.Background(), tt.patch)
			if core.ErrorCode(err) != core.EINVALID {
				t.Fatalf("err = %v, want EINVALID", err)
			}
			fields := core.ErrorFields(err)
			if len(fields) != len(tt.fields) {
				t.Errorf("fields %v, want exactly %v", fields, tt.fields)
			}
			for _, f := range tt.fields {
				if fields[f] == "" {
					t.Errorf("no message for %s in %v", f, fields)
				}
			}
			if stored, _ := store.LoadSettings(context.Background(), core.ScopePro); len(stored) != 0 {
				t.Errorf("a refused update stored %v", stored)
			}
		})
	}
}
