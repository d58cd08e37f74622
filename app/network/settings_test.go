package network_test

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/network"
	"github.com/mailsvc/mailsvc/core"
)

// TestNetworkSettingsFromTheirDefinitions checks that the network
// settings read as NetworkSettingDefs define them: a missing key or a
// value the definition refuses is its default, a stored value is kept.
func TestNetworkSettingsFromTheirDefinitions(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		stored map[string]any
		want   network.Settings
	}{
		{"nothing stored: the defaults", nil, network.Settings{OverQuota: core.OverQuotaWait}},
		{"stored values", map[string]any{"quota_day": int64(5), "quota_month": int64(50), "over_quota": core.OverQuotaFail, "allow_site_overrides": true},
			network.Settings{QuotaDay: 5, QuotaMonth: 50, OverQuota: core.OverQuotaFail, AllowSiteOverrides: true}},
		{"an over_quota outside its values: the default", map[string]any{"over_quota": "drop"}, network.Settings{OverQuota: core.OverQuotaWait}},
		{"a quota below its bound: the bound", map[string]any{"quota_day": int64(-3)}, network.Settings{OverQuota: core.OverQuotaWait}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := apptest.NewSettingsStore()
			if tt.stored != nil {
				if err := st.SaveSettings(ctx, network.ScopeNetwork, tt.stored); err != nil {
					t.Fatal(err)
				}
			}
			got, err := (&network.Service{Settings: st}).NetworkSettings(ctx)
			if err != nil || got != tt.want {
				t.Fatalf("NetworkSettings = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
