package delivery

import (
	"log/slog"
	"time"

	"github.com/mailsvc/mailsvc/app/logbody"
	"github.com/mailsvc/mailsvc/core"
)

// Options configure a Service (New): the queue and the sources it reads,
// the optional parts (add-ons, alerts, metrics, a multisite network) and
// the tuning. Zero tuning fields take the defaults.
type Options struct {
	// Logs is the queue (required).
	Logs core.LogStore
	// Batches, when set, is the queue's batch part (usually the same
	// store as Logs): while Run runs, the workers' outcomes are recorded
	// a group of batches at a time, and their next messages claimed in
	// the same transaction (see recorder). Nil records and claims one
	// batch at a time through Logs.
	Batches core.LogBatchStore
	// Connections gives the connections messages are sent through
	// (required to send).
	Connections ConnectionSource
	// Settings gives the free settings (required).
	Settings SettingsSource
	// Alerts, when set, hears of messages that failed for good
	// (core.EventDeliveryFailed) and of the fallback connection taking
	// over a message (core.EventFallbackUsed). Raise returns at once, so
	// alerting never slows or fails delivery.
	Alerts core.Alerter
	Hooks  *core.Hooks
	// Env is passed to drivers when transports are built.
	Env    core.DriverEnv
	Logger *slog.Logger

	// Workers is the number of concurrent workers; BatchSize how many
	// logs each holds at once (up to handGrowth times as many while its
	// connections decide them fast; see handsize.go).
	Workers   int
	BatchSize int
	// MaxRetries is how many times a temporary failure is retried on one
	// connection after the first attempt: 0 means DefaultMaxRetries, a
	// negative value means no retry.
	MaxRetries int
	// Lease is how long a claimed batch stays with its worker; it is
	// renewed while the batch is being sent.
	Lease        time.Duration
	SendTimeout  time.Duration
	PollInterval time.Duration
	// BackoffBase and BackoffMax bound the retry delay: before retry n
	// (1-based) the delay is d/2 plus a random part up to d/2, where
	// d = min(BackoffMax, BackoffBase·2^(n-1)).
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// Owner names this process in leases; empty means host-pid-random.
	Owner string
	// Policy, when set, is an add-on's say in delivery (Pro: the retry
	// limit and the sources not kept in the log), read with the settings,
	// so a change applies without a restart. Nil keeps MaxRetries and
	// logs every message as log_emails says.
	Policy PolicySource
	// Suppressions, when set, is checked before every queued send: a
	// message to a listed address fails at once (see suppressedOutcome).
	Suppressions SuppressionList
	// Chooser, when set, picks the connections of a message that names
	// none before the default connection and the fallback do (Pro:
	// routing rules and sender groups; see ConnectionChooser). Nil in the
	// free build.
	Chooser ConnectionChooser
	// Capture, when set, is the staging guard: a message it holds is
	// captured (status captured), not sent, until it is released.
	// Simulation mode (simulation_enabled) captures every message
	// whether or not it is set.
	Capture CaptureGuard
	// CaptureRetry is how long a message waits in the queue when the
	// staging guard cannot tell yet whether mail is captured (no state
	// known, and reading it fails); 0 means DefaultCaptureRetry.
	CaptureRetry time.Duration
	// Metrics, when set, receives the engine's measurements (sends
	// started and finished, retries, provider errors, rate-limit waits).
	Metrics Metrics
	// MaxInFlight is the ceiling of sends in flight at once in this
	// process across all connections (MAILSVC_MAX_IN_FLIGHT); each
	// connection is further bounded by its adaptive level, below its
	// max_concurrency setting (split across replicas).
	MaxInFlight int
	// Redaction gives the redactor of the log_body redacted mode with
	// the site's patterns; nil applies the built-in rules only.
	Redaction *logbody.Redactors
	// SiteQuotas, set on a multisite network, counts each site's
	// messages against its quota before they are sent; nil sends without.
	SiteQuotas SiteQuotas
	// SiteSettings, set on a multisite network, gives the settings of a
	// site that overrides the network's (its connections and sender).
	SiteSettings SiteSettings
	// ConnectionUse, set on a multisite network, keeps a site's messages
	// off the connections another site created for itself: a stored
	// default or fallback connection (the site's own or the network's)
	// that the message's site may not use counts as unset, and a message
	// pinned to one (a test or resent message) fails as if the
	// connection did not exist. Nil (a single site) checks nothing.
	ConnectionUse core.ConnectionUse
	// Events, when set, finds the provider events recorded for a log
	// (the Pro add-on sets it; nil without Pro): after an uncertain
	// attempt through a transport that cannot look messages up
	// (core.Finder), an event received meanwhile shows the provider
	// took the message.
	Events ProviderEvents
	// Replicas, when set, counts the live processes sharing the queue
	// (a heartbeat row each in the database); each connection's
	// max_per_second and max_concurrency are split between them. Nil counts this one only.
	Replicas ReplicaCounter
	// LevelStore, when set, keeps each connection's concurrency level
	// across restarts (the LevelScope settings scope): Run reads it at
	// start and writes the levels that moved every few seconds and when
	// it stops. Nil starts every connection at StartConcurrency.
	LevelStore core.SettingsStore
	// SendHealth, when set, hears of every finished attempt through a
	// connection (app/health.SendHealth): one call in memory, no SQL.
	SendHealth AttemptObserver
	// Stages are stages a module adds to the delivery decision, each
	// before the built-in stage it names (see stages.go).
	Stages []AddedStage
}

// AttemptObserver hears of each finished attempt through a connection.
// Attempt must return at once: it runs on the send path.
type AttemptObserver interface {
	Attempt(conn *core.Connection, a core.Attempt)
}

// withDefaults returns o with its zero tuning fields set to the defaults.
func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	} else if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = DefaultSendTimeout
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.CaptureRetry <= 0 {
		o.CaptureRetry = DefaultCaptureRetry
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = DefaultBackoffBase
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = DefaultBackoffMax
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Owner == "" {
		o.Owner = defaultOwner()
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	return o
}
