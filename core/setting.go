package core

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Setting types.
const (
	SettingString  = "string"
	SettingEmail   = "email"
	SettingBool    = "boolean"
	SettingInt     = "integer"
	SettingConnRef = "connection_id" // an integer id of a connection, or null
	// SettingStringMap is an object of string keys to string values;
	// with Enum set, each value must be one of it.
	SettingStringMap = "string_map"
	// SettingObject is an object whose fields the definition's Check
	// validates and normalises (e.g. summary_report).
	SettingObject = "object"
	// SettingAddressList is a list of email addresses and domain names
	// (ValidAllowListEntry).
	SettingAddressList = "address_list"
)

// SettingDef defines one key of a settings scope: its type, default and
// bounds, and how the Settings screen shows it.
type SettingDef struct {
	Key     string `json:"key"`
	Type    string `json:"type"`
	Default any    `json:"default"`
	Min     *int64 `json:"min,omitempty"`
	Max     *int64 `json:"max,omitempty"`
	// Enum, when set, lists the allowed values of a string (or of each
	// value of a string map).
	Enum []string `json:"enum,omitempty"`
	// Group is the slug of the SettingGroup the key shows in; Label,
	// Unit (of a number: "minutes", "days") and Help (one line) are what
	// the screen says of it. The key itself never changes.
	Group string `json:"group,omitempty"`
	Label string `json:"label,omitempty"`
	Unit  string `json:"unit,omitempty"`
	Help  string `json:"help,omitempty"`
	// Check validates and normalises a SettingObject value: it returns
	// the normalised value, or the reasons per field (keyed by the
	// field's name inside the object) when it is refused.
	Check func(v any) (any, map[string]string) `json:"-"`
}

// Settings scopes.
const (
	ScopeFree = "general"
	ScopePro  = "pro"
	// ScopeBridge holds the directives the service writes for the
	// WordPress bridge (adapters/wordpress/bridge, a must-use plugin
	// that reads them from the shared settings table): what the bridge
	// does with a wp_mail() call besides queueing it. Only the service
	// writes it, from whatever decides the directive (a module's
	// settings); no user edits it. Its keys are the Bridge... constants.
	ScopeBridge = "bridge"
)

// BridgeExcludedSources is the key in ScopeBridge listing the message
// sources (plugin slugs, theme:<slug>) whose wp_mail() calls the bridge
// leaves to WordPress's own mailer rather than queueing them: a JSON list
// of strings. Absent, empty or not a list: nothing is excluded.
const BridgeExcludedSources = "excluded_sources"

// SettingGroup is a heading of the Settings screen: the settings of one
// purpose.
type SettingGroup struct {
	Slug  string `json:"slug"`
	Title string `json:"title"`
	Help  string `json:"help,omitempty"`
}

// Setting groups of FreeSettings, in the order the screen shows them.
var SettingGroups = []SettingGroup{
	{Slug: "sending", Title: "Sending", Help: "Who mail is from and how a doubtful send is settled."},
	{Slug: "log", Title: "Email log", Help: "What is kept of every email this site sends."},
	{Slug: "alerts", Title: "Alerts and reports", Help: "Alert channels (email, Slack, SMS, …) are set on the Alerts screen. The summary email, weekly by default, is set below."},
	{Slug: "health", Title: "Health and OAuth", Help: "The scheduled checks of the connections and their OAuth tokens."},
	{Slug: "staging", Title: "Staging", Help: "For a copy of this site: hold its mail rather than send it."},
	{Slug: "flood", Title: "Flood guard", Help: "When a plugin or WordPress itself suddenly sends far more mail than usual: alert, and hold the excess until you release or discard it on the Email logs screen."},
}

