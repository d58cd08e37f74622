package core

import (
	"context"
	"strings"
	"time"
)

// Log statuses. A message is accepted once it is committed as queued.
// queued → sending (claimed by a worker under a lease) → delivered | failed;
// sending → queued when the lease expires (the worker died) or after a
// temporary failure with retries left; failed → queued on resend.
// sending → captured when the capture guard holds the message (a copy of
// the live site, a staging environment, simulation mode: see
// capture.go); captured → queued (released) on release. sending → held
// when the flood guard holds the message (a source sending far more than
// it usually does: see flood.go); held → queued (released) on release,
// held → failed on discard.
const (
	StatusQueued    = "queued"
	StatusSending   = "sending"
	StatusDelivered = "delivered"
	StatusFailed    = "failed"
	// StatusCaptured is a message held, not sent: it waits for a release
	// (POST /capture/release) and is neither queued backlog nor a
	// failure.
	StatusCaptured = "captured"
	// StatusHeld is a message the flood guard held, not sent: it waits
	// for a release (POST /logs/held/release) or a discard (POST
	// /logs/held/discard) and is neither queued backlog nor a failure.
	StatusHeld = "held"
)

// Statuses lists the log statuses the queue statistics count, in the
// order they report them (the spec's four).
var Statuses = []string{StatusQueued, StatusSending, StatusFailed, StatusDelivered}

// LogStatuses lists every log status: Statuses, StatusCaptured and
// StatusHeld. A list of logs may be filtered by any of them.
var LogStatuses = []string{StatusQueued, StatusSending, StatusFailed, StatusDelivered, StatusCaptured, StatusHeld}

// Log is one message and its delivery record: the queue row.
type Log struct {
	ID     int64  `json:"id"`
	Status string `json:"status"`
	// SiteID is the site (a multisite network's blog id) that sent the
	// message; 0 when queued means core.MainSiteID.
	SiteID int64 `json:"site_id"`
	// ConnectionID is the connection the message asked for; nil means the
	// default connection.
	ConnectionID *int64 `json:"connection_id"`
	// SentConnectionID is the connection of the last attempt.
	SentConnectionID *int64  `json:"sent_connection_id"`
	Message          Message `json:"message"`
	// ResentFrom is the log this one was resent from to other recipients
	// (POST /logs/{id}/resend with to, cc or bcc); nil for any other log.
	ResentFrom *int64 `json:"resent_from"`
	// Source names the caller that queued the message (a plugin or theme
	// slug, "sendmail", "smtp", "test"), for per-source logging rules.
	Source string `json:"source"`
	// Attempts counts delivery attempts so far.
	Attempts int `json:"attempts"`
	// PhaseAttempts counts the attempts on the connection now in use: it
	// starts again at 0 when the fallback connection takes over and on
	// resend.
	PhaseAttempts int `json:"-"`
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
	// Recipients is the outcome of each recipient, kept only when they
	// did not all get the message in one go (nil otherwise).
	Recipients RecipientOutcomes `json:"recipients,omitempty"`
	// RecipientsRefused counts the recipients refused for good (or whose
	// retries ran out); Partial is true for a delivered log with some.
	RecipientsRefused int  `json:"recipients_refused"`
	Partial           bool `json:"partial"`
	// History is the attempt record, loaded only for a single-log read.
	History []Attempt `json:"attempts_history,omitempty"`
	// BodyMode is the log_body mode applied to the stored body when the
	// message reached a final state (LogBodyFull, LogBodyRedacted or
	// LogBodyNone); "" while the body is still the whole message as it
	// was queued (queued or sending logs, and logs stored before the
	// modes existed). See docs/logs.md.
	BodyMode string `json:"body_mode"`
	// RedactedCount counts the values of the stored body replaced with
	// [redacted].
	RedactedCount int `json:"redacted_count"`
	// AttachmentsKept is false when the log keeps its attachments' names,
	// types and sizes only.
	AttachmentsKept bool `json:"attachments_kept"`
	// CaptureReleased is set on a captured log that was released: the
	// capture guard lets it go (read by claims only).
	CaptureReleased bool `json:"-"`
	// FloodReleased is set on a held log that was released: the flood
	// guard lets it go (read by claims only).
	FloodReleased bool `json:"-"`
	// Resends counts the times the log was resent by hand (ResendLogs):
	// each makes its message a new sending, with its own idempotency key
	// at the providers that take one (Message.Resends).
	Resends int `json:"-"`
}

