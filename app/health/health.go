// Package health verifies connections without sending mail (the
// scheduler's health_check job) and watches the queue for a stall (its
// queue_stalled job), raising alerts when things go wrong and when they
// recover.
//
// # What a health check does
//
// Every active connection is checked: a transport is built with its
// driver's New from the effective settings (secrets decrypted, constants
// applied) and, when the transport implements core.Verifier, Verify runs
// under a timeout (SMTP: connect, STARTTLS, AUTH; API drivers: their
// authenticated read). The verdict is stored with
// core.ConnectionStateStore.UpdateConnectionHealth:
//
//   - Verify passed: healthy, or degraded when it took longer than
//     SlowThreshold (MAILSVC_HEALTH_SLOW_MS).
//   - Verify failed, timed out, the transport could not be built, the
//     driver is unknown, or the stored secrets cannot be decrypted: down,
//     with the reason in last_error (sensitive setting values scrubbed).
//   - The transport has no Verify (a third-party driver): unknown, with
//     last_checked_at set — building it proved the settings are readable,
//     but nothing was verified, and sending a message to find out is not a
//     health check.
//
// Skipped, with nothing stored: inactive connections (never used, so
// never checked), and OAuth connections whose oauth_status is pending or
// needs_authorization: they hold no usable token, their oauth_status
// already says why, and an invalid_grant has raised its own
// oauth_refresh_failed alert — a second, connection_down alert would say
// the same thing twice.
//
// Alerts follow transitions of the stored status: a connection that
// becomes down (from any other status) raises core.EventConnectionDown
// once; a down connection that passes again raises
// core.EventConnectionRecovered once. Staying down raises nothing more.
// Only one replica runs the job per interval (app/scheduler), so each
// transition is seen once.
package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Defaults of the Checker's fields.
const (
	DefaultSlowThreshold = 5 * time.Second
	DefaultTimeout       = 30 * time.Second
	DefaultConcurrency   = 4
)

// ConnectionSource lists connections and returns one with its secrets
// decrypted and constants applied (app.Connections: List returns masked
// settings, so each check reads Effective).
type ConnectionSource interface {
	List(ctx context.Context, offset, limit int) ([]*core.Connection, int, error)
	Effective(ctx context.Context, id int64) (*core.Connection, error)
}

// HealthStore records health verdicts (core.ConnectionStateStore).
type HealthStore interface {
	UpdateConnectionHealth(ctx context.Context, id int64, h core.ConnectionHealth) error
}

