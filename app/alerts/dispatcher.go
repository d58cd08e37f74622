package alerts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Defaults of a Dispatcher.
const (
	DefaultFoldWindow  = 30 * time.Minute
	DefaultQueueSize   = 256
	DefaultSendTimeout = 15 * time.Second
	DefaultParallel    = 8
	// DefaultDownMemory is how long a sent connection_down waits for its
	// connection_recovered.
	DefaultDownMemory = 30 * 24 * time.Hour
)

// DefaultBackoff is the wait before each retry of a temporary failure.
var DefaultBackoff = []time.Duration{time.Second, 5 * time.Second, 30 * time.Second}

// LeaseStore grants named, expiring leases shared by every replica on one
// database (the store's lease table). AcquireLease returns true when owner
// holds name until now+ttl, false while another owner holds it.
// ReleaseLease ends a lease early when owner holds it (any holder when
// owner is "") and reports whether an unexpired lease was ended; of
// concurrent releases at most one reports true.
type LeaseStore interface {
	AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, owner string) (bool, error)
}

// ThresholdStore counts final failures and records threshold alerts, in
// the database every replica shares (the store).
type ThresholdStore interface {
	// CountFailedLogs returns how many logs failed for good after from,
	// at or before to: the failures recorded in that window (a log that
	// fails, is resent and fails again counts twice), not logs merely
	// changed or imported then.
	CountFailedLogs(ctx context.Context, from, to time.Time) (int, error)
	// ClaimNotificationThreshold records at as channel id's last threshold
	// alert when the previous one is at or before at-quiet (or none), and
	// reports whether it did; of concurrent claims at most one wins.
	ClaimNotificationThreshold(ctx context.Context, id int64, at time.Time, quiet time.Duration) (bool, error)
}

// Dispatcher is the core.Alerter: Raise queues an alert and returns at
// once; Run's worker folds repeats, then delivers the alert to every
// active channel that wants its event, retrying temporary failures.
//
// Folding: an event about one connection (queue_stalled: about none) is
// sent at most once per FoldWindow across every replica sharing Leases
// (the first raise takes the lease "alert:<event>:<connection id>" under
// a fresh owner; the others find it held). connection_recovered is sent
// only after a connection_down was sent for the connection, and once; the
// down fold is not ended by it, so a connection flapping inside the window
// gives one down and one recovery, not one pair per flap. Test alerts are
// never folded. A lease error lets the alert through (better twice than
// never), except a recovery, which is sent only on the record of its down.
//
// Thresholds: a channel whose ThresholdCount is above 1 gets a
// delivery_failed alert only once ThresholdCount messages failed for good
// within its last ThresholdMinutes (counted in Thresholds, so every replica
// sees the same count), and then at most once per ThresholdMinutes: the
// window re-arms from the alert, which says how many failed in how many
// minutes. Such a channel is not folded (its threshold is its fold).
//
// Set the fields, then call Run once; Raise may be called before Run (up
// to QueueSize alerts wait for it).
type Dispatcher struct {
	Channels *Channels
	// Leases folds repeats across replicas; nil folds within this process
	// only.
	Leases LeaseStore
	Logger *slog.Logger
	// FoldWindow is MAILSVC_ALERT_FOLD_MINUTES; 0 means DefaultFoldWindow.
	FoldWindow time.Duration
	// QueueSize bounds the alerts waiting for the worker; when it is full
	// Raise drops the alert with a log line. 0 means DefaultQueueSize.
	QueueSize int
	// Backoff lists the waits before each retry; nil means DefaultBackoff.
	// Its length is the number of retries after the first attempt.
	Backoff []time.Duration
	// SendTimeout bounds one attempt; 0 means DefaultSendTimeout.
	SendTimeout time.Duration
	// Parallel bounds the sends in flight; 0 means DefaultParallel.
	Parallel int
	// DownMemory is how long a sent connection_down is remembered for its
	// recovery; 0 means DefaultDownMemory.
	DownMemory time.Duration
	// History, when set, records every alert that passes folding (test
	// alerts excepted), for the summary report. A failed record is
	// logged; the alert is sent all the same.
	History AlertRecorder
	// Thresholds counts failures for the channels with a threshold; nil
	// sends such channels every failure, as if they had none.
	Thresholds ThresholdStore
	// Now is the clock of the thresholds; nil means time.Now.
	Now func() time.Time
	// Extra returns the channels for alert a that come from the
	// configuration rather than the store (a fleet operator's,
	// MAILSVC_FLEET_ALERT_EMAIL and MAILSVC_FLEET_ALERT_WEBHOOK), routed
	// as the stored ones; nil for none.
	Extra func(ctx context.Context, a core.Alert) []*core.NotificationChannel

	once   sync.Once
	queue  chan core.Alert
	local  *localLeases
	closed chan struct{}
}

