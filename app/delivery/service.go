// Package delivery is mailsvc's delivery engine: it accepts messages into
// the durable queue (core.LogStore), and a pool of workers claims them
// under a lease, sends them through the configured connections with retry,
// backoff and fallback, and records every attempt.
//
// Connection choice: a message's explicit connection, else the list of an
// add-on's chooser when it gives one (Options.Chooser: Pro's routing
// rules and sender groups, see ConnectionChooser), else the
// default_connection_id setting. When the last try on that connection
// fails (a permanent failure, or a temporary one with no retries left) and
// the message had no explicit connection, the fallback_connection_id
// connection (if set, different and active) gets one full try sequence.
// An inactive, missing or unreadable connection is never used: the
// message fails at once with an attempt that says why (or moves on to the
// fallback), rather than waiting for someone to re-activate it.
//
// The engine has three rooms, built together by New(Options):
//   - the queue API (service.go: Service): Enqueue, Resend, SendNow,
//     Purge;
//   - one attempt (attempt.go: engine): what one message's turn decides,
//     a list of named stages (stages.go: capture, uncertain, suppression,
//     site, site_quota, chooser, send; a module adds its own through
//     Options.Stages) on the settings snapshot (settings.go), ending in
//     the send through a cached transport (transport.go);
//   - the worker (worker.go: pool): Run's workers claim batches, hold them
//     under their lease (hand.go) and record their outcomes (recorder.go).
//
// Each device that makes the engine fast is a named type with its
// benchmark: the hand's size follows the process's pace (handsize.go:
// pace), each connection has a lane of send slots and rate tokens
// (lane.go: lane, lanes), whose level adapts to the provider
// (concurrency.go: adaptive), and the recorder commits several workers'
// outcomes and next claims in one transaction (recorder.go: recorder, on
// core.LogBatchStore; the store keeps room in each queued row for the
// claim, its row reserve).
package delivery

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Defaults of the Options' tuning fields. Eight workers of 100 keep a
// connection's sends busy while other workers record and claim (a worker
// refills half its batch at a time, one transaction whatever the size);
// see docs/delivery.md "Measured".
const (
	DefaultWorkers      = 8
	DefaultBatchSize    = 100
	DefaultMaxRetries   = 3
	DefaultLease        = 60 * time.Second
	DefaultSendTimeout  = 60 * time.Second
	DefaultPollInterval = 500 * time.Millisecond
	DefaultBackoffBase  = 30 * time.Second
	DefaultBackoffMax   = time.Hour
	// DefaultCaptureRetry is how long a message waits when the staging
	// guard cannot tell yet whether mail is captured: a few of the
	// guard's one-second reads, so a database that blinked at start
	// holds mail for seconds only.
	DefaultCaptureRetry = 5 * time.Second
	// PurgeBatch is how many logs one purge statement deletes.
	PurgeBatch = 500
)

// ConnectionSource returns a connection with secrets decrypted and
// constants applied (app.Connections.Effective).
type ConnectionSource interface {
	Effective(ctx context.Context, id int64) (*core.Connection, error)
}

// SettingsSource returns the free settings with defaults applied
// (app.Settings.Get).
type SettingsSource interface {
	Get(ctx context.Context) (map[string]any, error)
}

// Service is the delivery engine's queue API: Enqueue, Resend and SendNow
// put messages in the queue (or send one at once), Purge applies the
// retention; Run starts the workers (worker.go) that claim, hold and
// record batches, each message decided by one attempt (attempt.go). Build
// it with New; Enqueue, SendNow and Resend may be called whether or not
// Run is running.
type Service struct {
	*pool

	// enqueueSettings caches the settings Enqueue applies (From
	// defaults) for settingsTTL, sparing a read per accepted message.
	settingsMu  sync.Mutex
	settingsAt  time.Time
	settingsVal settings
}

// New returns a Service on o, its zero tuning fields set to the
// defaults.
func New(o Options) *Service {
	return &Service{pool: newPool(newEngine(o.withDefaults()))}
}