// FreeSettings are the keys of the spec's "Settings (free)", with the
// defaults and bounds of its Limits part. log_retention_days defaults to
// 90 (0 keeps logs forever); the choice is recorded in docs/configuration.md.
var FreeSettings = []SettingDef{
	{Key: "from_email", Type: SettingEmail, Default: "", Group: "sending", Label: "From email",
		Help: "Replaces WordPress's default sender (wordpress@…). A plugin's own sender is kept unless a connection's \"Force from\" is on. Empty: WordPress's default."},
	{Key: "from_name", Type: SettingString, Default: "", Group: "sending", Label: "From name",
		Help: "Replaces the sender name \"WordPress\". Empty: WordPress's default."},
	{Key: "default_connection_id", Type: SettingConnRef, Default: nil, Group: "sending", Label: "Default connection",
		Help: "Chosen on the Connections screen."},
	{Key: "fallback_connection_id", Type: SettingConnRef, Default: nil, Group: "sending", Label: "Fallback connection",
		Help: "Chosen on the Connections screen: sends when the default connection fails."},
	{Key: "simulation_enabled", Type: SettingBool, Default: false, Group: "staging", Label: "Hold all mail (simulation)",
		Help: "Off by default. On: nothing is sent, every email is logged as held, except to the addresses below."},
	{Key: "log_emails", Type: SettingBool, Default: true, Group: "log", Label: "Keep a log of every email", Help: "On by default."},
	{Key: "log_retention_days", Type: SettingInt, Default: int64(90), Min: Int64(0), Max: Int64(3650),
		Group: "log", Label: "Keep logs for", Unit: "days", Help: "0 keeps them forever. Default 90."},
	// The log body modes (docs/logs.md): what the log keeps of a body once
	// the message is final, per source, and whether attachments' bytes
	// are kept in redacted mode.
	{Key: "log_body", Type: SettingString, Default: LogBodyRedacted, Enum: LogBodyModes,
		Group: "log", Label: "What the log keeps of a message"},
	{Key: "log_body_sources", Type: SettingStringMap, Default: map[string]any{}, Enum: LogBodyModes,
		Group: "log", Label: "Per source"},
	{Key: "log_attachments", Type: SettingBool, Default: false, Group: "log", Label: "Keep attachments in the log",
		Help: "Off by default: only their names and sizes are kept."},
	{Key: "health_check_enabled", Type: SettingBool, Default: true, Group: "health", Label: "Check connections regularly",
		Help: "On by default: each connection's health is checked on a schedule as well as by its real sends."},
	{Key: "health_check_interval", Type: SettingInt, Default: int64(15), Min: Int64(1), Max: Int64(1440),
		Group: "health", Label: "Check every", Unit: "minutes", Help: "Default 15."},
	{Key: "oauth_refresh_enabled", Type: SettingBool, Default: true, Group: "health", Label: "Renew OAuth tokens before they expire",
		Help: "On by default, for Gmail, Microsoft 365 and Zoho connections."},
	{Key: "oauth_refresh_interval", Type: SettingInt, Default: int64(15), Min: Int64(1), Max: Int64(1440),
		Group: "health", Label: "Look for expiring tokens every", Unit: "minutes", Help: "Default 15."},
	{Key: "oauth_refresh_max_retries", Type: SettingInt, Default: int64(3), Min: Int64(1), Max: Int64(10),
		Group: "health", Label: "Tries before a renewal counts as failed", Unit: "tries", Help: "Default 3; then an alert is sent."},
	// uncertain_grace_minutes is how long a message whose attempt was
	// uncertain waits before it is looked up at the provider and, when
	// not found, sent again (docs/delivery.md "Uncertain attempts").
	{Key: "uncertain_grace_minutes", Type: SettingInt, Default: int64(10), Min: Int64(1), Max: Int64(1440),
		Group: "sending", Label: "Wait before checking a doubtful send", Unit: "minutes",
		Help: "When a provider did not answer whether it took a message, look it up after this long and send it again only if the provider does not have it. Default 10."},
	// summary_report is the periodic summary email (docs/reports.md).
	{Key: SummaryReportKey, Type: SettingObject, Default: SummaryReportDefault(), Check: CheckSummaryReport,
		Group: "alerts", Label: "Summary email", Help: "Weekly to the site's admin email by default; off stops it."},
	// capture_allow_list: the addresses and domains still delivered while
	// the staging guard captures mail (docs/staging.md).
	{Key: "capture_allow_list", Type: SettingAddressList, Default: []any{}, Group: "staging", Label: "Still deliver to"},
	// The flood guard's switch, thresholds and per-source policies
	// (docs/delivery.md "The flood guard").
	{Key: floodEnabledKey, Type: SettingBool, Default: true, Group: floodSettingsGroup, Label: "Hold floods of mail",
		Help: "On by default: a source sending far more than it usually does is alerted on, and its excess held."},
	{Key: floodVolumeMultiplierKey, Type: SettingInt, Default: int64(DefaultFloodVolumeMultiplier), Min: Int64(2), Max: Int64(1000),
		Group: floodSettingsGroup, Label: "A flood is more than", Unit: "times a source's usual hourly volume",
		Help: "Default 10."},
	{Key: floodVolumeFloorKey, Type: SettingInt, Default: int64(DefaultFloodVolumeFloor), Min: Int64(1), Max: Int64(1000000),
		Group: floodSettingsGroup, Label: "and more than", Unit: "messages an hour",
		Help: "Default 50: a source that usually sends little may still send this many in an hour."},
	{Key: floodRecipientsKey, Type: SettingInt, Default: int64(DefaultFloodRecipients), Min: Int64(2), Max: Int64(1000000),
		Group: floodSettingsGroup, Label: "One message to more than", Unit: "recipients",
		Help: "Default 50: the same subject and body sent to more different recipients than this is a flood."},
	{Key: floodRecipientsMinutesKey, Type: SettingInt, Default: int64(DefaultFloodRecipientsMinutes), Min: Int64(1), Max: Int64(1440),
		Group: floodSettingsGroup, Label: "within", Unit: "minutes", Help: "Default 10."},
	{Key: floodSourcesKey, Type: SettingStringMap, Default: map[string]any{}, Enum: FloodPolicies,
		Group: floodSettingsGroup, Label: "Per source",
		Help: "hold, alert or trusted. By default WordPress's own mail is held, other sources are alerted on, and one message to many is held for every source."},
}