// Checker verifies connections. Set the fields, then call CheckAll; zero
// tuning fields take the defaults.
type Checker struct {
	Connections ConnectionSource
	State       HealthStore
	// Env is passed to drivers when transports are built.
	Env core.DriverEnv
	// Alerts, when set, hears of connections going down and recovering.
	Alerts core.Alerter
	Logger *slog.Logger
	// SlowThreshold marks a passing check slower than this degraded.
	SlowThreshold time.Duration
	// Timeout bounds one connection's check.
	Timeout time.Duration
	// Concurrency is how many connections are checked at once.
	Concurrency int
	// SensitiveKeys adds setting keys (mail_svc_sensitive_keys) whose
	// values are scrubbed from stored errors, beyond core.IsSensitiveKey's.
	SensitiveKeys func() []string
	// Site names the site in alerts.
	Site string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (c *Checker) now() time.Time { return core.NowFrom(c.Now).UTC() }

func (c *Checker) logger() *slog.Logger { return core.LoggerOr(c.Logger) }

// CheckAll checks every active connection, at most Concurrency at a time,
// stores each verdict and raises the alerts of the transitions. It
// returns an error when the connections cannot be listed, or when some
// verdicts could not be read or stored (the others are stored).
func (c *Checker) CheckAll(ctx context.Context) error {
	conns, _, err := c.Connections.List(ctx, 0, 0)
	if err != nil {
		return fmt.Errorf("health check: list connections: %w", err)
	}
	limit := c.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, listed := range conns {
		if !listed.IsActive || skipOAuth(listed.OAuthStatus) {
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return fmt.Errorf("health check: %w", ctx.Err())
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := c.checkOne(ctx, listed); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// skipOAuth reports whether an OAuth status means there is no token to
// check with.
func skipOAuth(status string) bool {
	return status == core.OAuthPending || status == core.OAuthNeedsAuthorization
}

// checkOne checks one listed connection, stores the verdict and alerts on
// a transition from the listed (previous) status.
func (c *Checker) checkOne(ctx context.Context, listed *core.Connection) error {
	conn, err := c.Connections.Effective(ctx, listed.ID)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil // deleted since the list
	} else if err != nil {
		return fmt.Errorf("health check of connection %d: %w", listed.ID, err)
	}
	if !conn.IsActive || skipOAuth(conn.OAuthStatus) {
		return nil // changed since the list
	}
	h := c.Check(ctx, conn)
	if err := c.State.UpdateConnectionHealth(context.WithoutCancel(ctx), conn.ID, h); err != nil {
		if core.ErrorCode(err) == core.ENOTFOUND {
			return nil
		}
		return fmt.Errorf("health check of connection %d: store the verdict: %w", conn.ID, err)
	}
	c.logger().Debug("health check", "connection", conn.ID, "status", h.Status, "error", h.Error)
	c.alert(ctx, conn, listed.HealthStatus, h)
	return nil
}

// Check verifies one connection (with effective settings) without sending
// and returns the verdict; it stores nothing.
func (c *Checker) Check(ctx context.Context, conn *core.Connection) core.ConnectionHealth {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	slow := c.SlowThreshold
	if slow <= 0 {
		slow = DefaultSlowThreshold
	}
	down := func(msg string) core.ConnectionHealth {
		return core.ConnectionHealth{Status: core.HealthDown, CheckedAt: c.now(), Error: c.scrub(conn, msg)}
	}
	if conn.SettingsError != "" {
		return down(conn.SettingsError)
	}
	d, ok := core.LookupDriver(conn.Driver)
	if !ok || d.New == nil {
		return down(fmt.Sprintf("unknown driver %q", conn.Driver))
	}
	tr, err := d.New(conn, c.Env)
	if err != nil {
		return down(fmt.Sprintf("build %s transport: %v", conn.Driver, err))
	}
	defer func() {
		if cl, ok := tr.(io.Closer); ok {
			_ = cl.Close()
		}
	}()
	v, ok := tr.(core.Verifier)
	if !ok {
		return core.ConnectionHealth{Status: core.HealthUnknown, CheckedAt: c.now()}
	}
	vctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	err = v.Verify(vctx)
	took := time.Since(start)
	switch {
	case err != nil && vctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		return down(fmt.Sprintf("no answer within %v: %v", timeout, err))
	case err != nil:
		return down(err.Error())
	case took > slow:
		// It passed, so no error (core.ConnectionHealth); the log says why.
		c.logger().Info("health check slow", "connection", conn.ID, "took_ms", took.Milliseconds(), "threshold_ms", slow.Milliseconds())
		return core.ConnectionHealth{Status: core.HealthDegraded, CheckedAt: c.now()}
	}
	return core.ConnectionHealth{Status: core.HealthHealthy, CheckedAt: c.now()}
}

// scrub replaces the values of the connection's sensitive settings in
// text, in case a driver's error echoes one.
func (c *Checker) scrub(conn *core.Connection, text string) string {
	var extra []string
	if c.SensitiveKeys != nil {
		extra = c.SensitiveKeys()
	}
	for k, v := range conn.Settings {
		s, ok := v.(string)
		if !ok || len(s) < 4 || !core.IsSensitiveKey(k, extra) {
			continue
		}
		text = strings.ReplaceAll(text, s, "********")
	}
	return text
}

// alert raises the alert of a transition from prev to h.Status, if any.
func (c *Checker) alert(ctx context.Context, conn *core.Connection, prev string, h core.ConnectionHealth) {
	if c.Alerts == nil {
		return
	}
	a := core.Alert{ConnectionID: conn.ID, ConnectionName: conn.Name, Site: c.Site, At: h.CheckedAt}
	switch {
	case h.Status == core.HealthDown && prev != core.HealthDown:
		a.Event = core.EventConnectionDown
		a.Title = fmt.Sprintf("Connection down: %s", conn.Name)
		a.Message = fmt.Sprintf("The health check of connection %d %q (%s) failed: %s", conn.ID, conn.Name, conn.Driver, h.Error)
	case prev == core.HealthDown && (h.Status == core.HealthHealthy || h.Status == core.HealthDegraded):
		a.Event = core.EventConnectionRecovered
		a.Title = fmt.Sprintf("Connection recovered: %s", conn.Name)
		a.Message = fmt.Sprintf("Connection %d %q (%s) passed its health check again (%s).", conn.ID, conn.Name, conn.Driver, h.Status)
	default:
		return
	}
	c.Alerts.Raise(context.WithoutCancel(ctx), a)
}
