package network

import "github.com/mailsvc/mailsvc/core"

// NetworkSettingDefs define the keys of ScopeNetwork (Settings): their
// types, defaults and bounds. NetworkSettings decodes them through
// core.SettingDef.Decode, so a default is written here only.
var NetworkSettingDefs = []core.SettingDef{
	{Key: "quota_day", Type: core.SettingInt, Default: int64(0), Min: core.Int64(0), Label: "Messages per site per UTC day", Help: "0: no limit."},
	{Key: "quota_month", Type: core.SettingInt, Default: int64(0), Min: core.Int64(0), Label: "Messages per site per UTC month", Help: "0: no limit."},
	{Key: "over_quota", Type: core.SettingString, Default: core.OverQuotaWait, Enum: []string{core.OverQuotaWait, core.OverQuotaFail},
		Label: "A message past its site's quota", Help: "wait: it waits in the queue for the next period; fail: it fails."},
	{Key: "allow_site_overrides", Type: core.SettingBool, Default: false, Label: "Let marked sites use their own connections and settings"},
}

// siteOverridesAllowed defines a site's overrides_allowed key (a site's
// other keys have no default: absent, they are the network's).
var siteOverridesAllowed = core.SettingDef{Key: "overrides_allowed", Type: core.SettingBool, Default: false}

// decodeNetworkSettings reads the network settings from their stored
// keys, each as NetworkSettingDefs defines it.
func decodeNetworkSettings(m map[string]any) Settings {
	v := make(map[string]any, len(NetworkSettingDefs))
	for i := range NetworkSettingDefs {
		d := &NetworkSettingDefs[i]
		v[d.Key] = d.Decode(m)
	}
	return Settings{
		QuotaDay:           v["quota_day"].(int64),
		QuotaMonth:         v["quota_month"].(int64),
		OverQuota:          v["over_quota"].(string),
		AllowSiteOverrides: v["allow_site_overrides"].(bool),
	}
}
