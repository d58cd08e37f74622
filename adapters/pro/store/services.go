package store

// The Pro tables are read and written by a service per concept, each
// taken from the one DB and implementing the ports its use case
// declares; they share the handle (and so its transactions).

// RoutingService keeps the routing rules, sender groups and daily send
// counters (routing.go): app/pro/routing's RoutingStore.
type RoutingService struct{ db *DB }

// SuppressionService keeps the suppression list (suppression.go):
// app/pro/suppression's Store.
type SuppressionService struct{ db *DB }

// EventService keeps the provider events, the webhook replay memory and
// the event roll-ups (events.go, event_rollup.go): app/pro/webhooks'
// Store, app/pro/events' readers and app/pro/analytics' EventReader.
type EventService struct{ db *DB }

// AnalyticsService reads the outcome roll-ups (the service's by
// connection, the Pro ones by source and by site) and the log for the
// Pro analytics (analytics.go): app/pro/analytics' RollupReader and
// LogExporter.
type AnalyticsService struct{ db *DB }

// Routing returns the routing rules, sender groups and send counters.
func (db *DB) Routing() *RoutingService { return &RoutingService{db} }

// Suppressions returns the suppression list.
func (db *DB) Suppressions() *SuppressionService { return &SuppressionService{db} }

// Events returns the provider events and their roll-ups.
func (db *DB) Events() *EventService { return &EventService{db} }

// Analytics returns the Pro analytics reads.
func (db *DB) Analytics() *AnalyticsService { return &AnalyticsService{db} }
