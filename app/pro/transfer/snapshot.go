// Package transfer exports the site's mail configuration as a versioned
// snapshot without secrets, and imports such a snapshot: a preview that
// lists conflicts and skipped records and writes nothing, and an import
// that applies the user's resolution of each conflict in one database
// transaction.
package transfer

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Version is the snapshot format this package writes and reads.
const Version = 1

// Section names of a snapshot.
const (
	SectionConnections = "connections"
	SectionSettings    = "settings"
	SectionProSettings = "pro_settings"
	// SectionEmailControls is the email controls scope
	// (core.ScopeEmailControls): which WordPress core emails are off.
	SectionEmailControls = "email_controls"
	SectionAlertChannels = "alert_channels"
	SectionSenderGroups  = "sender_groups"
	SectionRoutingRules  = "routing_rules"
)

// Item is one exported record as a JSON object. Every item has "id" and
// "name"; a record with secrets has each secret key present with a null
// value and lists them in "secrets_omitted".
type Item = map[string]any

// KeySecretsOmitted lists, on an item, the secret settings left out.
const KeySecretsOmitted = "secrets_omitted"

// Snapshot is an export: the free and Pro settings, and the lists of
// records of every section (connections, alert channels, and the
// sections other Pro packages register). Its JSON form is one object:
// version, exported_at, site, settings, pro_settings and one key per
// section.
type Snapshot struct {
	Version     int
	ExportedAt  time.Time
	Site        string
	Settings    map[string]any
	ProSettings map[string]any
	// EmailControls holds the stored email controls (kind → false when
	// switched off, true when switched back on).
	EmailControls map[string]any
	// Sections holds the records by section name (connections,
	// alert_channels, sender_groups, routing_rules, ...); a section
	// without records is an empty list.
	Sections map[string][]Item
	// SettingsOmitted lists secret keys of Settings left out.
	SettingsOmitted []string
}

// MarshalJSON writes the snapshot as one flat object.
func (s *Snapshot) MarshalJSON() ([]byte, error) {
	out := map[string]any{
		"version":            s.Version,
		"exported_at":        s.ExportedAt.UTC().Format(time.RFC3339),
		"site":               s.Site,
		SectionSettings:      nonNilMap(s.Settings),
		SectionProSettings:   nonNilMap(s.ProSettings),
		SectionEmailControls: nonNilMap(s.EmailControls),
	}
	if len(s.SettingsOmitted) > 0 {
		out["settings_secrets_omitted"] = s.SettingsOmitted
	}
	for name, items := range s.Sections {
		if items == nil {
			items = []Item{}
		}
		out[name] = items
	}
	return json.Marshal(out)
}

// headerKeys are the snapshot keys that are not sections.
var headerKeys = map[string]bool{
	"version": true, "exported_at": true, "site": true,
	SectionSettings: true, SectionProSettings: true, SectionEmailControls: true, "settings_secrets_omitted": true,
}

// ParseSnapshot reads a snapshot from JSON. A body that is not a JSON
// object, has no or another version, or a section that is not a list of
// objects is a validation error naming the field (under "data").
func ParseSnapshot(data []byte) (*Snapshot, error) {
	var raw map[string]json.RawMessage
	if len(data) == 0 || string(data) == "null" {
		return nil, core.InvalidField("data", "This field is required: the exported snapshot.")
	}
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return nil, core.InvalidField("data", "Must be the JSON object an export returned.")
	}
	var version json.Number
	if v, ok := raw["version"]; !ok || json.Unmarshal(v, &version) != nil {
		return nil, core.InvalidField("data.version", "Missing or not a number: this is not a mailsvc export.")
	}
	if version.String() != fmt.Sprint(Version) {
		return nil, core.InvalidField("data.version", fmt.Sprintf("Version %s is not supported; this service reads version %d.", version, Version))
	}
	s := &Snapshot{Version: Version, Sections: map[string][]Item{}}
	if v, ok := raw["site"]; ok {
		_ = json.Unmarshal(v, &s.Site)
	}
	if v, ok := raw["exported_at"]; ok {
		var at string
		if json.Unmarshal(v, &at) == nil {
			s.ExportedAt, _ = time.Parse(time.RFC3339, at)
		}
	}
	for key, dst := range map[string]*map[string]any{SectionSettings: &s.Settings, SectionProSettings: &s.ProSettings, SectionEmailControls: &s.EmailControls} {
		v, ok := raw[key]
		if !ok || string(v) == "null" {
			continue
		}
		m, ok := decode(v).(map[string]any)
		if !ok {
			return nil, core.InvalidField("data."+key, "Must be an object of settings.")
		}
		*dst = m
	}
	for key, v := range raw {
		if headerKeys[key] || string(v) == "null" {
			continue
		}
		list, ok := decode(v).([]any)
		if !ok {
			return nil, core.InvalidField("data."+key, "Must be a list of objects.")
		}
		items := make([]Item, len(list))
		for i, x := range list {
			if items[i], ok = x.(map[string]any); !ok {
				return nil, core.InvalidField(fmt.Sprintf("data.%s.%d", key, i), "Must be an object.")
			}
		}
		s.Sections[key] = items
	}
	return s, nil
}

// decode decodes JSON with integral numbers as int64 (nil when it is not
// JSON).
func decode(data []byte) any {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil
	}
	return normalize(v)
}

// normalize turns integral numbers into int64, recursively, as the store
// gives them back.
func normalize(v any) any {
	switch x := v.(type) {
	case float64:
		if n, ok := core.AsInt(x); ok {
			return n
		}
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
