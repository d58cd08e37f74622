package transfer

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// Section is one list of records in a snapshot. Connections and alert
// channels are built in; other Pro packages (sender groups, routing
// rules) add theirs with RegisterSection, with no change here.
type Section interface {
	// Name is the snapshot key of the section, e.g. "sender_groups".
	Name() string
	// Export returns the section's records, each an Item with "id" and
	// "name", secrets left out (present as null and listed in
	// "secrets_omitted"). Import compares items in this form, so Export
	// must be deterministic.
	Export(ctx context.Context, st Store) ([]Item, error)
	// Check returns why an imported item cannot be imported (an unknown
	// driver or channel type, a missing name), or "".
	Check(item Item) string
	// Apply writes item in the import's transaction: it replaces the
	// existing record existingID when existingID > 0, else creates a new
	// record named name. refs maps the ids of other sections' records in
	// the snapshot to their ids after the import (connections first). It
	// returns the record's id. tx may be type-asserted to the section's
	// own store interface.
	Apply(ctx context.Context, tx Store, item Item, existingID int64, name string, refs Refs) (int64, error)
}

// Refs maps, per section, the id a record had in the snapshot to the id
// it has after the import (a kept record maps to the existing one).
type Refs map[string]map[int64]int64

// Lookup returns the imported id of a section's record from the snapshot.
func (r Refs) Lookup(section string, id int64) (int64, bool) {
	v, ok := r[section][id]
	return v, ok
}

func (r Refs) set(section string, from, to int64) {
	if r[section] == nil {
		r[section] = map[int64]int64{}
	}
	r[section][from] = to
}

var (
	sectionsMu sync.RWMutex
	sections   = map[string]Section{}
)

// RegisterSection adds a section to every export and import; call it from
// an init(). It panics on an empty name, a built-in name or a duplicate.
func RegisterSection(s Section) {
	sectionsMu.Lock()
	defer sectionsMu.Unlock()
	name := s.Name()
	if name == "" || name == SectionConnections || name == SectionAlertChannels || headerKeys[name] {
		panic(fmt.Sprintf("transfer: RegisterSection of a reserved name %q", name))
	}
	if _, dup := sections[name]; dup {
		panic("transfer: RegisterSection called twice for " + name)
	}
	sections[name] = s
}

// registered returns the registered sections, sorted by name.
func registered() []Section {
	sectionsMu.RLock()
	defer sectionsMu.RUnlock()
	out := make([]Section, 0, len(sections))
	for _, s := range sections {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// placeholderSections are exported as empty lists while no package has
// registered them, so that a snapshot always has them.
var placeholderSections = []string{SectionSenderGroups, SectionRoutingRules}
