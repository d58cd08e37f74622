package health

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// SendScope is the settings scope where the health of each connection's
// real sends is kept: the key is the connection id, the value the JSON
// of its SendRecord. It is runtime state, not configuration: no export or
// settings page shows it.
const SendScope = "connection_send_health"

// Send health statuses: what a connection's recent real attempts say.
const (
	SendHealthy  = "healthy"
	SendDegraded = "degraded"
	SendFailing  = "failing"
)

// Defaults of SendHealth's fields.
const (
	DefaultSendWindow       = 10
	DefaultFailingAfter     = 3
	DefaultSendSaveInterval = time.Minute
	// A connection that answered nothing but "slow down" (SMTP 421,
	// HTTP 429) to DefaultRateLimitedFailingAfter attempts or more over
	// DefaultRateLimitedFailingFor or longer, with no delivery since, is
	// failing: a server that says 421 forever is down, not busy.
	DefaultRateLimitedFailingAfter = 5
	DefaultRateLimitedFailingFor   = 5 * time.Minute
)

// SendRecord is the health of one connection's real sends.
type SendRecord struct {
	// Status is SendHealthy, SendDegraded or SendFailing (Classify).
	Status string `json:"status"`
	// Since is when Status began; for SendFailing, the first of the
	// failures in a row.
	Since time.Time `json:"since"`
	// Recent holds the outcomes of the last attempts, oldest first,
	// true for a delivered one (at most the tracker's window).
	Recent []bool `json:"recent"`
	// FailuresInARow counts the failed attempts since the last
	// delivered one.
	FailuresInARow int `json:"failures_in_a_row"`
	// FailingFrom is the first of the failures in a row.
	FailingFrom time.Time `json:"failing_from"`
	// RateLimitedInARow counts the rate-limited attempts since the last
	// delivered one, and RateLimitedFrom is the first of them.
	RateLimitedInARow int       `json:"rate_limited_in_a_row,omitempty"`
	RateLimitedFrom   time.Time `json:"rate_limited_from,omitzero"`
	// LastError is the last failed attempt's error (the connection's
	// secret settings masked) and LastErrorAt when it failed.
	LastError   string     `json:"last_error"`
	LastErrorAt *time.Time `json:"last_error_at"`
	// LastSentAt is when a message was last delivered through it,
	// LastAttemptAt when it was last tried.
	LastSentAt    *time.Time `json:"last_sent_at"`
	LastAttemptAt time.Time  `json:"last_attempt_at"`
}

// Classify returns the status of recent outcomes (oldest first) with
// failuresInARow failures since the last delivered attempt: failing when
// failuresInARow reaches failingAfter, degraded when any of the recent
// attempts failed, healthy otherwise.
func Classify(recent []bool, failuresInARow, failingAfter int) string {
	if failuresInARow >= failingAfter {
		return SendFailing
	}
	for _, ok := range recent {
		if !ok {
			return SendDegraded
		}
	}
	return SendHealthy
}

// SendHealth follows each connection's real delivery attempts in memory
// (Attempt, called by the delivery engine once per attempt) and keeps
// them in the SendScope settings: at once, in the background, when a
// connection's status changes, and every SaveInterval for the rest (the
// time of the last send). Read gives the kept records to any process.
// Run must run for anything to be written.
type SendHealth struct {
	Store core.SettingsStore
	// Window is how many recent attempts count (DefaultSendWindow);
	// FailingAfter how many failures in a row make a connection failing
	// (DefaultFailingAfter).
	Window       int
	FailingAfter int
	// RateLimitedFailingAfter and RateLimitedFailingFor make a
	// connection failing that answered only "slow down" to that many
	// attempts over that long, with no delivery since
	// (DefaultRateLimitedFailingAfter, DefaultRateLimitedFailingFor).
	RateLimitedFailingAfter int
	RateLimitedFailingFor   time.Duration
	// SaveInterval bounds how stale a kept record may be
	// (DefaultSendSaveInterval).
	SaveInterval time.Duration
	// SensitiveKeys adds setting keys whose values are masked in the
	// kept error, beyond core.IsSensitiveKey's.
	SensitiveKeys func() []string
	Logger        *slog.Logger

	mu    sync.Mutex
	m     map[int64]*SendRecord
	dirty map[int64]bool
	kick  chan struct{}
}

