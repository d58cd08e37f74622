package transfer

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/core"
)

// Conflict is an imported record that matches an existing one (same
// name, else same id) with differing fields, or a settings scope whose
// stored values differ from the file's. Key is what Import's resolutions
// name it by.
type Conflict struct {
	Key        string   `json:"key"`
	Section    string   `json:"section"`
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	ExistingID int64    `json:"existing_id,omitempty"`
	Fields     []string `json:"fields"`
}

// Skipped is a record or setting of the file that is not imported, and
// why.
type Skipped struct {
	Section string `json:"section"`
	ID      int64  `json:"id,omitempty"`
	Name    string `json:"name"`
	Reason  string `json:"reason"`
}

// Record names one record of the file and, when it matched one, the
// existing record. A replaced connection that the import left without
// secrets it needs (the file moved it to another server) has a Status,
// StatusNeedsPassword or needs_authorization, and the Missing secrets.
type Record struct {
	Section    string   `json:"section"`
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	ExistingID int64    `json:"existing_id,omitempty"`
	Status     string   `json:"status,omitempty"`
	Missing    []string `json:"missing,omitempty"`
}

// Preview is what an import would meet: the conflicts to resolve and the
// records it would skip.
type Preview struct {
	Conflicts []Conflict `json:"conflicts"`
	Skipped   []Skipped  `json:"skipped"`
}

// Resolutions of a conflict.
const (
	ResolveKeep    = "keep"    // leave the existing record as it is
	ResolveReplace = "replace" // overwrite it with the file's (secrets kept unless it moves)
	ResolveNew     = "new"     // import the file's record as a new one
)

// step is one record of the file to import.
type step struct {
	section  Section
	item     Item
	id       int64
	name     string
	key      string
	existing int64    // the matched record, 0 for none
	fields   []string // differing fields of a match; empty: identical
}

// scopePlan is one settings scope of the file.
type scopePlan struct {
	section  string
	scope    string
	values   map[string]any
	conflict []string
}

type plan struct {
	steps     []step
	scopes    []scopePlan
	skipped   []Skipped
	conflicts []Conflict
}

// singletonKey is the resolutions key of a settings scope.
func singletonKey(section string) string { return section }

// makePlan matches the file's records with st's and lists conflicts and
// skipped records.
func (s *Service) makePlan(ctx context.Context, st Store, snap *Snapshot) (*plan, error) {
	p := &plan{skipped: []Skipped{}, conflicts: []Conflict{}}
	known := map[string]bool{}
	predicted := Refs{} // snapshot id → existing id, or -1 for a new record
	for _, sec := range s.sections() {
		known[sec.Name()] = true
		items := snap.Sections[sec.Name()]
		if len(items) == 0 {
			continue
		}
		existing, err := sec.Export(ctx, st)
		if err != nil {
			return nil, err
		}
		used := map[int64]bool{}
		for i, item := range items {
			id, _ := core.AsInt(item["id"])
			name, _ := item["name"].(string)
			name = strings.TrimSpace(name)
			if reason := sec.Check(item); reason != "" {
				p.skipped = append(p.skipped, Skipped{Section: sec.Name(), ID: id, Name: name, Reason: reason})
				continue
			}
			st := step{section: sec, item: item, id: id, name: name, key: recordKey(sec.Name(), id, i)}
			if m := match(existing, used, name, id); m != nil {
				st.existing, _ = core.AsInt(m["id"])
				used[st.existing] = true
				st.fields = diff(m, item)
				if len(st.fields) > 0 {
					p.conflicts = append(p.conflicts, Conflict{Key: st.key, Section: sec.Name(), ID: id, Name: name,
						ExistingID: st.existing, Fields: st.fields})
				}
				predicted.set(sec.Name(), id, st.existing)
			} else {
				predicted.set(sec.Name(), id, -1)
			}
			p.steps = append(p.steps, st)
		}
	}
	for name, items := range snap.Sections {
		if known[name] {
			continue
		}
		for _, item := range items {
			id, _ := core.AsInt(item["id"])
			n, _ := item["name"].(string)
			p.skipped = append(p.skipped, Skipped{Section: name, ID: id, Name: n,
				Reason: fmt.Sprintf("This service cannot import %s.", strings.ReplaceAll(name, "_", " "))})
		}
	}
	for _, sc := range []struct {
		section, scope string
		values         map[string]any
	}{{SectionSettings, core.ScopeFree, snap.Settings}, {SectionProSettings, core.ScopePro, snap.ProSettings},
		{SectionEmailControls, core.ScopeEmailControls, snap.EmailControls}} {
		sp, err := s.planScope(ctx, st, sc.section, sc.scope, sc.values, predicted, p)
		if err != nil {
			return nil, err
		}
		if sp != nil {
			p.scopes = append(p.scopes, *sp)
		}
	}
	sort.SliceStable(p.skipped, func(i, j int) bool { return p.skipped[i].Section < p.skipped[j].Section })
	return p, nil
}

