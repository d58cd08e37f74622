// Package delivery is mailsvc's delivery engine: it accepts messages into
// the durable queue (core.LogStore), and a pool of workers claims them
// under a lease, sends them through the configured connections with retry,
// backoff and fallback, and records every attempt.
//
// Connection choice: a message's explicit connection, else the
// default_connection_id setting. When the last try on that connection
// fails (a permanent failure, or a temporary one with no retries left) and
// the message had no explicit connection, the fallback_connection_id
// connection (if set, different and active) gets one full try sequence.
// An inactive, missing or unreadable connection is never used: the
// message fails at once with an attempt that says why (or moves on to the
// fallback), rather than waiting for someone to re-activate it.
package delivery

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailsvc/mailsvc/app/logbody"
	"github.com/mailsvc/mailsvc/core"
)

// Defaults of the Service's tuning fields. Eight workers of 100 keep a
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

// Service accepts messages and delivers them. Set the fields, then call
// Run to start the workers; Enqueue, SendNow and Resend may be called
// whether or not Run is running. Zero tuning fields take the defaults.
type Service struct {
	Logs        core.LogStore
	Connections ConnectionSource
	Settings    SettingsSource
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
	// Events, when set, reads the provider events recorded for a log
	// (adapters/store.DB): after an uncertain attempt through a
	// transport that cannot look messages up (core.Finder), an event
	// received meanwhile shows the provider took the message.
	Events LogEventSource
	// Replicas, when set, counts the live processes sharing the queue
	// (a heartbeat row each in the database); each connection's
	// max_per_second and max_concurrency are split between them. Nil counts this one only.
	Replicas ReplicaCounter
	// LevelStore, when set, keeps each connection's concurrency level
	// across restarts (the LevelScope settings scope): Run reads it at
	// start and writes the levels that moved every few seconds and when
	// it stops. Nil starts every connection at StartConcurrency.
	LevelStore core.SettingsStore

	// enqueueSettings caches the settings Enqueue applies (From
	// defaults) for settingsTTL, sparing a read per accepted message.
	settingsMu  sync.Mutex
	settingsAt  time.Time
	settingsVal settings

	initOnce   sync.Once
	wake       chan struct{}
	transports transportCache
	lanes      lanes
	inFlight   chan struct{}
	live       atomic.Int64
	// recorder, while Run runs on a store that has one, writes the
	// workers' outcomes a group of batches at a time.
	recorderMu sync.Mutex
	recorder   *recorder
	// pace is the process's delivery pace, which sizes the hands.
	pace pace
}

func (s *Service) init() {
	s.initOnce.Do(func() {
		if s.Workers <= 0 {
			s.Workers = DefaultWorkers
		}
		if s.BatchSize <= 0 {
			s.BatchSize = DefaultBatchSize
		}
		if s.MaxRetries == 0 {
			s.MaxRetries = DefaultMaxRetries
		} else if s.MaxRetries < 0 {
			s.MaxRetries = 0
		}
		if s.Lease <= 0 {
			s.Lease = DefaultLease
		}
		if s.SendTimeout <= 0 {
			s.SendTimeout = DefaultSendTimeout
		}
		if s.PollInterval <= 0 {
			s.PollInterval = DefaultPollInterval
		}
		if s.BackoffBase <= 0 {
			s.BackoffBase = DefaultBackoffBase
		}
		if s.BackoffMax <= 0 {
			s.BackoffMax = DefaultBackoffMax
		}
		if s.Logger == nil {
			s.Logger = slog.Default()
		}
		if s.Owner == "" {
			host, _ := os.Hostname()
			var b [4]byte
			_, _ = crand.Read(b[:])
			s.Owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
		}
		if s.MaxInFlight <= 0 {
			s.MaxInFlight = DefaultMaxInFlight
		}
		s.inFlight = make(chan struct{}, s.MaxInFlight)
		s.live.Store(1)
		s.wake = make(chan struct{}, 1)
		s.transports.env = s.Env
	})
}

