package transfer

import (
	"context"
	"fmt"
	"strings"

	"github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/core"
)

// Result is what an import did: per section the records written (created
// or replaced; for settings, the keys written), the conflicts kept, the
// records replaced, those identical to what exists, and the skipped ones.
type Result struct {
	Counts    map[string]int `json:"counts"`
	Kept      []Record       `json:"kept"`
	Replaced  []Record       `json:"replaced"`
	Unchanged []Record       `json:"unchanged"`
	Skipped   []Skipped      `json:"skipped"`
}

// Preview parses data (a snapshot) and returns its conflicts with the
// current records and what would be skipped. It writes nothing. A data
// that is not a snapshot of a supported version is a validation error.
func (s *Service) Preview(ctx context.Context, data []byte) (*Preview, error) {
	snap, err := ParseSnapshot(data)
	if err != nil {
		return nil, err
	}
	p, err := s.makePlan(ctx, s.Store, snap)
	if err != nil {
		return nil, err
	}
	return &Preview{Conflicts: p.conflicts, Skipped: p.skipped}, nil
}

// Import applies data (a snapshot) in one transaction. resolutions names,
// by each conflict's key, keep, replace or new (new is not allowed for
// settings); an unresolved conflict, an unknown key or value is a
// validation error and nothing is written. Records without conflict are
// created, or left as they are when identical to the existing one.
// Connection ids that settings and other sections refer to are mapped to
// the imported records. If any write fails, nothing is written.
func (s *Service) Import(ctx context.Context, data []byte, resolutions map[string]string) (*Result, error) {
	snap, err := ParseSnapshot(data)
	if err != nil {
		return nil, err
	}
	var res *Result
	err = s.Tx.InTransaction(ctx, func(tx Store) error {
		// The bridge follows imported Pro settings in this transaction,
		// as it follows PUT /pro/settings: the directive's row is taken
		// before the plan reads, and written from the settings as they
		// end.
		withPro := len(snap.ProSettings) > 0
		if withPro {
			if err := pro.LockBridgeDirective(ctx, tx); err != nil {
				return err
			}
		}
		p, err := s.makePlan(ctx, tx, snap)
		if err != nil {
			return err
		}
		if err := checkResolutions(p, resolutions); err != nil {
			return err
		}
		if res, err = s.apply(ctx, tx, p, resolutions); err != nil {
			return err
		}
		if withPro {
			return pro.WriteBridgeDirective(ctx, tx, true)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// checkResolutions refuses unknown keys and values, new for a settings
// scope, and unresolved conflicts.
func checkResolutions(p *plan, resolutions map[string]string) error {
	fields := map[string]string{}
	conflicts := map[string]Conflict{}
	for _, c := range p.conflicts {
		conflicts[c.Key] = c
	}
	for key, v := range resolutions {
		c, ok := conflicts[key]
		switch {
		case !ok:
			fields["resolutions."+key] = "There is no such conflict in this import."
		case v != ResolveKeep && v != ResolveReplace && v != ResolveNew:
			fields["resolutions."+key] = "Must be keep, replace or new."
		case v == ResolveNew && c.ID == 0 && c.ExistingID == 0:
			fields["resolutions."+key] = "Settings can only be kept or replaced."
		}
	}
	for key, c := range conflicts {
		if _, ok := resolutions[key]; !ok {
			fields["resolutions."+key] = fmt.Sprintf("Resolve the conflict with %s %q (%s): keep, replace or new.",
				strings.TrimSuffix(strings.ReplaceAll(c.Section, "_", " "), "s"), c.Name, strings.Join(c.Fields, ", "))
		}
	}
	return core.Invalid(fields)
}

// apply writes the plan with the resolutions.
func (s *Service) apply(ctx context.Context, tx Store, p *plan, resolutions map[string]string) (*Result, error) {
	res := &Result{Counts: map[string]int{}, Kept: []Record{}, Replaced: []Record{}, Unchanged: []Record{}, Skipped: p.skipped}
	refs := Refs{}
	names := map[string]map[string]bool{} // section → names in use
	for _, st := range p.steps {
		sec := st.section.Name()
		if _, ok := res.Counts[sec]; !ok {
			res.Counts[sec] = 0
		}
		rec := Record{Section: sec, ID: st.id, Name: st.name, ExistingID: st.existing}
		existing, name := int64(0), st.name
		switch {
		case st.existing > 0 && len(st.fields) == 0:
			res.Unchanged = append(res.Unchanged, rec)
			refs.set(sec, st.id, st.existing)
			continue
		case st.existing > 0 && resolutions[st.key] == ResolveKeep:
			res.Kept = append(res.Kept, rec)
			refs.set(sec, st.id, st.existing)
			continue
		case st.existing > 0 && resolutions[st.key] == ResolveReplace:
			existing = st.existing
		case st.existing > 0: // new
			taken, err := s.namesInUse(ctx, tx, st.section, names)
			if err != nil {
				return nil, err
			}
			name = freeName(name, taken)
		}
		var id int64
		var err error
		if cs, ok := st.section.(connectionSection); ok {
			id, rec.Status, rec.Missing, err = cs.write(ctx, tx, st.item, existing, name)
		} else {
			id, err = st.section.Apply(ctx, tx, st.item, existing, name, refs)
		}
		if err != nil {
			return nil, err
		}
		if names[sec] != nil {
			names[sec][name] = true
		}
		refs.set(sec, st.id, id)
		res.Counts[sec]++
		if existing > 0 {
			res.Replaced = append(res.Replaced, rec)
		}
	}
	for _, sp := range p.scopes {
		values := map[string]any{}
		rec := Record{Section: sp.section, Name: sp.section}
		if len(sp.conflict) > 0 && resolutions[singletonKey(sp.section)] == ResolveKeep {
			res.Kept = append(res.Kept, rec)
			res.Counts[sp.section] = 0
			continue
		}
		for k, v := range sp.values {
			if ref, isRef := connectionRef(sp.scope, k, v); isRef {
				to, ok := refs.Lookup(SectionConnections, ref)
				if !ok {
					continue
				}
				v = withConnection(k, v, to)
			}
			values[k] = v
		}
		if err := tx.SaveSettings(ctx, sp.scope, values); err != nil {
			return nil, fmt.Errorf("import %s: %w", sp.section, err)
		}
		res.Counts[sp.section] = len(values)
		if len(sp.conflict) > 0 {
			res.Replaced = append(res.Replaced, rec)
		}
	}
	return res, nil
}

// namesInUse returns the names of a section's records (read once per
// import, then kept up to date by apply).
func (s *Service) namesInUse(ctx context.Context, tx Store, sec Section, cache map[string]map[string]bool) (map[string]bool, error) {
	if m, ok := cache[sec.Name()]; ok {
		return m, nil
	}
	items, err := sec.Export(ctx, tx)
	if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, it := range items {
		if n, ok := it["name"].(string); ok {
			m[n] = true
		}
	}
	cache[sec.Name()] = m
	return m, nil
}

// freeName returns name, or name (imported), name (imported 2), ... the
// first that is not taken.
func freeName(name string, taken map[string]bool) string {
	if !taken[name] {
		return name
	}
	for i := 1; ; i++ {
		n := name + " (imported)"
		if i > 1 {
			n = fmt.Sprintf("%s (imported %d)", name, i)
		}
		if !taken[n] {
			return n
		}
	}
}