// Resendable reports whether the log still holds the whole message, so
// that a resend sends what was first sent: its body was not dropped
// (none mode), no value was redacted and its attachments were kept.
func (l *Log) Resendable() bool {
	return l.BodyMode != LogBodyNone && l.RedactedCount == 0 && l.AttachmentsKept
}

// NotResendableReason says, for a log that is not Resendable, why a
// resend is refused.
func (l *Log) NotResendableReason() string {
	switch {
	case l.BodyMode == LogBodyNone:
		return "the log keeps no body for this message (log_body is none)"
	case l.RedactedCount > 0:
		return "this message held a one-time link that was not kept"
	case !l.AttachmentsKept:
		return "the log kept only the names of this message's attachments"
	}
	return ""
}

// The log_body modes: what the log keeps of a message's body once the
// message is delivered or has failed for good. The message delivered is
// never changed; a queued message keeps its whole body until then.
const (
	// LogBodyRedacted keeps the body with its one-time credentials
	// replaced with [redacted] (the default).
	LogBodyRedacted = "redacted"
	// LogBodyFull keeps the whole body.
	LogBodyFull = "full"
	// LogBodyNone keeps no body: metadata only.
	LogBodyNone = "none"
)

// LogBodyModes lists the allowed values of the log_body setting.
var LogBodyModes = []string{LogBodyRedacted, LogBodyFull, LogBodyNone}

// KeptBody is what the log keeps of a message that reached a final state,
// as the log_body settings decide it (app/logbody).
type KeptBody struct {
	// Mode is the mode applied: LogBodyFull, LogBodyRedacted or
	// LogBodyNone.
	Mode string
	// Text and HTML are the bodies to store; they replace the stored
	// ones only when Changed.
	Text, HTML string
	// Changed reports whether Text or HTML differ from the stored body.
	Changed bool
	// Redacted counts the values replaced with [redacted].
	Redacted int
	// DropAttachments keeps the attachments' names, types and sizes
	// only: their bytes are removed.
	DropAttachments bool
}

// Attempt outcomes.
const (
	OutcomeDelivered = "delivered"
	OutcomeTemporary = "temporary_failure"
	OutcomePermanent = "permanent_failure"
	OutcomeSimulated = "simulated"
	// OutcomeCaptured records a message the capture guard held (the log
	// became captured); nothing was sent and no attempt is counted.
	OutcomeCaptured = "captured"
	// OutcomeHeld records a message the flood guard held (the log became
	// held); nothing was sent and no attempt is counted.
	OutcomeHeld = "held"
	// OutcomeRateLimited is an attempt the provider refused with a "slow
	// down" answer (core.RateLimited): the message is requeued without
	// the attempt counting against its retries.
	OutcomeRateLimited = "rate_limited"
	// OutcomeUncertain is an attempt whose message left whole with no
	// answer from the provider (core.Uncertain): the provider may have
	// taken it. The message waits the uncertain_grace_minutes setting,
	// is looked up at the provider, and is sent again (with the same
	// Message-ID) only when it is not found.
	OutcomeUncertain = "uncertain"
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
	// SiteID, when > 0, matches the logs of that site only (a multisite
	// network's blog id).
	SiteID int64
	// Search is a recipient address, a part of one, or words of the
	// subject (see ParseLogSearch): an address matches the logs sent to,
	// copied or blind-copied to exactly that address (ignoring case);
	// @domain, local@ and a single word of MinSearchFragment characters or
	// more match the recipients by domain, local part or a fragment of it
	// (the word also by the subject); anything else matches the logs whose
	// subject contains it (ignoring case) with each of its words starting a
	// word of the subject.
	Search string
	// CreatedFrom and CreatedBefore bound CreatedAt: CreatedFrom ≤
	// CreatedAt < CreatedBefore. A zero time leaves that side open.
	CreatedFrom   time.Time
	CreatedBefore time.Time
	// CountUpTo, when > 0, lets the store stop counting matches early: a
	// total above CountUpTo only means "more than CountUpTo". 0 counts
	// every match.
	CountUpTo int
	Offset    int
	Limit     int
}

// SearchIsAddress reports whether a log search term is an email address
// (one @ with text on both sides and no spaces), which searches the
// recipients; any other term searches the subject's words.
func SearchIsAddress(term string) bool {
	local, domain, ok := strings.Cut(strings.TrimSpace(term), "@")
	return ok && local != "" && domain != "" && !strings.ContainsAny(local+domain, "@ \t\r\n,;<>")
}

// QueueStats counts logs by status.
type QueueStats struct {
	Queued    int `json:"queued"`
	Sending   int `json:"sending"`
	Failed    int `json:"failed"`
	Delivered int `json:"delivered"`
}

