package core

import (
	"sort"
	"sync"
)

// slugRegistry holds what packages register by slug from init(): the
// drivers and the alert channel types. It is safe for concurrent use.
type slugRegistry[T any] struct {
	mu     sync.RWMutex
	bySlug map[string]*T
}

// add stores v under slug; it reports false, storing nothing, when the
// slug is taken. prepare, when not nil, runs on v first, under the lock.
func (r *slugRegistry[T]) add(slug string, v T, prepare func(*T)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.bySlug[slug]; dup {
		return false
	}
	if prepare != nil {
		prepare(&v)
	}
	if r.bySlug == nil {
		r.bySlug = map[string]*T{}
	}
	r.bySlug[slug] = &v
	return true
}

// lookup returns what is registered under slug.
func (r *slugRegistry[T]) lookup(slug string) (*T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.bySlug[slug]
	return v, ok
}

// all returns everything registered, sorted by slug.
func (r *slugRegistry[T]) all() []*T {
	r.mu.RLock()
	defer r.mu.RUnlock()
	slugs := make([]string, 0, len(r.bySlug))
	for slug := range r.bySlug {
		slugs = append(slugs, slug)
	}
	sort.Strings(slugs)
	out := make([]*T, 0, len(slugs))
	for _, slug := range slugs {
		out = append(out, r.bySlug[slug])
	}
	return out
}

// markSensitive marks the password fields and those whose key is
// sensitive (IsSensitiveKey) as Sensitive.
func markSensitive(fields []Field) {
	for i := range fields {
		f := &fields[i]
		if f.Type == FieldPassword || IsSensitiveKey(f.Key, nil) {
			f.Sensitive = true
		}
	}
}
