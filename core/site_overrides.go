package core

// SiteOverrides are the free settings a network site sets for itself
// while it may override the network's: nil is the network's value. The
// network service gives them (network.Service.SiteOverrides) and the
// delivery engine lays them over the network's settings.
type SiteOverrides struct {
	DefaultConnectionID, FallbackConnectionID *int64
	FromEmail, FromName                       *string
}

// Values returns the overrides set, keyed as the free settings
// (FreeSettings) name them, to lay over the network's settings map.
func (o SiteOverrides) Values() map[string]any {
	out := map[string]any{}
	if o.DefaultConnectionID != nil {
		out["default_connection_id"] = *o.DefaultConnectionID
	}
	if o.FallbackConnectionID != nil {
		out["fallback_connection_id"] = *o.FallbackConnectionID
	}
	if o.FromEmail != nil {
		out["from_email"] = *o.FromEmail
	}
	if o.FromName != nil {
		out["from_name"] = *o.FromName
	}
	return out
}