// Backoff returns the delay before retry n (1-based): d/2 plus a random
// part below d/2, d = min(BackoffMax, BackoffBase·2^(n-1)).
func (s *Service) Backoff(n int) time.Duration {
	s.init()
	d := s.BackoffBase
	for i := 1; i < n && d < s.BackoffMax; i++ {
		d *= 2
	}
	if d > s.BackoffMax {
		d = s.BackoffMax
	}
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(half)
}

// settings is the snapshot of the free settings one batch works with.
type settings struct {
	fromEmail, fromName string
	defaultConn         *int64
	fallbackConn        *int64
	simulate            bool
	logEmails           bool
	retentionDays       int64
	// maxRetries is the retry limit in force (Service.MaxRetries, or the
	// Policy's); unlogged the sources whose delivered messages are not
	// kept.
	maxRetries int
	unlogged   map[string]bool
	// body is what the log keeps of a final message's body.
	body logbody.Policy
	// uncertainGrace is how long an uncertain attempt waits for its
	// lookup (uncertain_grace_minutes).
	uncertainGrace time.Duration
}

func (s *Service) loadSettings(ctx context.Context) (settings, error) {
	m, err := s.Settings.Get(ctx)
	if err != nil {
		return settings{}, fmt.Errorf("load settings: %w", err)
	}
	st := core.Settings(m)
	out := settings{
		fromEmail:      st.String("from_email"),
		fromName:       st.String("from_name"),
		simulate:       st.Bool("simulation_enabled", false),
		logEmails:      st.Bool("log_emails", true),
		retentionDays:  st.Int("log_retention_days", 90),
		body:           logbody.PolicyOf(st),
		uncertainGrace: time.Duration(st.Int("uncertain_grace_minutes", int64(DefaultUncertainGrace/time.Minute))) * time.Minute,
	}
	if out.uncertainGrace <= 0 {
		out.uncertainGrace = DefaultUncertainGrace
	}
	if id := st.Int("default_connection_id", 0); id > 0 {
		out.defaultConn = &id
	}
	if id := st.Int("fallback_connection_id", 0); id > 0 {
		out.fallbackConn = &id
	}
	if err := s.applyPolicy(ctx, &out); err != nil {
		return settings{}, err
	}
	return out, nil
}

// settingsTTL is how long Enqueue reuses the settings it read.
const settingsTTL = time.Second

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

// applyFrom fills a missing From from the from_email/from_name settings.
func applyFrom(msg *core.Message, st settings) {
	if msg.From.Email == "" {
		msg.From.Email = st.fromEmail
		if msg.From.Name == "" {
			msg.From.Name = st.fromName
		}
	}
}

// Enqueue validates l.Message (after applying the From defaults) and
// commits it to the queue; the message is accepted once Enqueue returns
// its id. An invalid message gives an EINVALID error. The From defaults
// come from settings read at most settingsTTL (1 s) ago.
func (s *Service) Enqueue(ctx context.Context, l *core.Log) (int64, error) {
	s.init()
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
	if err := s.Logs.EnqueueLog(ctx, l); err != nil {
		return 0, fmt.Errorf("enqueue message: %w", err)
	}
	s.Wake()
	return l.ID, nil
}