// defaultOwner names this process in leases: host-pid-random.
func defaultOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = crand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// settingsTTL is how long Enqueue reuses the settings it read.
const settingsTTL = time.Second

// cachedSettings returns the settings read at most settingsTTL ago.
func (s *Service) cachedSettings(ctx context.Context) (settings, error) {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	if !s.settingsAt.IsZero() && time.Since(s.settingsAt) < settingsTTL {
		return s.settingsVal, nil
	}
	st, err := s.loadSettings(ctx)
	if err != nil {
		return st, err
	}
	s.settingsVal, s.settingsAt = st, time.Now()
	return st, nil
}

// Enqueue validates l.Message (after applying the From defaults) and
// commits it to the queue; the message is accepted once Enqueue returns
// its id. An invalid message gives an EINVALID error. The From defaults
// come from settings read at most settingsTTL (1 s) ago.
func (s *Service) Enqueue(ctx context.Context, l *core.Log) (int64, error) {
	st, err := s.cachedSettings(ctx)
	if err != nil {
		return 0, err
	}
	applyFrom(&l.Message, st)
	if err := l.Message.Validate(); err != nil {
		return 0, err
	}
	l.ID = 0
	l.Status = core.StatusQueued
	l.Attempts, l.PhaseAttempts = 0, 0
	if err := s.o.Logs.EnqueueLog(ctx, l); err != nil {
		return 0, fmt.Errorf("enqueue message: %w", err)
	}
	s.Wake()
	return l.ID, nil
}

// Resend puts delivered or failed logs back in the queue and returns how
// many were requeued.
func (s *Service) Resend(ctx context.Context, ids []int64) (int, error) {
	n, err := s.o.Logs.ResendLogs(ctx, ids)
	if err != nil {
		return 0, fmt.Errorf("resend logs: %w", err)
	}
	if n > 0 {
		s.Wake()
	}
	return n, nil
}

// SendNow sends msg synchronously through connection connID (no retry,
// no fallback) and returns its log with the attempt. The send waits its
// turn within the connection's max_concurrency and max_per_second; when
// the connection may not send now (a rate-limit pause, a spent daily
// quota), the provider answers "slow down" or the staging guard cannot
// tell yet whether mail is captured, the log is left queued for the
// workers instead. The log is committed
// as sending under this process's lease before the send, so if the
// process dies the queue delivers it. It returns an EINVALID error for a
// bad message or a missing or inactive connection; a delivery failure is
// not an error: the returned log is failed with LastError set. When the
// send ends delivered or failed, hostHooks (may be nil) gives the host
// hooks recorded with the outcome, in its transaction.
func (s *Service) SendNow(ctx context.Context, connID int64, msg *core.Message, source string, hostHooks core.OutcomeHostHooks) (*core.Log, error) {
	st, err := s.loadSettings(ctx)
	if err != nil {
		return nil, err
	}
	applyFrom(msg, st)
	if err := msg.Validate(); err != nil {
		return nil, err
	}
	conn, err := s.o.Connections.Effective(ctx, connID)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.InvalidField("connection_id", fmt.Sprintf("Connection %d does not exist.", connID))
	} else if err != nil {
		return nil, fmt.Errorf("send now: %w", err)
	}
	if !conn.IsActive {
		return nil, core.InvalidField("connection_id", fmt.Sprintf("Connection %d is inactive.", connID))
	}
	until := time.Now().UTC().Add(s.o.Lease)
	l := &core.Log{
		Status:       core.StatusSending,
		ConnectionID: &connID,
		Message:      *msg,
		Source:       source,
		LeaseOwner:   s.o.Owner,
		LeaseUntil:   &until,
	}
	if err := s.o.Logs.EnqueueLog(ctx, l); err != nil {
		return nil, fmt.Errorf("record message: %w", err)
	}
	if out, ok := s.captureOutcome(ctx, l, st); ok {
		if out.Status == core.StatusCaptured {
			out.SentConnectionID = &connID
		}
		if hostHooks != nil && out.Simulated {
			// Simulation mode counts as accepted; a message the staging
			// guard captured was not tried and fires nothing.
			out.HostHooks = hostHooks(out)
		}
		if _, err := s.o.Logs.RecordOutcomes(context.WithoutCancel(ctx), s.o.Owner, []core.LogOutcome{out}); err != nil {
			return nil, fmt.Errorf("record outcome: %w", err)
		}
		applyOutcome(l, out)
		return l, nil
	}
	out, made := s.attempt(ctx, ctx, l, conn, st, false, nil)
	switch {
	case made == attemptDeferred:
		// The connection may not send now (paused, quota spent): the
		// queue sends it when it may.
		out = deferred(l, out.NextAttemptAt)
	case made == attemptRateLimited:
		out.Status = core.StatusQueued
	case out.History[len(out.History)-1].Outcome == core.OutcomeUncertain:
		// Status and due time were set by markUncertain: the queue
		// looks the message up after the grace.
	case out.History[len(out.History)-1].Outcome == core.OutcomeDelivered || out.History[len(out.History)-1].Outcome == core.OutcomeSimulated:
		out.Status = core.StatusDelivered
		out.Delete = !st.keepDelivered(source)
	case settlePartial(&out):
		out.Delete = !st.keepDelivered(source)
	default:
		out.Status = core.StatusFailed
	}
	s.keepBody(ctx, l, &out, st)
	if hostHooks != nil && out.Status != core.StatusQueued {
		out.HostHooks = hostHooks(out)
	}
	if _, err := s.o.Logs.RecordOutcomes(context.WithoutCancel(ctx), s.o.Owner, []core.LogOutcome{out}); err != nil {
		return nil, fmt.Errorf("record outcome: %w", err)
	}
	applyOutcome(l, out)
	return l, nil
}