var _ core.Alerter = (*Dispatcher)(nil)

func (d *Dispatcher) init() {
	d.once.Do(func() {
		if d.Logger == nil {
			d.Logger = slog.Default()
		}
		if d.FoldWindow <= 0 {
			d.FoldWindow = DefaultFoldWindow
		}
		if d.QueueSize <= 0 {
			d.QueueSize = DefaultQueueSize
		}
		if d.Backoff == nil {
			d.Backoff = DefaultBackoff
		}
		if d.SendTimeout <= 0 {
			d.SendTimeout = DefaultSendTimeout
		}
		if d.Parallel <= 0 {
			d.Parallel = DefaultParallel
		}
		if d.DownMemory <= 0 {
			d.DownMemory = DefaultDownMemory
		}
		d.queue = make(chan core.Alert, d.QueueSize)
		d.local = newLocalLeases()
		d.closed = make(chan struct{})
	})
}

// Raise implements core.Alerter: it queues a and returns at once. When the
// queue is full the alert is dropped and logged; Raise never blocks.
func (d *Dispatcher) Raise(_ context.Context, a core.Alert) {
	d.init()
	if a.At.IsZero() {
		a.At = time.Now().UTC()
	}
	if a.Site == "" && d.Channels != nil {
		a.Site = d.Channels.Site
	}
	select {
	case <-d.closed:
		d.Logger.Warn("alert dropped: the dispatcher has stopped", "event", a.Event, "connection_id", a.ConnectionID)
		return
	default:
	}
	select {
	case d.queue <- a:
	default:
		d.Logger.Warn("alert dropped: the alert queue is full", "event", a.Event, "connection_id", a.ConnectionID, "queue_size", d.QueueSize)
	}
}

// Run delivers queued alerts until ctx is done, then returns ctx's error.
// On shutdown the attempt in flight is cancelled, pending retries are
// abandoned and alerts still queued are dropped with one log line: alerts
// are best-effort and not persisted (the condition that raised one is
// raised again by the next check if it persists).
func (d *Dispatcher) Run(ctx context.Context) error {
	d.init()
	sem := make(chan struct{}, d.Parallel)
	var wg sync.WaitGroup
	defer func() {
		close(d.closed)
		wg.Wait()
		if n := len(d.queue); n > 0 {
			d.Logger.Warn("alerts dropped at shutdown", "count", n)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case a := <-d.queue:
			for _, job := range d.route(ctx, a) {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return ctx.Err()
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					d.deliver(ctx, job.ch, job.alert)
				}()
			}
		}
	}
}

// AlertRecorder keeps the alerts raised (core.AlertHistoryStore).
type AlertRecorder interface {
	RecordAlert(ctx context.Context, a core.Alert) error
}

type delivery struct {
	ch    *core.NotificationChannel
	alert core.Alert
}

