package core

// EventCount and LogEventTally are read by the provider event roll-ups
// that the service's store still keeps (adapters/store/event_rollup.go);
// the Pro analytics have their own (app/pro/analytics). They leave core
// when those roll-ups move to the Pro store.

// EventCount counts the provider events of one kind that one provider
// reported over a time range.
type EventCount struct {
	Provider string
	Event    string // one of the Event* names
	// Events counts the events; Messages the distinct logs they concern
	// (a message opened twice is one message, two events).
	Events   int64
	Messages int64
}

// LogEventTally counts the distinct logs that received an event of one
// kind over a time range, by the connection that sent them (0 when none)
// and their source.
type LogEventTally struct {
	ConnectionID int64
	Source       string
	Event        string
	Messages     int64
}