// Wake tells an idle worker of this process to look for work now.
func (s *Service) Wake() {
	s.init()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Resend puts delivered or failed logs back in the queue and returns how
// many were requeued.
func (s *Service) Resend(ctx context.Context, ids []int64) (int, error) {
	s.init()
	n, err := s.Logs.ResendLogs(ctx, ids)
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
// quota) or the provider answers "slow down", the log is left queued for
// the workers instead. The log is committed
// as sending under this process's lease before the send, so if the
// process dies the queue delivers it. It returns an EINVALID error for a
// bad message or a missing or inactive connection; a delivery failure is
// not an error: the returned log is failed with LastError set. When the
// send ends delivered or failed, hostHooks (may be nil) gives the host
// hooks recorded with the outcome, in its transaction.
func (s *Service) SendNow(ctx context.Context, connID int64, msg *core.Message, source string, hostHooks core.OutcomeHostHooks) (*core.Log, error) {
	s.init()
	st, err := s.loadSettings(ctx)
	if err != nil {
		return nil, err
	}
	applyFrom(msg, st)
	if err := msg.Validate(); err != nil {
		return nil, err
	}
	conn, err := s.Connections.Effective(ctx, connID)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.InvalidField("connection_id", fmt.Sprintf("Connection %d does not exist.", connID))
	} else if err != nil {
		return nil, fmt.Errorf("send now: %w", err)
	}
	if !conn.IsActive {
		return nil, core.InvalidField("connection_id", fmt.Sprintf("Connection %d is inactive.", connID))
	}
	until := time.Now().UTC().Add(s.Lease)
	l := &core.Log{
		Status:       core.StatusSending,
		ConnectionID: &connID,
		Message:      *msg,
		Source:       source,
		LeaseOwner:   s.Owner,
		LeaseUntil:   &until,
	}
	if err := s.Logs.EnqueueLog(ctx, l); err != nil {
		return nil, fmt.Errorf("record message: %w", err)
	}
	if out, ok := s.captureOutcome(ctx, l, st); ok {
		out.SentConnectionID = &connID
		if hostHooks != nil && out.Simulated {
			// Simulation mode counts as accepted; a message the staging
			// guard captured was not tried and fires nothing.
			out.HostHooks = hostHooks(out)
		}
		if _, err := s.Logs.RecordOutcomes(context.WithoutCancel(ctx), s.Owner, []core.LogOutcome{out}); err != nil {
			return nil, fmt.Errorf("record outcome: %w", err)
		}
		applyOutcome(l, out)
		return l, nil
	}
	out, made := s.attempt(ctx, ctx, l, conn, st, false)
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
	if _, err := s.Logs.RecordOutcomes(context.WithoutCancel(ctx), s.Owner, []core.LogOutcome{out}); err != nil {
		return nil, fmt.Errorf("record outcome: %w", err)
	}
	applyOutcome(l, out)
	return l, nil
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

// keepBody sets what the log keeps of l's body (the log_body settings)
// on an outcome that makes it final, unless the log is deleted. The
// message was sent whole; only the log's copy changes.
func (s *Service) keepBody(ctx context.Context, l *core.Log, out *core.LogOutcome, st settings) {
	if out.Delete || (out.Status != core.StatusDelivered && out.Status != core.StatusFailed) {
		return
	}
	out.Body = st.body.Keep(&l.Message, l.Source, s.Redaction.Redactor(ctx))
}

// SiteQuotas admits a network site's messages within its quota
// (network.Service).
type SiteQuotas interface {
	AdmitSite(ctx context.Context, site int64) (core.SiteAdmission, error)
	ReleaseSite(ctx context.Context, site int64)
}

// SiteSettings gives the free settings a network site set for itself
// (default_connection_id, fallback_connection_id, from_email, from_name;
// absent: the network's) (network.Service).
type SiteSettings interface {
	SiteOverrides(ctx context.Context, site int64) (map[string]any, error)
}

// forSite returns st with the settings l's site set for itself when the
// site overrides the network's.
func (s *Service) forSite(ctx context.Context, l *core.Log, st settings) settings {
	if s.SiteSettings == nil {
		return st
	}
	own, err := s.SiteSettings.SiteOverrides(ctx, l.SiteID)
	if err != nil {
		s.Logger.Warn("site settings unavailable: the network's are used", "log_id", l.ID, "site", l.SiteID, "error", err.Error())
		return st
	}
	if id, ok := core.AsInt(own["default_connection_id"]); ok {
		st.defaultConn = &id
	}
	if id, ok := core.AsInt(own["fallback_connection_id"]); ok {
		st.fallbackConn = &id
	}
	if v, ok := own["from_email"].(string); ok {
		st.fromEmail = v
	}
	if v, ok := own["from_name"].(string); ok {
		st.fromName = v
	}
	return st
}

// siteQuotaOutcome checks a message's site quota before its first
// attempt: within it, the message goes on (ok false, admitted true); past
// it, the message waits in the queue for the next period or fails, as the
// network chose. A message tried before was counted then.
func (s *Service) siteQuotaOutcome(ctx context.Context, l *core.Log) (out core.LogOutcome, ok, admitted bool) {
	if s.SiteQuotas == nil || l.Attempts > 0 || l.UsedFallback {
		return out, false, false
	}
	a, err := s.SiteQuotas.AdmitSite(ctx, l.SiteID)
	if err != nil {
		// The count is not available: try again shortly rather than
		// send past a quota.
		s.Logger.Warn("site quota check failed", "log_id", l.ID, "site", l.SiteID, "error", err.Error())
		return deferred(l, time.Now().UTC().Add(time.Minute)), true, false
	}
	if a.Allowed {
		return out, false, true
	}
	if a.Fail {
		out = s.failedAttempt(l, 0, core.Permanent(fmt.Errorf("%s", a.Reason)))
		out.Status = core.StatusFailed
		return out, true, false
	}
	out = deferred(l, a.Until)
	out.LastError = a.Reason
	return out, true, false
}

// attemptMade says what attempt did.
type attemptMade int

const (
	// attemptSent: the attempt was made; its outcome is in History.
	attemptSent attemptMade = iota
	// attemptDeferred: nothing was tried; the message goes back to the
	// queue, due at the outcome's NextAttemptAt (shutdown, a long
	// rate-limit pause, a spent quota).
	attemptDeferred
	// attemptRateLimited: the provider answered "slow down"; History
	// holds a rate_limited attempt, the counters are unchanged, and the
	// message is due again at NextAttemptAt.
	attemptRateLimited
)

// attempt makes one delivery attempt of l through conn
// and returns an outcome with the counters and history filled in; the
// caller sets Status, NextAttemptAt and Delete (see attemptMade for the
// outcomes that need none of that). The send waits its turn in the
// connection's lane; when stop ends first, nothing is tried.
func (s *Service) attempt(ctx, stop context.Context, l *core.Log, conn *core.Connection, st settings, fallback bool) (core.LogOutcome, attemptMade) {
	start := time.Now().UTC()
	a := core.Attempt{LogID: l.ID, ConnectionID: conn.ID, At: start}
	out := core.LogOutcome{
		LogID:             l.ID,
		Attempts:          l.Attempts + 1,
		PhaseAttempts:     l.PhaseAttempts + 1,
		UsedFallback:      fallback,
		SentConnectionID:  &conn.ID,
		ProviderMessageID: l.ProviderMessageID,
	}
	msg := l.Message
	applyFrom(&msg, st)
	msg = *withMessageID(l, &msg)
	made := attemptSent
	switch {
	case !conn.IsActive:
		a.Outcome = core.OutcomePermanent
		a.Error = fmt.Sprintf("connection %d is inactive", conn.ID)
		s.metrics().SendFinished(conn.ID, conn.Driver, a.Outcome, 0)
	default:
		tr, err := s.transports.get(conn)
		if err == nil {
			ln := s.lanes.get(conn, int(s.live.Load()))
			ln.readLimits(ctx, tr, s)
			release, epoch, until, ok := s.gate(stop, ln, conn)
			if !ok {
				return core.LogOutcome{NextAttemptAt: until}, attemptDeferred
			}
			start = time.Now().UTC()
			a.At = start
			s.metrics().SendStarted(conn.ID, conn.Driver)
			sctx, cancel := context.WithTimeout(ctx, s.SendTimeout)
			res := sendRecipients(sctx, tr, &msg, l, driverCaps(conn.Driver))
			cancel()
			rc := res.receipt
			err = res.err
			atFloor := ln.finished(epoch, time.Since(start), err)
			release()
			out.Recipients = rc.Recipients
			out.ProviderMessageIDs = res.ids
			if err == nil {
				ln.sent()
				a.Outcome = core.OutcomeDelivered
				a.Response = rc.Response
				a.ProviderMessageID = rc.MessageID
				out.ProviderMessageID = rc.MessageID
				out.LastError = ""
				if l.Recipients != nil && l.ProviderMessageID != "" {
					// A retry of the deferred recipients: the log keeps its
					// first id, and this attempt's ids are added.
					out.ProviderMessageID = l.ProviderMessageID
					if out.ProviderMessageIDs == nil && rc.MessageID != "" {
						out.ProviderMessageIDs = []string{rc.MessageID}
					}
				}
				if rc.Recipients != nil {
					// Accepted for some: deferred ones make it a temporary
					// outcome (retried alone), refusals are noted.
					a.Outcome, out.LastError = recipientsOutcome(rc.Recipients)
					a.Error = out.LastError
				}
				s.metrics().SendFinished(conn.ID, conn.Driver, a.Outcome, time.Since(start))
				break
			}
			if rc.Recipients != nil {
				if o, _ := recipientsOutcome(rc.Recipients); o == core.OutcomeTemporary {
					err = core.Temporary(err)
				}
			}
			if wait, limited := core.AsRateLimited(err); limited {
				// The lane's level was lowered (finished); only when it
				// cannot go lower, or the provider named a wait, does the
				// connection pause.
				if wait <= 0 && atFloor {
					wait = DefaultRateLimitPause
				}
				until := time.Now().UTC().Add(wait)
				if wait > 0 {
					ln.pause(until)
				}
				a.Outcome = core.OutcomeRateLimited
				out.Attempts, out.PhaseAttempts = l.Attempts, l.PhaseAttempts
				out.NextAttemptAt = until
				made = attemptRateLimited
			}
			s.metrics().ProviderError(conn.ID, conn.Driver, errorClass(conn.Driver, err))
		}
		a.Error = err.Error()
		if a.Outcome == "" {
			switch {
			case core.IsUncertain(err):
				a.Outcome = core.OutcomeUncertain
			case core.IsTemporary(err):
				a.Outcome = core.OutcomeTemporary
			default:
				a.Outcome = core.OutcomePermanent
			}
		}
		s.metrics().SendFinished(conn.ID, conn.Driver, a.Outcome, time.Since(start))
	}
	if a.Error != "" && a.Outcome != core.OutcomeDelivered {
		out.LastError = a.Error
	}
	a.DurationMS = time.Since(start).Milliseconds()
	out.History = []core.Attempt{a}
	if a.Outcome == core.OutcomeUncertain {
		markUncertain(&out, &msg, st.uncertainGrace)
	} else if uncertainPending(l) && made == attemptRateLimited {
		// Not sent: the resend still owes the uncertain Message-ID.
		out.LastError = l.LastError
	} else if uncertainPending(l) {
		// The lookup after the grace did not find the message: this is
		// its resend, with the same Message-ID.
		out.History[0].Response = strings.TrimSpace("Not found at the provider after the uncertain attempt: sent again. " + a.Response)
	}
	s.debugAttempt(l, conn, &msg, out.History[0])
	return out, made
}

// gate waits for conn's turn: a send slot of its lane and of the process,
// a token of its rate limit, the end of a pause. It returns the release
// of the slots and the lane's epoch to report the outcome with
// (lane.finished), or ok false and when the message should be tried
// again (the wait would pass HandBackAfter, its daily quota is spent, or
// stop ended).
func (s *Service) gate(stop context.Context, ln *lane, conn *core.Connection) (release func(), epoch int64, until time.Time, ok bool) {
	now := time.Now().UTC()
	if t := ln.quotaSpentUntil(); !t.IsZero() {
		return nil, 0, t, false
	}
	if p := ln.pausedUntil(); p.Sub(now) > HandBackAfter {
		return nil, 0, p, false
	}
	epoch, err := ln.acquire(stop)
	if err != nil {
		return nil, 0, now, false
	}
	select {
	case s.inFlight <- struct{}{}:
	case <-stop.Done():
		ln.release()
		return nil, 0, now, false
	}
	if stop.Err() != nil {
		// The slot came as the stop did: a send not begun stays untried.
		<-s.inFlight
		ln.release()
		return nil, 0, now, false
	}
	release = func() { <-s.inFlight; ln.release() }
	wait := ln.reserve(time.Now())
	for wait > 0 {
		if wait > HandBackAfter {
			ln.unreserve()
			release()
			return nil, 0, time.Now().UTC().Add(wait), false
		}
		s.metrics().RateLimitWait(conn.ID, conn.Driver, wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-stop.Done():
			t.Stop()
			release()
			return nil, 0, time.Now().UTC(), false
		}
		// A rate-limit answer may have paused the lane meanwhile.
		wait = time.Until(ln.pausedUntil())
	}
	return release, epoch, time.Time{}, true
}

// deferred hands l back to the queue untried, due at next.
func deferred(l *core.Log, next time.Time) core.LogOutcome {
	out := handBack(l)
	if !next.IsZero() {
		out.NextAttemptAt = next
	}
	return out
}

// debugAttempt fires the mail_svc_api_debug event with one attempt's
// payload (the MAIL_SVC_DEBUG_MAILER channel writes it); without a
// listener it builds nothing.
func (s *Service) debugAttempt(l *core.Log, conn *core.Connection, msg *core.Message, a core.Attempt) {
	if !s.Hooks.HasAction(core.HookAPIDebug) {
		return
	}
	rcpts := make([]string, 0, len(msg.To)+len(msg.Cc)+len(msg.Bcc))
	for _, r := range msg.Recipients() {
		rcpts = append(rcpts, r.Email)
	}
	s.Hooks.DoAction(core.HookAPIDebug, map[string]any{
		"log_id":              l.ID,
		"connection_id":       conn.ID,
		"driver":              conn.Driver,
		"from":                msg.From.Email,
		"recipients":          rcpts,
		"subject":             msg.Subject,
		"attachments":         len(msg.Attachments),
		"outcome":             a.Outcome,
		"response":            a.Response,
		"error":               a.Error,
		"provider_message_id": a.ProviderMessageID,
		"duration_ms":         a.DurationMS,
	})
}

// transportCache keeps one transport per connection id, rebuilt when the
// connection's UpdatedAt changes, so SMTP sessions are reused.
type transportCache struct {
	env core.DriverEnv
	mu  sync.Mutex
	m   map[int64]cachedTransport
}

type cachedTransport struct {
	updated time.Time
	tr      core.Transport
}

func (c *transportCache) get(conn *core.Connection) (core.Transport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ct, ok := c.m[conn.ID]; ok && ct.updated.Equal(conn.UpdatedAt) {
		return ct.tr, nil
	}
	if conn.SettingsError != "" {
		return nil, core.Permanent(fmt.Errorf("connection %d: %s", conn.ID, conn.SettingsError))
	}
	d, ok := core.LookupDriver(conn.Driver)
	if !ok {
		return nil, core.Permanent(fmt.Errorf("connection %d: unknown driver %q", conn.ID, conn.Driver))
	}
	tr, err := d.New(conn, c.env)
	if err != nil {
		return nil, core.Permanent(fmt.Errorf("connection %d: build %s transport: %w", conn.ID, conn.Driver, err))
	}
	if c.m == nil {
		c.m = map[int64]cachedTransport{}
	}
	if old, ok := c.m[conn.ID]; ok {
		closeTransport(old.tr)
	}
	c.m[conn.ID] = cachedTransport{updated: conn.UpdatedAt, tr: tr}
	return tr, nil
}

func (c *transportCache) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, ct := range c.m {
		closeTransport(ct.tr)
		delete(c.m, id)
	}
}

func closeTransport(tr core.Transport) {
	if cl, ok := tr.(io.Closer); ok {
		_ = cl.Close()
	}
}