// SettingsDefaults returns a scope's defaults as a map.
func SettingsDefaults(defs []SettingDef) map[string]any {
	out := make(map[string]any, len(defs))
	for _, d := range defs {
		if m, ok := d.Default.(map[string]any); ok {
			out[d.Key] = maps.Clone(m)
			continue
		}
		if l, ok := d.Default.([]any); ok {
			out[d.Key] = slices.Clone(l)
			continue
		}
		out[d.Key] = d.Default
	}
	return out
}

// ValidateSettingsPatch checks a partial update against defs. It returns the
// normalised values (integers as int64, connection references as int64 or
// nil) or a validation error naming each bad field, unknown keys included.
func ValidateSettingsPatch(defs []SettingDef, patch map[string]any) (map[string]any, error) {
	byKey := make(map[string]*SettingDef, len(defs))
	for i := range defs {
		byKey[defs[i].Key] = &defs[i]
	}
	out := make(map[string]any, len(patch))
	fields := map[string]string{}
	for k, v := range patch {
		d, ok := byKey[k]
		if !ok {
			fields[k] = "Unknown setting."
			continue
		}
		if d.Type == SettingObject && d.Check != nil {
			norm, errs := d.Check(v)
			for f, msg := range errs {
				if f == "" {
					fields[k] = msg
				} else {
					fields[k+"."+f] = msg
				}
			}
			if len(errs) == 0 {
				out[k] = norm
			}
			continue
		}
		norm, msg := d.check(v)
		if msg != "" {
			fields[k] = msg
			continue
		}
		out[k] = norm
	}
	if err := Invalid(fields); err != nil {
		return nil, err
	}
	return out, nil
}

func (d *SettingDef) check(v any) (any, string) {
	switch d.Type {
	case SettingString:
		s, ok := v.(string)
		if !ok {
			return nil, "Must be a string."
		}
		if len(s) > 1024 {
			return nil, "Too long."
		}
		if len(d.Enum) > 0 && !slices.Contains(d.Enum, s) {
			return nil, "Must be one of: " + strings.Join(d.Enum, ", ") + "."
		}
		return s, ""
	case SettingStringMap:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, "Must be an object of names to values."
		}
		if len(m) > 200 {
			return nil, "At most 200 entries."
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			s, ok := e.(string)
			switch {
			case strings.TrimSpace(k) == "" || len(k) > 191:
				return nil, "Every name must have 1 to 191 characters."
			case !ok:
				return nil, fmt.Sprintf("The value of %q must be a string.", k)
			case len(d.Enum) > 0 && !slices.Contains(d.Enum, s):
				return nil, fmt.Sprintf("The value of %q must be one of: %s.", k, strings.Join(d.Enum, ", "))
			}
			out[k] = s
		}
		return out, ""
	case SettingAddressList:
		list, ok := v.([]any)
		if !ok {
			return nil, "Must be a list of email addresses and domains."
		}
		if len(list) > 200 {
			return nil, "At most 200 entries."
		}
		out := make([]any, 0, len(list))
		for _, e := range list {
			s, ok := e.(string)
			if !ok || !ValidAllowListEntry(s) {
				return nil, fmt.Sprintf("%v is not an email address or a domain.", e)
			}
			out = append(out, strings.ToLower(strings.TrimSpace(s)))
		}
		return out, ""
	case SettingEmail:
		s, ok := v.(string)
		if !ok {
			return nil, "Must be a string."
		}
		if s != "" && !ValidEmail(s) {
			return nil, "Must be a valid email address."
		}
		return s, ""
	case SettingBool:
		b, ok := v.(bool)
		if !ok {
			return nil, "Must be true or false."
		}
		return b, ""
	case SettingConnRef:
		if v == nil {
			return nil, ""
		}
		n, ok := AsInt(v)
		if !ok || n < 0 {
			return nil, "Must be a connection id or null."
		}
		if n == 0 {
			return nil, ""
		}
		return n, ""
	case SettingInt:
		n, ok := AsInt(v)
		if !ok {
			return nil, "Must be a whole number."
		}
		if d.Min != nil && n < *d.Min || d.Max != nil && n > *d.Max {
			return nil, fmt.Sprintf("Must be between %d and %d.", *d.Min, *d.Max)
		}
		return n, ""
	}
	return nil, "Unsupported setting type."
}

// SettingsStore persists settings scopes as key → JSON value.
type SettingsStore interface {
	// LoadSettings returns every stored key of a scope (absent keys are not
	// in the map; the caller applies defaults).
	LoadSettings(ctx context.Context, scope string) (map[string]any, error)
	// SaveSettings upserts the given keys of a scope in one transaction;
	// other keys are left as they are.
	SaveSettings(ctx context.Context, scope string, values map[string]any) error
}
