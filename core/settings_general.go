package core

import "slices"

// GeneralSettings is the free settings scope (ScopeFree) as typed values,
// decoded once by DecodeGeneralSettings from the map the settings API
// serves: every reader (the delivery engine, the scheduler's jobs, the
// OAuth refresh, the staging guard, the summary report) takes its values
// from here rather than reading a key and restating its default. The
// field comments name the keys of FreeSettings they hold.
type GeneralSettings struct {
	// FromEmail and FromName: from_email, from_name.
	FromEmail, FromName string
	// DefaultConnectionID and FallbackConnectionID:
	// default_connection_id, fallback_connection_id; 0 when unset.
	DefaultConnectionID, FallbackConnectionID int64
	// SimulationEnabled: simulation_enabled.
	SimulationEnabled bool
	// LogEmails: log_emails.
	LogEmails bool
	// LogRetentionDays: log_retention_days (0 keeps logs forever).
	LogRetentionDays int64
	// LogBody, LogBodySources and LogAttachments: log_body,
	// log_body_sources (a source's mode; values not among LogBodyModes
	// are dropped), log_attachments.
	LogBody        string
	LogBodySources map[string]string
	LogAttachments bool
	// HealthCheckEnabled and HealthCheckInterval (minutes):
	// health_check_enabled, health_check_interval.
	HealthCheckEnabled  bool
	HealthCheckInterval int64
	// OAuthRefreshEnabled, OAuthRefreshInterval (minutes) and
	// OAuthRefreshMaxRetries: oauth_refresh_enabled,
	// oauth_refresh_interval, oauth_refresh_max_retries.
	OAuthRefreshEnabled    bool
	OAuthRefreshInterval   int64
	OAuthRefreshMaxRetries int64
	// UncertainGraceMinutes: uncertain_grace_minutes.
	UncertainGraceMinutes int64
	// SummaryReport: summary_report, as its definition's Check keeps it.
	SummaryReport map[string]any
	// CaptureAllowList: capture_allow_list.
	CaptureAllowList []string
	// Flood: the flood guard's settings (flood_guard_enabled, flood_*).
	Flood FloodSettings
}

// DecodeGeneralSettings decodes m (the free settings as app.Settings.Get
// gives them: stored values over the defaults) into GeneralSettings, each
// key as its FreeSettings definition says: a missing or unreadable value
// takes the definition's default, an integer is bounded to the
// definition's Min and Max, a string outside its Enum takes the default.
// Values given as strings (as constants are written) are read as
// Settings.Int, Settings.Bool and Settings.Strings read them.
func DecodeGeneralSettings(m map[string]any) GeneralSettings {
	v := make(map[string]any, len(FreeSettings))
	for i := range FreeSettings {
		d := &FreeSettings[i]
		v[d.Key] = d.Decode(m)
	}
	g := GeneralSettings{
		FromEmail:              v["from_email"].(string),
		FromName:               v["from_name"].(string),
		DefaultConnectionID:    v["default_connection_id"].(int64),
		FallbackConnectionID:   v["fallback_connection_id"].(int64),
		SimulationEnabled:      v["simulation_enabled"].(bool),
		LogEmails:              v["log_emails"].(bool),
		LogRetentionDays:       v["log_retention_days"].(int64),
		LogBody:                v["log_body"].(string),
		LogAttachments:         v["log_attachments"].(bool),
		HealthCheckEnabled:     v["health_check_enabled"].(bool),
		HealthCheckInterval:    v["health_check_interval"].(int64),
		OAuthRefreshEnabled:    v["oauth_refresh_enabled"].(bool),
		OAuthRefreshInterval:   v["oauth_refresh_interval"].(int64),
		OAuthRefreshMaxRetries: v["oauth_refresh_max_retries"].(int64),
		UncertainGraceMinutes:  v["uncertain_grace_minutes"].(int64),
		CaptureAllowList:       v["capture_allow_list"].([]string),
	}
	g.LogBodySources, _ = v["log_body_sources"].(map[string]string)
	g.SummaryReport, _ = v[SummaryReportKey].(map[string]any)
	g.Flood = FloodSettings{
		Enabled:           v[floodEnabledKey].(bool),
		VolumeMultiplier:  v[floodVolumeMultiplierKey].(int64),
		VolumeFloor:       v[floodVolumeFloorKey].(int64),
		Recipients:        v[floodRecipientsKey].(int64),
		RecipientsMinutes: v[floodRecipientsMinutesKey].(int64),
	}
	g.Flood.Sources, _ = v[floodSourcesKey].(map[string]string)
	return g
}

// Decode returns d's value in m as d.Type's Go type: string (email and
// enum strings included), bool, int64 (bounded to Min and Max; a
// connection reference: 0 when unset), map[string]string, []string, or
// the object as it is; a missing or unreadable value is d's Default. It
// is how a scope's typed reads (DecodeGeneralSettings, the Pro module's)
// take a default from its definition rather than restating it.
func (d *SettingDef) Decode(m map[string]any) any {
	st := Settings(m)
	raw, present := m[d.Key]
	switch d.Type {
	case SettingBool:
		def, _ := d.Default.(bool)
		return st.Bool(d.Key, def)
	case SettingInt:
		def, _ := AsInt(d.Default)
		n := st.Int(d.Key, def)
		if d.Min != nil && n < *d.Min {
			n = *d.Min
		}
		if d.Max != nil && n > *d.Max {
			n = *d.Max
		}
		return n
	case SettingConnRef:
		if n := st.Int(d.Key, 0); n > 0 {
			return n
		}
		return int64(0)
	case SettingStringMap:
		out := map[string]string{}
		src, _ := raw.(map[string]any)
		if !present {
			src, _ = d.Default.(map[string]any)
		}
		for k, e := range src {
			if s, ok := e.(string); ok && (d.Enum == nil || slices.Contains(d.Enum, s)) {
				out[k] = s
			}
		}
		return out
	case SettingAddressList:
		if !present {
			return []string{}
		}
		out := st.Strings(d.Key)
		if out == nil {
			out = []string{}
		}
		return out
	case SettingObject:
		if !present || raw == nil {
			return d.Default
		}
		return raw
	default: // SettingString, SettingEmail
		def, _ := d.Default.(string)
		if !present || raw == nil {
			return def
		}
		s := st.String(d.Key)
		if d.Enum != nil && !slices.Contains(d.Enum, s) {
			return def
		}
		return s
	}
}
