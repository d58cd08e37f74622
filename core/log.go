package core

import "time"

// Log statuses. A message is accepted once it is committed as queued.
// queued → sending (claimed by a worker under a lease) → delivered | failed;
// sending → queued when the lease expires (the worker died) or after a
// temporary failure with retries left; failed → queued on resend.
const (
	StatusQueued    = "queued"
	StatusSending   = "sending"
	StatusDelivered = "delivered"
	StatusFailed    = "failed"
)

// Statuses lists every log status, in the order the queue statistics
// report them.
var Statuses = []string{StatusQueued, StatusSending, StatusFailed, StatusDelivered}

// Log is one message and its delivery record: the queue row.
type Log struct {
	ID     int64  `json:"id"`
	Status string `json:"status"`
	// ConnectionID is the connection the message asked for; nil means the
	// default connection.
	ConnectionID *int64 `json:"connection_id"`
	// SentConnectionID is the connection of the last attempt.
	SentConnectionID *int64  `json:"sent_connection_id"`
	Message          Message `json:"message"`
	// Source names the caller that queued the message (a plugin or theme
	// slug, "sendmail", "smtp", "test"), for per-source logging rules.
	Source string `json:"source"`
	// Attempts counts delivery attempts so far.
	Attempts int `json:"attempts"`
	// UsedFallback is true once the fallback connection has taken over.
	UsedFallback      bool       `json:"used_fallback"`
	Simulated         bool       `json:"simulated"`
	ProviderMessageID string     `json:"provider_message_id,omitempty"`
	LastError         string     `json:"last_error,omitempty"`
	NextAttemptAt     time.Time  `json:"next_attempt_at"`
	LeaseUntil        *time.Time `json:"-"`
	LeaseOwner        string     `json:"-"`
	CreatedAt         time.Time  `json:"created_at"`
	UpdatedAt         time.Time  `json:"updated_at"`
	DeliveredAt       *time.Time `json:"delivered_at,omitempty"`
	// History is the attempt record, loaded only for a single-log read.
	History []Attempt `json:"attempts_history,omitempty"`
}

// Attempt outcomes.
const (
	OutcomeDelivered = "delivered"
	OutcomeTemporary = "temporary_failure"
	OutcomePermanent = "permanent_failure"
	OutcomeSimulated = "simulated"
)

// Attempt is one delivery attempt of a log.
type Attempt struct {
	ID                int64     `json:"id"`
	LogID             int64     `json:"log_id"`
	ConnectionID      int64     `json:"connection_id"`
	At                time.Time `json:"at"`
	Outcome           string    `json:"outcome"`
	Response          string    `json:"response,omitempty"`
	Error             string    `json:"error,omitempty"`
	ProviderMessageID string    `json:"provider_message_id,omitempty"`
	DurationMS        int64     `json:"duration_ms"`
}

// LogFilter selects logs in a list.
type LogFilter struct {
	Status string // "" for any
	// Search matches recipients, subject and body (case-insensitive substring).
	Search string
	Offset int
	Limit  int
}

// QueueStats counts logs by status.
type QueueStats struct {
	Queued    int `json:"queued"`
	Sending   int `json:"sending"`
	Failed    int `json:"failed"`
	Delivered int `json:"delivered"`
}
