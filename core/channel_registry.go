package core

// channelTypes holds the registered alert channel types.
var channelTypes slugRegistry[ChannelType]

// RegisterChannelType makes an alert channel type available by its slug.
// Channel packages call it from init(). It panics on an empty slug, a
// missing constructor or a duplicate, as Register does for drivers.
func RegisterChannelType(t ChannelType) {
	if t.Slug == "" || t.New == nil {
		panic("core: RegisterChannelType needs a slug and a constructor")
	}
	if !channelTypes.add(t.Slug, t, func(t *ChannelType) { markSensitive(t.Fields) }) {
		panic("core: RegisterChannelType called twice for " + t.Slug)
	}
}

// LookupChannelType returns the registered channel type with the slug.
func LookupChannelType(slug string) (*ChannelType, bool) { return channelTypes.lookup(slug) }

// ChannelTypes returns every registered channel type, sorted by slug.
func ChannelTypes() []*ChannelType { return channelTypes.all() }

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
