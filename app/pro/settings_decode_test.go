package pro

import (
	"slices"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

func TestDecodeSettings(t *testing.T) {
	tests := []struct {
		name string
		m    map[string]any
		want Values
	}{
		{"defaults", core.SettingsDefaults(SettingDefs), Values{MaxRetries: 3}},
		{"missing keys: the definitions' defaults", map[string]any{}, Values{MaxRetries: 3}},
		{"stored", map[string]any{SettingMaxRetries: int64(0), SettingPluginExclusions: true,
			SettingExcludedPlugins: []string{"woocommerce"}, SettingDisabledLogSources: []string{"sendmail"}},
			Values{MaxRetries: 0, PluginExclusions: true, ExcludedPlugins: []string{"woocommerce"}, DisabledLogSources: []string{"sendmail"}}},
		{"out of bounds is bounded", map[string]any{SettingMaxRetries: int64(99)}, Values{MaxRetries: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DecodeSettings(tt.m)
			if got.MaxRetries != tt.want.MaxRetries || got.PluginExclusions != tt.want.PluginExclusions ||
				!slices.Equal(got.ExcludedPlugins, tt.want.ExcludedPlugins) || !slices.Equal(got.DisabledLogSources, tt.want.DisabledLogSources) {
				t.Fatalf("DecodeSettings(%v) = %+v; want %+v", tt.m, got, tt.want)
			}
		})
	}
}