// planScope validates a settings scope of the file key by key (a bad key
// is skipped) and compares it with the stored values.
func (s *Service) planScope(ctx context.Context, st Store, section, scope string, values map[string]any, refs Refs, p *plan) (*scopePlan, error) {
	if len(values) == 0 {
		return nil, nil
	}
	stored, err := st.LoadSettings(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("read %s settings: %w", scope, err)
	}
	sp := &scopePlan{section: section, scope: scope, values: map[string]any{}}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var norm map[string]any
		var err error
		switch scope {
		case core.ScopePro:
			norm, err = pro.CheckSettings(map[string]any{k: values[k]})
		case core.ScopeEmailControls:
			norm, err = checkEmailControl(k, values[k])
		default:
			norm, err = core.ValidateSettingsPatch(core.FreeSettings, map[string]any{k: values[k]})
		}
		if err != nil {
			p.skipped = append(p.skipped, Skipped{Section: section, Name: k, Reason: core.ErrorFields(err)[k]})
			continue
		}
		v := norm[k]
		if ref, isRef := connectionRef(scope, k, v); isRef {
			to, ok := refs.Lookup(SectionConnections, ref)
			switch {
			case !ok && k == core.SummaryReportKey:
				// The rest of the report's setting is imported; it goes
				// through the default connection.
				p.skipped = append(p.skipped, Skipped{Section: section, Name: k + ".connection_id",
					Reason: fmt.Sprintf("Connection %d is not imported; the report goes through the default connection.", ref)})
				norm[k] = withConnection(k, v, 0)
				v = norm[k]
			case !ok:
				p.skipped = append(p.skipped, Skipped{Section: section, Name: k,
					Reason: fmt.Sprintf("Connection %d is not imported.", ref)})
				continue
			case to > 0:
				v = withConnection(k, v, to)
			default:
				v = withConnection(k, v, -1) // a new connection: differs from anything stored
			}
		}
		sp.values[k] = norm[k]
		if old, ok := stored[k]; ok && !equalValues(normalize(old), v) {
			sp.conflict = append(sp.conflict, k)
		}
	}
	if len(sp.conflict) > 0 {
		p.conflicts = append(p.conflicts, Conflict{Key: singletonKey(section), Section: section, Name: section, Fields: sp.conflict})
	}
	return sp, nil
}

// connectionRef reports whether a setting names a connection, and which:
// default_connection_id, fallback_connection_id, and the connection_id of
// summary_report (when set; null there is the default connection).
func connectionRef(scope, key string, v any) (int64, bool) {
	if scope != core.ScopeFree {
		return 0, false
	}
	switch key {
	case "default_connection_id", "fallback_connection_id":
		id, ok := v.(int64)
		return id, ok
	case core.SummaryReportKey:
		m, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		id, ok := core.AsInt(m["connection_id"])
		return id, ok && id > 0
	}
	return 0, false
}

// withConnection returns the value of setting key naming connection id
// instead of the one it names: id itself, or for summary_report a copy
// whose connection_id is id (null when id is 0).
func withConnection(key string, v any, id int64) any {
	m, ok := v.(map[string]any)
	if key != core.SummaryReportKey || !ok {
		return id
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = e
	}
	out["connection_id"] = id
	if id == 0 {
		out["connection_id"] = nil
	}
	return out
}

// checkEmailControl validates one key of the email controls scope: a
// known kind, true or false (as PUT /settings/email-controls).
func checkEmailControl(kind string, v any) (map[string]any, error) {
	if !core.EmailControlKnown(kind) {
		return nil, core.InvalidField(kind, "Unknown email kind.")
	}
	b, ok := v.(bool)
	if !ok {
		return nil, core.InvalidField(kind, "Must be true or false.")
	}
	return map[string]any{kind: b}, nil
}

// recordKey is the resolutions key of a record: section:id, or
// section:#index for a record without an id.
func recordKey(section string, id int64, index int) string {
	if id > 0 {
		return section + ":" + strconv.FormatInt(id, 10)
	}
	return fmt.Sprintf("%s:#%d", section, index)
}

// match returns the existing record with the item's name, else the one
// with its id, skipping those already matched.
func match(existing []Item, used map[int64]bool, name string, id int64) Item {
	for _, e := range existing {
		eid, _ := core.AsInt(e["id"])
		if n, _ := e["name"].(string); n == name && !used[eid] {
			return e
		}
	}
	if id > 0 {
		for _, e := range existing {
			if eid, _ := core.AsInt(e["id"]); eid == id && !used[eid] {
				return e
			}
		}
	}
	return nil
}

// diff lists the fields in which an imported item differs from an
// existing one (both in exported form): top-level keys, and settings.<key>
// for settings. Ids, secrets and token expiries are not compared.
func diff(existing, item Item) []string {
	var out []string
	keys := map[string]bool{}
	for k := range existing {
		keys[k] = true
	}
	for k := range item {
		keys[k] = true
	}
	for k := range keys {
		switch k {
		case "id", KeySecretsOmitted:
			continue
		case "settings":
			out = append(out, settingsDiff(existing, item)...)
			continue
		}
		if !equalValues(normalize(toJSONShape(existing[k])), normalize(toJSONShape(item[k]))) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func settingsDiff(existing, item Item) []string {
	a, _ := toJSONShape(existing["settings"]).(map[string]any)
	b, _ := toJSONShape(item["settings"]).(map[string]any)
	secret := map[string]bool{core.KeyTokenExpiry: true}
	for _, k := range append(omittedKeys(existing), omittedKeys(item)...) {
		secret[k] = true
	}
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if secret[k] {
			continue
		}
		if !equalValues(normalize(a[k]), normalize(b[k])) {
			out = append(out, "settings."+k)
		}
	}
	return out
}

// toJSONShape turns typed values ([]string, core.Settings) into the shapes
// JSON decoding gives, so an exported item compares with a parsed one.
func toJSONShape(v any) any {
	switch x := v.(type) {
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	case core.Settings:
		return map[string]any(x)
	case int:
		return int64(x)
	}
	return v
}

func equalValues(a, b any) bool {
	return reflect.DeepEqual(toJSONShape(a), toJSONShape(b))
}