// LogOutcome is the result of processing one claimed log, written by
// LogStore.RecordOutcomes.
type LogOutcome struct {
	LogID int64
	// Status is the new status: StatusDelivered, StatusFailed, or
	// StatusQueued for a retry at NextAttemptAt.
	Status        string
	NextAttemptAt time.Time
	// Attempts and PhaseAttempts are the new counters (see Log).
	Attempts          int
	PhaseAttempts     int
	UsedFallback      bool
	Simulated         bool
	SentConnectionID  *int64
	ProviderMessageID string
	LastError         string
	// Recipients, when not nil, replaces the log's per-recipient outcomes
	// (written only then, so the common all-delivered outcome costs
	// nothing more).
	Recipients RecipientOutcomes
	// ProviderMessageIDs, when set, are further provider message ids of
	// the log (each part of a message sent in several calls, or a retry
	// of its deferred recipients), kept so that the provider's webhook
	// events about any of them find the log.
	ProviderMessageIDs []string
	// History holds the attempts made since the claim; they are appended
	// to the log's attempt record.
	History []Attempt
	// Delete removes the log and its history instead of updating it (a
	// delivered message when the log_emails setting is off).
	Delete bool
	// HostHooks are recorded in the host hook outbox in the transaction
	// that applies this outcome (and not at all when it does not apply).
	HostHooks []HostHook
	// Body, when set on a final outcome (delivered or failed), is what
	// the log keeps of the message's body from now on; nil keeps the
	// stored body as it is.
	Body *KeptBody
}

// LogStore persists logs: the durable delivery queue and the email log.
//
// Atomicity: every method is one transaction; a method that returns an
// error changed nothing. A message is accepted once EnqueueLog returns nil:
// its row is committed as queued and survives a crash.
//
// Leases: ClaimLogs marks rows sending under an owner and an expiry. While
// a lease runs, no other ClaimLogs returns the row, across processes (MySQL
// SELECT ... FOR UPDATE SKIP LOCKED; SQLite's single writer). When the
// owner dies, ReleaseExpiredLeases puts the row back to queued, so a
// message is sent at least once and twice only if its worker died (or its
// lease ran out) between the provider's acceptance and RecordOutcomes.
type LogStore interface {
	// EnqueueLog inserts l (one INSERT, committed on return) and sets its
	// ID, CreatedAt and UpdatedAt; a zero NextAttemptAt means now. l.Status
	// is StatusQueued ("" means queued) or StatusSending with LeaseOwner
	// and LeaseUntil set (a synchronous send that the queue takes over if
	// the sender dies). Not idempotent: retrying after an error whose
	// commit outcome is unknown may queue the message twice.
	EnqueueLog(ctx context.Context, l *Log) error
	// ClaimLogs moves up to limit queued logs whose NextAttemptAt has
	// passed to sending with LeaseOwner owner and LeaseUntil now+lease,
	// oldest NextAttemptAt first, and returns them with their Message.
	// Safe to retry: a failed call claims nothing.
	ClaimLogs(ctx context.Context, owner string, limit int, lease time.Duration) ([]*Log, error)
	// ExtendLeases pushes LeaseUntil of owner's sending logs ids to
	// now+lease and returns how many it still held. Idempotent.
	ExtendLeases(ctx context.Context, owner string, ids []int64, lease time.Duration) (int, error)
	// ReleaseExpiredLeases moves sending logs whose lease has run out back
	// to queued (due now) and returns how many. Idempotent; any process
	// may call it.
	ReleaseExpiredLeases(ctx context.Context) (int, error)
	// RecordOutcomes applies outs in one transaction: each updates (or
	// deletes) its log and appends its History. An outcome applies only
	// while the log is still sending under owner; outcomes for logs the
	// owner no longer holds (lease expired and reclaimed, deleted) are
	// skipped. It returns how many applied. Safe to retry after an error.
	RecordOutcomes(ctx context.Context, owner string, outs []LogOutcome) (int, error)
	// FindLogByID returns one log with its Message and History (oldest
	// attempt first), or an ENOTFOUND error.
	FindLogByID(ctx context.Context, id int64) (*Log, error)
	// FindLogs returns the logs matching f, newest first, without History,
	// and the total count matching f before Offset and Limit (Limit 0: no
	// limit). Search is a literal substring (LIKE wildcards in it match
	// themselves) of a recipient address or name, the subject or a body.
	FindLogs(ctx context.Context, f LogFilter) ([]*Log, int, error)
	// QueueStats counts logs by status.
	QueueStats(ctx context.Context) (QueueStats, error)
	// DeleteLogs deletes the logs with the given ids and their history and
	// returns how many existed.
	DeleteLogs(ctx context.Context, ids []int64) (int, error)
	// ResendLogs moves the delivered or failed logs among ids that are
	// Resendable back to queued, due now, with Attempts, PhaseAttempts, UsedFallback,
	// Simulated, ProviderMessageID and LastError reset and Resends counted
	// up by one; ConnectionID (the explicit connection) and the history
	// are kept. Queued or sending logs
	// and logs that are not Resendable are left alone. It returns how
	// many were requeued.
	ResendLogs(ctx context.Context, ids []int64) (int, error)
	// PurgeLogs deletes delivered, failed and captured logs created before before
	// (never a held one: it waits for a person's release or discard),
	// with their history, in statements of at most batch rows (each its
	// own transaction, so a long purge never holds locks for long), and
	// returns how many it deleted. Queued and sending logs are never
	// purged. Safe to retry.
	PurgeLogs(ctx context.Context, before time.Time, batch int) (int, error)
	// OldestQueuedAt returns the creation time of the oldest queued log
	// (due or not), or nil when none is queued. The queue-stalled watch
	// uses it.
	OldestQueuedAt(ctx context.Context) (*time.Time, error)
}

