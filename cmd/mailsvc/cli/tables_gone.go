package cli

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
)

// tablesGoneMessage is the one line a running service logs, at INFO,
// when its tables were dropped under it (mailsvc uninstall) before it
// stops.
const tablesGoneMessage = "mailsvc tables are gone (uninstalled?); stopping"

// tablesGoneGuard is the serving process's log handler. Every loop of the
// service (workers, scheduler, alerts, host hooks, requests) reports the
// errors of the store through the log; the first record whose error says
// that a table of the service does not exist (store.IsMissingTable) is
// replaced by one line, tablesGoneMessage, and stops the service; the
// ones that follow while it shuts down are dropped.
type tablesGoneGuard struct {
	next  slog.Handler
	state *tablesGoneState
}

type tablesGoneState struct {
	once sync.Once
	gone atomic.Bool
	stop func()
	// uninstalled, once set, confirms that the tables were dropped and
	// not the whole database (an outage: the service stays up, not
	// ready); nil confirms every time.
	uninstalled atomic.Pointer[func() bool]
}

// newTablesGoneGuard wraps next; stop is called once, when the tables are
// found gone.
func newTablesGoneGuard(next slog.Handler, stop func()) *tablesGoneGuard {
	return &tablesGoneGuard{next: next, state: &tablesGoneState{stop: stop}}
}

// confirmWith makes the guard stop only when uninstalled also says the
// tables were dropped (and not the database).
func (g *tablesGoneGuard) confirmWith(uninstalled func() bool) {
	g.state.uninstalled.Store(&uninstalled)
}

// Gone reports whether the tables were found gone.
func (g *tablesGoneGuard) Gone() bool { return g.state.gone.Load() }

// Enabled implements slog.Handler.
func (g *tablesGoneGuard) Enabled(ctx context.Context, l slog.Level) bool {
	return g.next.Enabled(ctx, l)
}

// Handle implements slog.Handler. A loop's record whose own error says a
// table is missing stops the service; the SQL trace of the query that
// met it (gorm's "trace" group) is dropped, not logged as an ERROR, and
// stops nothing by itself: a database that is gone for a moment leaves
// the service running, not ready, until a loop meets the missing tables.
func (g *tablesGoneGuard) Handle(ctx context.Context, r slog.Record) error {
	top, traced := reportsMissingTable(r)
	if traced && !top {
		return nil
	}
	if !top {
		return g.next.Handle(ctx, r)
	}
	if confirm := g.state.uninstalled.Load(); confirm != nil && !g.state.gone.Load() && !(*confirm)() {
		return g.next.Handle(ctx, r)
	}
	var err error
	g.state.once.Do(func() {
		g.state.gone.Store(true)
		// An expected stop (mailsvc uninstall), not a failure: INFO.
		err = g.next.Handle(ctx, slog.NewRecord(time.Now(), slog.LevelInfo, tablesGoneMessage, 0))
		g.state.stop()
	})
	return err
}

// WithAttrs implements slog.Handler.
func (g *tablesGoneGuard) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &tablesGoneGuard{next: g.next.WithAttrs(attrs), state: g.state}
}

// WithGroup implements slog.Handler.
func (g *tablesGoneGuard) WithGroup(name string) slog.Handler {
	return &tablesGoneGuard{next: g.next.WithGroup(name), state: g.state}
}

// reportsMissingTable reports whether a record carries an error (or an
// error's text) saying that a table of the service does not exist: top
// among its own attributes, traced inside a group (gorm's "trace" group
// holds its "error").
func reportsMissingTable(r slog.Record) (top, traced bool) {
	r.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindGroup {
			traced = traced || groupReportsMissingTable(a)
		} else {
			top = attrReportsMissingTable(a)
		}
		return !top
	})
	return top, traced
}

// groupReportsMissingTable is attrReportsMissingTable for the attributes
// of a group, at any depth.
func groupReportsMissingTable(a slog.Attr) bool {
	for _, g := range a.Value.Group() {
		if g.Value.Kind() == slog.KindGroup && groupReportsMissingTable(g) || attrReportsMissingTable(g) {
			return true
		}
	}
	return false
}

// attrReportsMissingTable reports whether one attribute is an error (or
// an error's text) saying that a table of the service does not exist.
func attrReportsMissingTable(a slog.Attr) bool {
	switch v := a.Value.Any().(type) {
	case error:
		return store.IsMissingTable(v)
	case string:
		return store.IsMissingTable(textError(v))
	}
	return false
}

// textError is an error whose text is a logged string.
type textError string

func (e textError) Error() string { return string(e) }
