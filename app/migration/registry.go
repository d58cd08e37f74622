package migration

import (
	"fmt"
	"sort"
	"sync"
)

var (
	registryMu sync.RWMutex
	registry   = map[string]Source{}
)

// Register makes a source available by its ID. Each source file calls it
// from init(). It panics on an empty or duplicate id.
func Register(s Source) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if s.ID() == "" {
		panic("migration: Register needs an id")
	}
	if _, dup := registry[s.ID()]; dup {
		panic(fmt.Sprintf("migration: Register called twice for source %s", s.ID()))
	}
	registry[s.ID()] = s
}

// Lookup returns the registered source with the id.
func Lookup(id string) (Source, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	s, ok := registry[id]
	return s, ok
}

// Sources returns every registered source, ordered by id.
func Sources() []Source {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Source, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}