// route folds a and returns the channels it goes to.
func (d *Dispatcher) route(ctx context.Context, a core.Alert) []delivery {
	passed := a.Test || d.pass(ctx, a)
	if !passed {
		d.Logger.Debug("alert folded", "event", a.Event, "connection_id", a.ConnectionID)
		if a.Event != core.EventDeliveryFailed {
			return nil // only a threshold channel may still take it
		}
	}
	if passed && !a.Test && d.History != nil {
		if err := d.History.RecordAlert(ctx, a); err != nil {
			d.Logger.Warn("alert not recorded in the alert history", "event", a.Event, "err", err)
		}
	}
	if d.Channels == nil {
		return nil
	}
	list, err := d.Channels.Store.FindNotificationChannels(ctx)
	if err != nil {
		d.Logger.Error("alert not sent: cannot read the alert channels", "event", a.Event, "err", err)
		return nil
	}
	if d.Extra != nil {
		list = append(list, d.Extra(ctx, a)...)
	}
	var out []delivery
	for _, c := range list {
		if !c.IsActive || !c.Wants(a.Event) {
			continue
		}
		alert := a
		if a.Event == core.EventDeliveryFailed && !a.Test && c.Thresholded() && d.Thresholds != nil {
			var ok bool
			if alert, ok = d.threshold(ctx, c, a); !ok {
				continue
			}
		} else if !passed {
			continue
		}
		if a.ConnectionID != 0 && c.Settings.Int(channelConnectionKey, 0) == a.ConnectionID {
			// An email channel never sends through the connection the
			// alert is about: it is the one that is failing.
			d.Logger.Warn("alert not sent through a channel that uses the connection it is about",
				"event", a.Event, "channel_id", c.ID, "connection_id", a.ConnectionID)
			continue
		}
		out = append(out, delivery{ch: d.Channels.effective(c), alert: alert})
	}
	return out
}

// threshold decides whether channel c, which has a threshold, takes the
// delivery_failed alert a now, and returns the alert it takes: the count
// of failures in the channel's window, then a's own message.
func (d *Dispatcher) threshold(ctx context.Context, c *core.NotificationChannel, a core.Alert) (core.Alert, bool) {
	now := time.Now()
	if d.Now != nil {
		now = d.Now()
	}
	window := time.Duration(c.ThresholdMinutes) * time.Minute
	if c.ThresholdAlertedAt != nil && now.Before(c.ThresholdAlertedAt.Add(window)) {
		d.Logger.Debug("alert held: the channel alerted on its threshold inside the window", "channel_id", c.ID)
		return a, false
	}
	n, err := d.Thresholds.CountFailedLogs(ctx, now.Add(-window), now)
	if err != nil {
		d.Logger.Warn("alert threshold unavailable; sending anyway", "channel_id", c.ID, "err", err)
		return a, true
	}
	if n < c.ThresholdCount {
		d.Logger.Debug("alert held below the channel's threshold", "channel_id", c.ID, "failures", n, "threshold", c.ThresholdCount)
		return a, false
	}
	won, err := d.Thresholds.ClaimNotificationThreshold(ctx, c.ID, now, window)
	if err != nil {
		d.Logger.Warn("alert threshold unavailable; sending anyway", "channel_id", c.ID, "err", err)
	} else if !won {
		return a, false // another replica sent it
	}
	minutes := "minutes"
	if c.ThresholdMinutes == 1 {
		minutes = "minute"
	}
	a.Title = fmt.Sprintf("%d deliveries failed in %d %s", n, c.ThresholdMinutes, minutes)
	a.Message = fmt.Sprintf("%d messages failed for good in the last %d %s (this channel's threshold: %d). The latest: %s",
		n, c.ThresholdMinutes, minutes, c.ThresholdCount, a.Message)
	return a, true
}

// pass decides whether a is sent or folded (see Dispatcher).
func (d *Dispatcher) pass(ctx context.Context, a core.Alert) bool {
	if a.Event == core.EventSiteQuota || a.Event == core.EventFloodHeld {
		// Each site's 80 % and 100 % alerts are raised once per period
		// already (the quota usage rows record them), and the flood
		// guard raises one per episode of a source: never folded.
		return true
	}
	fold := fmt.Sprintf("alert:%s:%d", a.Event, a.ConnectionID)
	downOpen := fmt.Sprintf("alert:down-open:%d", a.ConnectionID)
	leases := d.leases()
	if a.Event == core.EventConnectionRecovered {
		open, err := leases.ReleaseLease(ctx, downOpen, "open")
		if err != nil {
			d.Logger.Warn("alert folding unavailable", "event", a.Event, "err", err)
			return false // without the down record a recovery is noise
		}
		// The down fold runs its course: a connection flapping inside
		// the window sends one down and one recovery, not one per flap.
		return open
	}
	won, err := leases.AcquireLease(ctx, fold, randomOwner(), d.FoldWindow)
	if err != nil {
		d.Logger.Warn("alert folding unavailable; sending anyway", "event", a.Event, "err", err)
		won = true
	}
	if won && a.Event == core.EventConnectionDown {
		if _, err := leases.AcquireLease(ctx, downOpen, "open", d.DownMemory); err != nil {
			d.Logger.Warn("cannot record the connection_down for its recovery", "connection_id", a.ConnectionID, "err", err)
		}
	}
	return won
}