func (h *SendHealth) init() {
	if h.m == nil {
		h.m = map[int64]*SendRecord{}
		h.dirty = map[int64]bool{}
		h.kick = make(chan struct{}, 1)
	}
}

// Attempt records one finished attempt through conn: delivered (or
// simulated) counts as a success, a temporary or permanent failure as a
// failure, a rate-limited one as not delivered (degraded; failing when
// the connection answers nothing else for long, see
// RateLimitedFailingAfter); an uncertain attempt says nothing of the
// connection and is left out. It only updates memory.
func (h *SendHealth) Attempt(conn *core.Connection, a core.Attempt) {
	var ok, limited bool
	switch a.Outcome {
	case core.OutcomeDelivered, core.OutcomeSimulated:
		ok = true
	case core.OutcomeTemporary, core.OutcomePermanent:
	case core.OutcomeRateLimited:
		limited = true
	default:
		return
	}
	at := a.At.UTC()
	window, failingAfter := h.window(), h.failingAfter()
	var errText string
	if !ok {
		errText = core.ScrubText(a.Error, h.secrets(conn)...)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	r := h.m[conn.ID]
	if r == nil {
		r = &SendRecord{}
		h.m[conn.ID] = r
	}
	r.LastAttemptAt = at
	r.Recent = append(r.Recent, ok)
	if len(r.Recent) > window {
		r.Recent = append(r.Recent[:0], r.Recent[len(r.Recent)-window:]...)
	}
	switch {
	case ok:
		r.FailuresInARow, r.RateLimitedInARow = 0, 0
		if r.LastSentAt == nil {
			r.LastSentAt = new(time.Time)
		}
		*r.LastSentAt = at // no allocation per delivered message
	case limited:
		r.RateLimitedInARow++
		if r.RateLimitedInARow == 1 {
			r.RateLimitedFrom = at
		}
	default:
		r.FailuresInARow++
		if r.FailuresInARow == 1 {
			r.FailingFrom = at
		}
	}
	if !ok {
		r.LastError = errText
		r.LastErrorAt = &at
	}
	h.dirty[conn.ID] = true
	st := Classify(r.Recent, r.FailuresInARow, failingAfter)
	failingFrom := r.FailingFrom
	if st != SendFailing && r.RateLimitedInARow >= h.rateLimitedFailingAfter() && at.Sub(r.RateLimitedFrom) >= h.rateLimitedFailingFor() {
		st, failingFrom = SendFailing, r.RateLimitedFrom
	}
	if st != r.Status {
		r.Status, r.Since = st, at
		if st == SendFailing {
			r.Since = failingFrom
		}
		select {
		case h.kick <- struct{}{}:
		default:
		}
	}
}

// secrets returns the values of conn's sensitive settings.
func (h *SendHealth) secrets(conn *core.Connection) []string {
	var extra []string
	if h.SensitiveKeys != nil {
		extra = h.SensitiveKeys()
	}
	var out []string
	for k, v := range conn.Settings {
		if s, ok := v.(string); ok && len(s) >= 4 && core.IsSensitiveKey(k, extra) {
			out = append(out, s)
		}
	}
	return out
}

// positiveOr returns v when it is set (above zero), else def.
func positiveOr[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func (h *SendHealth) window() int { return positiveOr(h.Window, DefaultSendWindow) }

func (h *SendHealth) rateLimitedFailingAfter() int {
	return positiveOr(h.RateLimitedFailingAfter, DefaultRateLimitedFailingAfter)
}

func (h *SendHealth) rateLimitedFailingFor() time.Duration {
	return positiveOr(h.RateLimitedFailingFor, DefaultRateLimitedFailingFor)
}

func (h *SendHealth) failingAfter() int { return positiveOr(h.FailingAfter, DefaultFailingAfter) }

// Run keeps the records until ctx ends: it reads the kept ones first (so
// a restart continues them), writes a changed status at once and the
// rest every SaveInterval, and writes what is left when ctx ends.
func (h *SendHealth) Run(ctx context.Context) {
	h.mu.Lock()
	h.init()
	kick := h.kick
	h.mu.Unlock()
	h.load(ctx)
	every := h.SaveInterval
	if every <= 0 {
		every = DefaultSendSaveInterval
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			h.Save(context.WithoutCancel(ctx))
			return
		case <-kick:
		case <-tick.C:
		}
		h.Save(ctx)
	}
}

// load merges the kept records under the ones attempts made meanwhile.
func (h *SendHealth) load(ctx context.Context) {
	kept, err := h.Read(ctx)
	if err != nil {
		h.logger().Warn("read the connections' send health", "err", err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, r := range kept {
		if _, seen := h.m[id]; !seen {
			h.m[id] = &r
		}
	}
}

// Save writes the records that changed since the last write.
func (h *SendHealth) Save(ctx context.Context) {
	h.mu.Lock()
	h.init()
	values := make(map[string]any, len(h.dirty))
	for id := range h.dirty {
		js, err := json.Marshal(h.m[id])
		if err == nil {
			values[strconv.FormatInt(id, 10)] = string(js)
		}
	}
	h.dirty = map[int64]bool{}
	h.mu.Unlock()
	if len(values) == 0 {
		return
	}
	if err := h.Store.SaveSettings(ctx, SendScope, values); err != nil {
		h.logger().Warn("keep the connections' send health", "err", err)
	}
}

// Read returns the kept records by connection id.
func (h *SendHealth) Read(ctx context.Context) (map[int64]SendRecord, error) {
	return ReadSendRecords(ctx, h.Store)
}

// ReadSendRecords returns the records kept in the SendScope of store, by
// connection id; an unreadable record is left out.
func ReadSendRecords(ctx context.Context, store core.SettingsStore) (map[int64]SendRecord, error) {
	m, err := store.LoadSettings(ctx, SendScope)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]SendRecord, len(m))
	for k, v := range m {
		id, err := strconv.ParseInt(k, 10, 64)
		s, ok := v.(string)
		if err != nil || !ok {
			continue
		}
		var r SendRecord
		if json.Unmarshal([]byte(s), &r) == nil {
			out[id] = r
		}
	}
	return out, nil
}

func (h *SendHealth) logger() *slog.Logger { return core.LoggerOr(h.Logger) }

// Effective returns a connection's health from its last scheduled check
// (c.HealthStatus, c.LastCheckedAt) and the record of its real sends (nil
// when none is kept):
//
//   - SendFailing when the sends say failing, or when the check says
//     core.HealthDown and no message went through the connection since
//     that check;
//   - SendDegraded when either says degraded;
//   - SendHealthy when either says healthy;
//   - core.HealthUnknown when neither knows.
func Effective(c *core.Connection, r *SendRecord) string {
	sentSinceCheck := r != nil && r.LastSentAt != nil && (c.LastCheckedAt == nil || r.LastSentAt.After(*c.LastCheckedAt))
	switch {
	case r != nil && r.Status == SendFailing:
		return SendFailing
	case c.HealthStatus == core.HealthDown && !sentSinceCheck:
		return SendFailing
	case (r != nil && r.Status == SendDegraded) || c.HealthStatus == core.HealthDegraded:
		return SendDegraded
	case (r != nil && r.Status == SendHealthy) || c.HealthStatus == core.HealthHealthy:
		return SendHealthy
	}
	return core.HealthUnknown
}
