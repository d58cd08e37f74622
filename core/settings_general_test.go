package core

import (
	"reflect"
	"testing"
)

// TestDecodeGeneralSettings decodes the free settings as app.Settings.Get
// gives them (defaults, stored values, values written as constants) and
// as they should never be stored (out of bounds, of the wrong type): each
// value is typed, bounded and defaulted as its definition says.
func TestDecodeGeneralSettings(t *testing.T) {
	defaults := GeneralSettings{
		LogEmails: true, LogRetentionDays: 90, LogBody: LogBodyRedacted, LogBodySources: map[string]string{},
		HealthCheckEnabled: true, HealthCheckInterval: 15,
		OAuthRefreshEnabled: true, OAuthRefreshInterval: 15, OAuthRefreshMaxRetries: 3,
		UncertainGraceMinutes: 10, SummaryReport: SummaryReportDefault(), CaptureAllowList: []string{},
		Flood: FloodSettings{Enabled: true, VolumeMultiplier: 10, VolumeFloor: 50, Recipients: 50, RecipientsMinutes: 10, Sources: map[string]string{}},
	}
	with := func(f func(*GeneralSettings)) GeneralSettings {
		g := defaults
		g.LogBodySources = map[string]string{}
		g.Flood.Sources = map[string]string{}
		f(&g)
		return g
	}
	merged := func(m map[string]any) map[string]any {
		out := SettingsDefaults(FreeSettings)
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name string
		in   map[string]any
		want GeneralSettings
	}{
		{"the defaults", SettingsDefaults(FreeSettings), defaults},
		{"nothing at all: the defaults", nil, defaults},
		{"stored values", merged(map[string]any{
			"from_email": "site@example.com", "from_name": "Site", "default_connection_id": int64(4), "fallback_connection_id": int64(7),
			"simulation_enabled": true, "log_emails": false, "log_retention_days": int64(0), "log_body": LogBodyNone,
			"log_body_sources": map[string]any{"woocommerce": LogBodyFull, "x": "bogus", "y": int64(1)}, "log_attachments": true,
			"health_check_enabled": false, "health_check_interval": int64(60), "uncertain_grace_minutes": int64(7),
			"capture_allow_list":  []any{"a@example.com", "example.org"},
			"flood_guard_enabled": false, "flood_volume_multiplier": int64(20), "flood_volume_floor": int64(200),
			"flood_recipients": int64(10), "flood_recipients_minutes": int64(5),
			"flood_sources": map[string]any{"newsletter": FloodPolicyTrusted, "shop": FloodPolicyHold, "x": "bogus"},
		}), with(func(g *GeneralSettings) {
			g.Flood = FloodSettings{VolumeMultiplier: 20, VolumeFloor: 200, Recipients: 10, RecipientsMinutes: 5,
				Sources: map[string]string{"newsletter": FloodPolicyTrusted, "shop": FloodPolicyHold}}
			g.FromEmail, g.FromName, g.DefaultConnectionID, g.FallbackConnectionID = "site@example.com", "Site", 4, 7
			g.SimulationEnabled, g.LogEmails, g.LogRetentionDays, g.LogBody = true, false, 0, LogBodyNone
			g.LogBodySources = map[string]string{"woocommerce": LogBodyFull}
			g.LogAttachments, g.HealthCheckEnabled, g.HealthCheckInterval, g.UncertainGraceMinutes = true, false, 60, 7
			g.CaptureAllowList = []string{"a@example.com", "example.org"}
		})},
		{"values written as constants", merged(map[string]any{
			"simulation_enabled": "1", "oauth_refresh_interval": "30", "default_connection_id": float64(3),
			"capture_allow_list": "a@example.com, example.org",
		}), with(func(g *GeneralSettings) {
			g.SimulationEnabled, g.OAuthRefreshInterval, g.DefaultConnectionID = true, 30, 3
			g.CaptureAllowList = []string{"a@example.com", "example.org"}
		})},
		{"out of bounds: bounded", merged(map[string]any{
			"uncertain_grace_minutes": int64(0), "oauth_refresh_max_retries": int64(99), "log_retention_days": int64(-1),
			"health_check_interval": int64(5000), "flood_volume_multiplier": int64(1), "flood_recipients_minutes": int64(9999),
		}), with(func(g *GeneralSettings) {
			g.Flood.VolumeMultiplier, g.Flood.RecipientsMinutes = 2, 1440
			g.UncertainGraceMinutes, g.OAuthRefreshMaxRetries, g.LogRetentionDays, g.HealthCheckInterval = 1, 10, 0, 1440
		})},
		{"unreadable or unset: the default", merged(map[string]any{
			"log_retention_days": "soon", "log_body": "bogus", "default_connection_id": nil, "fallback_connection_id": int64(-2),
		}), defaults},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DecodeGeneralSettings(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodeGeneralSettings =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// TestFloodSettingsPolicy checks the flood guard's per-source policies
// and threshold: WordPress core's own mail is held by default, other
// sources alerted on, one message to many held for every source, and
// flood_sources overrides both.
func TestFloodSettingsPolicy(t *testing.T) {
	f := FloodSettings{VolumeMultiplier: 10, VolumeFloor: 50, Sources: map[string]string{
		"newsletter": FloodPolicyTrusted, "woocommerce": FloodPolicyHold, FloodSourceCore: FloodPolicyAlert,
	}}
	plain := FloodSettings{VolumeMultiplier: 10, VolumeFloor: 50}
	tests := []struct {
		name         string
		f            FloodSettings
		source       string
		volume, many string
	}{
		{"core mail by default", plain, FloodSourceCore, FloodPolicyHold, FloodPolicyHold},
		{"a plugin by default", plain, "woocommerce", FloodPolicyAlert, FloodPolicyHold},
		{"a trusted source", f, "newsletter", FloodPolicyTrusted, FloodPolicyTrusted},
		{"a plugin held", f, "woocommerce", FloodPolicyHold, FloodPolicyHold},
		{"core mail alerted on only", f, FloodSourceCore, FloodPolicyAlert, FloodPolicyAlert},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.Policy(tt.source); got != tt.volume {
				t.Errorf("Policy(%q) = %q, want %q", tt.source, got, tt.volume)
			}
			if got := tt.f.ManyPolicy(tt.source); got != tt.many {
				t.Errorf("ManyPolicy(%q) = %q, want %q", tt.source, got, tt.many)
			}
		})
	}
	for _, c := range []struct{ usual, want int64 }{{0, 50}, {4, 50}, {5, 50}, {6, 60}, {100, 1000}} {
		if got := plain.VolumeThreshold(c.usual); got != c.want {
			t.Errorf("VolumeThreshold(%d) = %d, want %d", c.usual, got, c.want)
		}
	}
	for _, c := range []struct {
		v    SourceVolume
		want int64
	}{{SourceVolume{}, 0}, {SourceVolume{Messages: 10, ActiveHours: 3}, 4}, {SourceVolume{Messages: 9, ActiveHours: 3}, 3}} {
		if got := c.v.Usual(); got != c.want {
			t.Errorf("%+v.Usual() = %d, want %d", c.v, got, c.want)
		}
	}
}
