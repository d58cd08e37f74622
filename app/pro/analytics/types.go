package analytics

import "time"

// SourceBucket counts the messages from one source (a plugin or theme
// slug, "sendmail", "smtp", "test"; "" when unknown) that reached one
// final status in one 15-minute bucket (core.OutcomeBucketSize), by the
// time the outcome was recorded: the same outcomes as core.OutcomeBucket,
// counted by source instead of connection.
type SourceBucket struct {
	Start  time.Time // UTC start of the bucket
	Source string
	Status string // core.StatusDelivered or core.StatusFailed
	Count  int64
}

// EventCount counts the provider events of one kind that one provider
// reported over a time range.
type EventCount struct {
	Provider string
	Event    string // one of the core.Event* names
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

// ExportedLog is one log as the analytics export writes it: the log's
// own columns, without its body.
type ExportedLog struct {
	ID        int64
	CreatedAt time.Time
	Status    string
	// ConnectionID is the connection of the last attempt, else the one
	// the message asked for; 0 when neither.
	ConnectionID      int64
	Source            string
	Recipients        string
	Subject           string
	LastError         string
	ProviderMessageID string
}

// LogExportPage asks for one page of the logs created in [From, To), in
// (CreatedAt, ID) order, after the last log of the previous page
// (AfterCreatedAt, AfterID; AfterID 0 for the first page).
type LogExportPage struct {
	From, To       time.Time
	AfterCreatedAt time.Time
	AfterID        int64
	Limit          int
}