// LogBatchStore is the optional part of the queue's port that lets the
// delivery workers of one process share their commits: several lease
// owners' outcomes recorded in one transaction, and their next messages
// claimed in that same transaction. A store that has it is passed to the
// engine explicitly (delivery.Options.Batches), beside its LogStore; a
// store without it is used one batch at a time through RecordOutcomes
// and ClaimLogs, with the same results and more commits.
//
// Atomicity: each call is one transaction covering every owner it names;
// on error nothing is recorded and nothing claimed, for any owner.
//
// Failure: an error says the transaction did not commit (or its outcome
// is unknown, e.g. the connection was lost during the commit). The caller
// may then record each owner's outcomes on its own with RecordOutcomes.
//
// Retry safety: an outcome applies only while its log is still sending
// under its owner, and applying it clears the lease, so recording the
// same outcomes again after an unknown result applies each at most once.
// A claim is not retry-safe in that sense (a retried call may claim other
// logs while the first, if it committed, holds some): logs claimed by a
// lost call go back to the queue when their lease runs out.
type LogBatchStore interface {
	// RecordOutcomesOfOwners applies outs[i] as RecordOutcomes(ctx,
	// owners[i], outs[i]) would, all in one transaction, and returns how
	// many of each owner's outcomes applied (len(owners) counts). owners
	// and outs have the same length.
	RecordOutcomesOfOwners(ctx context.Context, owners []string, outs [][]LogOutcome) ([]int, error)
	// RecordOutcomesAndClaim records as RecordOutcomesOfOwners does and,
	// in the same transaction and after the record, claims up to
	// claims[i] due logs for owners[i] as ClaimLogs(ctx, owners[i],
	// claims[i], lease) would: one commit where a record and a claim
	// would cost two. A log the outcomes made due at once (a move to the
	// fallback) may be claimed again. Each owner gets its own disjoint
	// share of the due logs. It returns how many of each owner's outcomes
	// applied and each owner's claimed logs (empty, not nil, is not
	// required: a zero claim gives none). owners, outs and claims have
	// the same length.
	RecordOutcomesAndClaim(ctx context.Context, owners []string, outs [][]LogOutcome, claims []int, lease time.Duration) ([]int, [][]*Log, error)
}

// LogBodyStore rewrites what delivered and failed logs keep of their
// bodies: the `mailsvc logs redact` command, for logs stored before their
// mode was applied.
type LogBodyStore interface {
	// FinalLogsAfter returns up to limit delivered or failed logs whose
	// id is above afterID, lowest id first, with their Message (the
	// attachments' bytes are not loaded); pendingOnly keeps those whose
	// BodyMode is "" (not applied yet). Reads no lock.
	FinalLogsAfter(ctx context.Context, afterID int64, limit int, pendingOnly bool) ([]*Log, error)
	// LastLogID returns the highest log id, 0 when there is none.
	LastLogID(ctx context.Context) (int64, error)
	// KeepLogBodies applies bodies (log id → kept body) in one short
	// transaction, to the logs that are still delivered or failed, and
	// returns how many it rewrote. Idempotent.
	KeepLogBodies(ctx context.Context, bodies map[int64]*KeptBody) (int, error)
}
