package core

import (
	"sort"
	"sync"
)

var (
	channelMu    sync.RWMutex
	channelTypes = map[string]*ChannelType{}
)

// RegisterChannelType makes an alert channel type available by its slug.
// Channel packages call it from init(). It panics on an empty slug, a
// missing constructor or a duplicate, as Register does for drivers.
func RegisterChannelType(t ChannelType) {
	channelMu.Lock()
	defer channelMu.Unlock()
	if t.Slug == "" || t.New == nil {
		panic("core: RegisterChannelType needs a slug and a constructor")
	}
	if _, dup := channelTypes[t.Slug]; dup {
		panic("core: RegisterChannelType called twice for " + t.Slug)
	}
	for i := range t.Fields {
		f := &t.Fields[i]
		if f.Type == FieldPassword || IsSensitiveKey(f.Key, nil) {
			f.Sensitive = true
		}
	}
	channelTypes[t.Slug] = &t
}

// LookupChannelType returns the registered channel type with the slug.
func LookupChannelType(slug string) (*ChannelType, bool) {
	channelMu.RLock()
	defer channelMu.RUnlock()
	t, ok := channelTypes[slug]
	return t, ok
}

// ChannelTypes returns every registered channel type, sorted by slug.
func ChannelTypes() []*ChannelType {
	channelMu.RLock()
	defer channelMu.RUnlock()
	out := make([]*ChannelType, 0, len(channelTypes))
	for _, t := range channelTypes {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slug < out[j].Slug })
	return out
}

// Field returns the schema field named key, or nil.
func (t *ChannelType) Field(key string) *Field {
	for i := range t.Fields {
		if t.Fields[i].Key == key {
			return &t.Fields[i]
		}
	}
	return nil
}

// ValidateSettings checks a channel's settings against the type's schema
// and rules, normalising them in place (see Driver.ValidateSettings).
func (t *ChannelType) ValidateSettings(s Settings) error {
	return ValidateFields(t.Fields, t.Validate, "channel type "+t.Slug, s)
}