// Purge deletes delivered and failed logs older than the retention: the
// log_retention_days setting passed through the mail_svc_log_retention_days
// filter; 0 keeps logs forever. It returns how many it deleted.
func (s *Service) Purge(ctx context.Context) (int, error) {
	st, err := s.loadSettings(ctx)
	if err != nil {
		return 0, err
	}
	days, ok := core.AsInt(s.o.Hooks.ApplyFilters(core.HookLogRetentionDays, st.retentionDays))
	if !ok || days <= 0 {
		return 0, nil
	}
	before := time.Now().UTC().Add(-time.Duration(days) * 24 * time.Hour)
	n, err := s.o.Logs.PurgeLogs(ctx, before, PurgeBatch)
	if err != nil {
		return n, fmt.Errorf("purge logs older than %d days: %w", days, err)
	}
	return n, nil
}

// applyOutcome updates an in-memory log as RecordOutcomes updates its row.
func applyOutcome(l *core.Log, o core.LogOutcome) {
	l.Status = o.Status
	l.Attempts, l.PhaseAttempts = o.Attempts, o.PhaseAttempts
	l.UsedFallback, l.Simulated = o.UsedFallback, o.Simulated
	l.SentConnectionID = o.SentConnectionID
	l.ProviderMessageID, l.LastError = o.ProviderMessageID, o.LastError
	if o.Recipients != nil {
		l.SetRecipients(o.Recipients)
	}
	l.History = append(l.History, o.History...)
	l.LeaseOwner, l.LeaseUntil = "", nil
	if o.Status == core.StatusDelivered {
		t := o.History[len(o.History)-1].At
		l.DeliveredAt = &t
	}
	if o.Status == core.StatusQueued {
		l.NextAttemptAt = o.NextAttemptAt
	}
	if b := o.Body; b != nil {
		l.BodyMode, l.RedactedCount = b.Mode, b.Redacted
		if b.Changed {
			l.Message.Text, l.Message.HTML = b.Text, b.HTML
		}
		if b.DropAttachments {
			l.AttachmentsKept = false
		}
	}
}