func (d *Dispatcher) leases() LeaseStore {
	if d.Leases != nil {
		return d.Leases
	}
	return d.local
}

// deliver sends a through ch, retrying temporary failures after each
// Backoff wait, and logs the outcome (never a secret).
func (d *Dispatcher) deliver(ctx context.Context, ch *core.NotificationChannel, a core.Alert) {
	env := d.Channels.Env
	if env.Mailer != nil && a.ConnectionID != 0 {
		env.Mailer = guardedMailer{next: env.Mailer, failing: a.ConnectionID}
	}
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, d.SendTimeout)
		_, err := notify(actx, ch, env, a)
		cancel()
		if err == nil {
			d.Logger.Info("alert sent", "event", a.Event, "channel_id", ch.ID, "channel_type", ch.Type, "attempts", attempt+1)
			return
		}
		msg := redact(err.Error(), ch)
		if !core.IsTemporary(err) || attempt >= len(d.Backoff) || ctx.Err() != nil {
			d.Logger.Error("alert not sent", "event", a.Event, "channel_id", ch.ID, "channel_type", ch.Type,
				"attempts", attempt+1, "temporary", core.IsTemporary(err), "err", msg)
			return
		}
		wait := retryWait(d.Backoff[attempt], err)
		d.Logger.Warn("alert send failed; retrying", "event", a.Event, "channel_id", ch.ID,
			"attempt", attempt+1, "retry_in", wait.String(), "err", msg)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			d.Logger.Warn("alert abandoned at shutdown", "event", a.Event, "channel_id", ch.ID)
			return
		case <-t.C:
		}
	}
}

// maxRetryAfter caps how long a channel's Retry-After can hold a retry.
const maxRetryAfter = 5 * time.Minute

// retryWait is the pause before a retry: the backoff step, or longer when
// the channel said how long to wait (an error with a RetryAfter method,
// such as a 429 with Retry-After), up to maxRetryAfter.
func retryWait(backoff time.Duration, err error) time.Duration {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		if d := min(ra.RetryAfter(), maxRetryAfter); d > backoff {
			return d
		}
	}
	return backoff
}

// guardedMailer refuses to send through the connection an alert is about.
type guardedMailer struct {
	next    core.AlertMailer
	failing int64
}

func (m guardedMailer) SendAlertEmail(ctx context.Context, connID int64, msg *core.Message) error {
	if connID == m.failing {
		return core.Permanent(fmt.Errorf("connection %d is the one this alert is about; choose another connection for the email channel", connID))
	}
	return m.next.SendAlertEmail(ctx, connID, msg)
}

func randomOwner() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// localLeases is the in-process lease table used when Dispatcher.Leases
// is nil.
type localLeases struct {
	mu     sync.Mutex
	leases map[string]localLease
}

type localLease struct {
	owner string
	until time.Time
}

func newLocalLeases() *localLeases { return &localLeases{leases: map[string]localLease{}} }

func (l *localLeases) AcquireLease(_ context.Context, name, owner string, ttl time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if cur, ok := l.leases[name]; ok && cur.owner != owner && !cur.until.Before(now) {
		return false, nil
	}
	l.leases[name] = localLease{owner: owner, until: now.Add(ttl)}
	return true, nil
}

func (l *localLeases) ReleaseLease(_ context.Context, name, owner string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, ok := l.leases[name]
	if !ok || cur.until.Before(time.Now()) || (owner != "" && cur.owner != owner) {
		return false, nil
	}
	delete(l.leases, name)
	return true, nil
}
