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
// bounds.
type SettingDef struct {
	Key     string `json:"key"`
	Type    string `json:"type"`
	Default any    `json:"default"`
	Min     *int64 `json:"min,omitempty"`
	Max     *int64 `json:"max,omitempty"`
	// Enum, when set, lists the allowed values of a string (or of each
	// value of a string map).
	Enum []string `json:"enum,omitempty"`
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

// FreeSettings are the keys of the spec's "Settings (free)", with the
// defaults and bounds of its Limits part. log_retention_days defaults to
// 90 (0 keeps logs forever); the choice is recorded in docs/configuration.md.
var FreeSettings = []SettingDef{
	{Key: "from_email", Type: SettingEmail, Default: ""},
	{Key: "from_name", Type: SettingString, Default: ""},
	{Key: "default_connection_id", Type: SettingConnRef, Default: nil},
	{Key: "fallback_connection_id", Type: SettingConnRef, Default: nil},
	{Key: "simulation_enabled", Type: SettingBool, Default: false},
	{Key: "log_emails", Type: SettingBool, Default: true},
	{Key: "log_retention_days", Type: SettingInt, Default: int64(90), Min: Int64(0), Max: Int64(3650)},
	// The log body modes (docs/logs.md): what the log keeps of a body once
	// the message is final, per source, and whether attachments' bytes
	// are kept in redacted mode.
	{Key: "log_body", Type: SettingString, Default: LogBodyRedacted, Enum: LogBodyModes},
	{Key: "log_body_sources", Type: SettingStringMap, Default: map[string]any{}, Enum: LogBodyModes},
	{Key: "log_attachments", Type: SettingBool, Default: false},
	{Key: "health_check_enabled", Type: SettingBool, Default: true},
	{Key: "health_check_interval", Type: SettingInt, Default: int64(15), Min: Int64(1), Max: Int64(1440)},
	{Key: "oauth_refresh_enabled", Type: SettingBool, Default: true},
	{Key: "oauth_refresh_interval", Type: SettingInt, Default: int64(15), Min: Int64(1), Max: Int64(1440)},
	{Key: "oauth_refresh_max_retries", Type: SettingInt, Default: int64(3), Min: Int64(1), Max: Int64(10)},
	// uncertain_grace_minutes is how long a message whose attempt was
	// uncertain waits before it is looked up at the provider and, when
	// not found, sent again (docs/delivery.md "Uncertain attempts").
	{Key: "uncertain_grace_minutes", Type: SettingInt, Default: int64(10), Min: Int64(1), Max: Int64(1440)},
	// summary_report is the periodic summary email (docs/reports.md).
	{Key: SummaryReportKey, Type: SettingObject, Default: SummaryReportDefault(), Check: CheckSummaryReport},
	// capture_allow_list: the addresses and domains still delivered while
	// the staging guard captures mail (docs/staging.md).
	{Key: "capture_allow_list", Type: SettingAddressList, Default: []any{}},
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
