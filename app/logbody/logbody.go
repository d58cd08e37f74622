// Package logbody decides what the email log keeps of a message's body
// once the message reaches a final state (delivered, or failed for
// good): the log_body modes (redacted, full, none) with their per-source
// overrides, the log_attachments setting, and the redaction of one-time
// credentials. The message delivered is never changed: a queued message
// keeps its whole body in the queue until it is final (docs/logs.md).
package logbody

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Settings keys of the log body modes (in the free settings scope).
const (
	// SettingMode is log_body: the mode of every source without an
	// override.
	SettingMode = "log_body"
	// SettingSourceModes is log_body_sources: an object of source →
	// mode that overrides log_body for those sources.
	SettingSourceModes = "log_body_sources"
	// SettingKeepAttachments is log_attachments: in redacted mode, keep
	// the attachments' bytes (so a log with nothing redacted can be
	// resent with them) rather than their names, types and sizes only.
	SettingKeepAttachments = "log_attachments"
)

// Policy is the log body settings.
type Policy struct {
	// Mode is log_body; "" means core.LogBodyRedacted.
	Mode string
	// Sources maps a source (core.Log.Source) to its mode.
	Sources map[string]string
	// KeepAttachments is log_attachments.
	KeepAttachments bool
}

// PolicyOf reads the Policy from the free settings as a map (decoded by
// core.DecodeGeneralSettings).
func PolicyOf(st core.Settings) Policy {
	return PolicyFrom(core.DecodeGeneralSettings(st))
}

// PolicyFrom returns the Policy of the decoded free settings.
func PolicyFrom(g core.GeneralSettings) Policy {
	p := Policy{Mode: g.LogBody, KeepAttachments: g.LogAttachments}
	if len(g.LogBodySources) > 0 {
		p.Sources = g.LogBodySources
	}
	return p
}

// ModeFor returns the mode of a message from source: its override, else
// log_body, else redacted.
func (p Policy) ModeFor(source string) string {
	if m, ok := p.Sources[source]; ok {
		return m
	}
	if validMode(p.Mode) {
		return p.Mode
	}
	return core.LogBodyRedacted
}

func validMode(m string) bool {
	for _, v := range core.LogBodyModes {
		if m == v {
			return true
		}
	}
	return false
}

// Keep returns what the log keeps of m, a message from source, under p:
// in full mode the body as it is; in redacted mode the body with its
// one-time credentials replaced (Redactor.Body), the attachments' bytes
// dropped unless KeepAttachments; in none mode no body and no
// attachment bytes.
func (p Policy) Keep(m *core.Message, source string, r *Redactor) *core.KeptBody {
	mode := p.ModeFor(source)
	k := &core.KeptBody{Mode: mode}
	switch mode {
	case core.LogBodyFull:
		return k
	case core.LogBodyNone:
		k.Changed = m.Text != "" || m.HTML != ""
		k.DropAttachments = len(m.Attachments) > 0
		return k
	}
	if r == nil {
		r = &Redactor{}
	}
	var nt, nh int
	k.Text, nt = r.Body(m.Text)
	k.HTML, nh = r.Body(m.HTML)
	k.Redacted = nt + nh
	k.Changed = k.Redacted > 0
	k.DropAttachments = !p.KeepAttachments && len(m.Attachments) > 0
	return k
}

// View returns the log as an administrator may see it: a log whose body
// has no mode applied yet (queued or sending, or stored before the
// modes) shows what the log will keep, so a live link is never on
// screen, and attachments whose bytes the log will not keep are shown
// without them (their sizes kept). It changes l in place; the attachment
// slice is replaced, not written.
func (p Policy) View(l *core.Log, r *Redactor) {
	if l.BodyMode != "" {
		return
	}
	k := p.Keep(&l.Message, l.Source, r)
	if k.Changed {
		l.Message.Text, l.Message.HTML = k.Text, k.HTML
	}
	if k.DropAttachments {
		list := make([]core.Attachment, len(l.Message.Attachments))
		for i, a := range l.Message.Attachments {
			a.Size, a.Data = max(len(a.Data), a.Size), nil
			list[i] = a
		}
		l.Message.Attachments = list
	}
	l.RedactedCount = k.Redacted
}

// PatternSource returns the site's redaction patterns as the WordPress
// bridge publishes its mail_svc_log_redact_patterns filter.
type PatternSource func(ctx context.Context) ([]string, error)

// patternsTTL is how long a Redactors keeps the patterns it read.
const patternsTTL = time.Minute

// Redactors gives the Redactor of the site's patterns: those the bridge
// publishes (Published) passed through the Go filter
// core.HookLogRedactPatterns. It reads them at most once a minute. The
// zero value gives the built-in rules only. Safe for concurrent use.
type Redactors struct {
	Hooks     *core.Hooks
	Published PatternSource
	Logger    *slog.Logger

	mu  sync.Mutex
	at  time.Time
	cur *Redactor
}

// Redactor returns the current Redactor. When the published patterns
// cannot be read, the last ones read (or none) apply. A nil Redactors
// gives the built-in rules only.
func (rs *Redactors) Redactor(ctx context.Context) *Redactor {
	if rs == nil {
		return &Redactor{}
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.cur != nil && time.Since(rs.at) < patternsTTL {
		return rs.cur
	}
	var patterns []string
	if rs.Published != nil {
		got, err := rs.Published(ctx)
		if err != nil && rs.cur != nil {
			rs.logger().Warn("read the log redaction patterns; keeping the last ones", "err", err)
			rs.at = time.Now()
			return rs.cur
		} else if err != nil {
			rs.logger().Warn("read the log redaction patterns", "err", err)
		}
		patterns = got
	}
	if v, ok := rs.Hooks.ApplyFilters(core.HookLogRedactPatterns, patterns).([]string); ok {
		patterns = v
	}
	r, errs := NewRedactor(patterns)
	for _, err := range errs {
		rs.logger().Warn("a log redaction pattern is left out", "err", err)
	}
	rs.cur, rs.at = r, time.Now()
	return r
}

func (rs *Redactors) logger() *slog.Logger { return core.LoggerOr(rs.Logger) }

// SettingsSource returns the free settings with defaults applied
// (app.Settings.Get).
type SettingsSource interface {
	Get(ctx context.Context) (map[string]any, error)
}

// Keeper applies the current log body settings to logs that are stored
// already final, outside the delivery path: the logs imported from other
// plugins.
type Keeper struct {
	Store     core.LogBodyStore
	Settings  SettingsSource
	Redaction *Redactors
}

// KeepBodies applies the settings to logs (stored, delivered or failed,
// their IDs set) in one short transaction.
func (k *Keeper) KeepBodies(ctx context.Context, logs []*core.Log) error {
	st, err := k.Settings.Get(ctx)
	if err != nil {
		return fmt.Errorf("keep log bodies: %w", err)
	}
	p, r := PolicyOf(st), k.Redaction.Redactor(ctx)
	bodies := make(map[int64]*core.KeptBody, len(logs))
	for _, l := range logs {
		bodies[l.ID] = p.Keep(&l.Message, l.Source, r)
	}
	if _, err := k.Store.KeepLogBodies(ctx, bodies); err != nil {
		return fmt.Errorf("keep log bodies: %w", err)
	}
	return nil
}
