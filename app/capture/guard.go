// Package capture is the staging guard: it keeps the live site's
// fingerprint, works out whether mail is captured (held, not sent) on the
// running site, and releases captured messages (docs/staging.md).
package capture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Site reads the running site's fingerprint and what WordPress says of
// its environment.
type Site interface {
	// Fingerprint returns the running site's fingerprint.
	Fingerprint(ctx context.Context) (core.Fingerprint, error)
	// EnvironmentType returns wp_get_environment_type() as the service
	// knows it ("" when unknown, which counts as production).
	EnvironmentType(ctx context.Context) (string, error)
}

// SettingsSource returns the free settings with defaults applied
// (app.Settings.Get).
type SettingsSource interface {
	Get(ctx context.Context) (map[string]any, error)
}

// DefaultTTL is how long the state the delivery path asks for is reused.
const DefaultTTL = time.Second

// ErrStateUnknown is the error Holds wraps when the guard has never
// worked out its state and reading it fails (the database blinked as the
// process started, the site's options could not be read): it cannot tell
// whether the message may be sent, so it neither sends nor captures it.
var ErrStateUnknown = errors.New("staging guard: the state is not known yet")

// Guard decides whether mail is captured. It is safe for concurrent use.
type Guard struct {
	Store    core.CaptureStore
	Site     Site
	Settings SettingsSource
	// Environment is MAILSVC_ENVIRONMENT ("" when not set).
	Environment string
	// Wake, when set, is called after a release (the delivery service's
	// Wake), so the released messages go at once.
	Wake   func()
	Logger *slog.Logger
	// TTL bounds the age of the state Holds uses; 0 means DefaultTTL, a
	// negative TTL reads the state for every message. State, Adopt and
	// Record refresh it, so a change seen through GET /capture is the one
	// the next message meets.
	TTL time.Duration

	mu     sync.Mutex
	cached core.CaptureState
	at     time.Time
	known  bool
	// warned: a failed read was warned of, and no read succeeded since
	// (one warning an outage, not one a message).
	warned bool
	// reading is the evaluation in flight for Holds, which the messages
	// asking meanwhile wait for instead of each reading the state
	// (nil when none is; never with a negative TTL).
	reading *evaluation
}

// evaluation is one read of the state that several messages wait for.
type evaluation struct {
	done  chan struct{}
	state core.CaptureState
	err   error
}

func (g *Guard) logger() *slog.Logger { return core.LoggerOr(g.Logger) }

// evaluate works out the state now, without the count of captured logs.
func (g *Guard) evaluate(ctx context.Context) (core.CaptureState, error) {
	live, err := g.Store.LiveFingerprint(ctx)
	if err != nil {
		return core.CaptureState{}, err
	}
	current, err := g.Site.Fingerprint(ctx)
	if err != nil {
		return core.CaptureState{}, fmt.Errorf("read the site's fingerprint: %w", err)
	}
	wpEnv, err := g.Site.EnvironmentType(ctx)
	if err != nil {
		return core.CaptureState{}, fmt.Errorf("read the site's environment type: %w", err)
	}
	m, err := g.Settings.Get(ctx)
	if err != nil {
		return core.CaptureState{}, fmt.Errorf("read settings: %w", err)
	}
	st := core.DecodeGeneralSettings(m)
	allow := st.CaptureAllowList
	for i, a := range allow {
		allow[i] = strings.ToLower(strings.TrimSpace(a))
	}
	s := core.DecideCapture(core.CaptureInput{
		Live: live, Current: current, Environment: g.Environment, WordPressEnvironment: wpEnv,
		Simulation: st.SimulationEnabled, AllowList: allow,
	})
	g.remember(s)
	return s, nil
}

func (g *Guard) remember(s core.CaptureState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.known && g.cached.Mode != s.Mode {
		g.logger().Warn("staging guard: mail "+map[bool]string{true: "is now captured", false: "is sent again"}[s.Capturing()],
			"reason", s.Reason, "message", s.Message)
	}
	if g.warned {
		g.logger().Info("staging guard: the state can be read again", "mode", s.Mode, "reason", s.Reason)
		g.warned = false
	}
	g.cached, g.at, g.known = s, time.Now(), true
}

// State returns the state now, read afresh, with the count of captured
// messages.
func (g *Guard) State(ctx context.Context) (core.CaptureState, error) {
	s, err := g.evaluate(ctx)
	if err != nil {
		return s, err
	}
	if s.Captured, err = g.Store.CountCaptured(ctx); err != nil {
		return s, err
	}
	return s, nil
}

// current returns the state at most TTL old. When it cannot be read the
// last known state stands; with none known yet, the error wraps
// ErrStateUnknown (the delivery path then neither sends nor captures:
// on a copy of a live site, sending would mail its customers, and
// capturing would hold a live site's mail because its database blinked).
func (g *Guard) current(ctx context.Context) (core.CaptureState, error) {
	ttl := g.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	g.mu.Lock()
	if g.known && g.TTL >= 0 && time.Since(g.at) < ttl {
		s := g.cached
		g.mu.Unlock()
		return s, nil
	}
	// One read at a time: the messages that ask while the state is being
	// read wait for that read (a queue full of messages would otherwise
	// read it once each when the TTL ends).
	if ev := g.reading; ev != nil {
		g.mu.Unlock()
		<-ev.done
		return g.readOutcome(ev.state, ev.err)
	}
	var ev *evaluation
	if g.TTL >= 0 {
		ev = &evaluation{done: make(chan struct{})}
		g.reading = ev
	}
	g.mu.Unlock()
	s, err := g.evaluate(ctx)
	if ev != nil {
		ev.state, ev.err = s, err
		g.mu.Lock()
		if g.reading == ev {
			g.reading = nil
		}
		g.mu.Unlock()
		close(ev.done)
	}
	return g.readOutcome(s, err)
}

// readOutcome is the state a read gave, or the last known one when it
// failed, or, with none known, an error wrapping ErrStateUnknown. A
// failed read is warned of once until a read succeeds again.
func (g *Guard) readOutcome(s core.CaptureState, err error) (core.CaptureState, error) {
	if err == nil {
		return s, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.known {
		if !g.warned {
			g.logger().Warn("staging guard: cannot work out the state and none is known yet; messages wait in the queue until it can", "err", err)
			g.warned = true
		}
		return core.CaptureState{}, fmt.Errorf("%w: %w", ErrStateUnknown, err)
	}
	if !g.warned {
		g.logger().Warn("staging guard: cannot work out the state; the last known one stands", "err", err, "mode", g.cached.Mode)
		g.warned = true
	}
	return g.cached, nil
}

// Holds implements delivery.CaptureGuard: a message is held while mail
// is captured, unless the allow-list covers every one of its recipients
// (simulation mode holds them all; the delivery service handles it).
// When no state is known yet and it cannot be read, it returns an error
// wrapping ErrStateUnknown.
func (g *Guard) Holds(ctx context.Context, msg *core.Message) (string, bool, error) {
	s, err := g.current(ctx)
	if err != nil {
		return "", false, err
	}
	if s.Reason == core.CaptureReasonSimulation {
		return "", false, nil
	}
	if !s.Holds(msg.Recipients()) {
		return "", false, nil
	}
	return s.Message, true, nil
}

// Record records the running site's fingerprint as the live one when
// none is recorded yet (the first start, the first connection, or the
// first start after an upgrade to a version with the guard), and returns
// the one in force. Of processes recording at once, the first wins.
func (g *Guard) Record(ctx context.Context) (core.Fingerprint, error) {
	current, err := g.Site.Fingerprint(ctx)
	if err != nil {
		return core.Fingerprint{}, fmt.Errorf("read the site's fingerprint: %w", err)
	}
	f, err := g.Store.RecordFingerprint(ctx, current.Normalized(), false)
	if err != nil {
		return f, err
	}
	g.forget()
	return f, nil
}

// Adopt records the running site's fingerprint as the live one ("This is
// the live site now") and returns the state that follows. Nothing
// captured is released.
func (g *Guard) Adopt(ctx context.Context) (core.CaptureState, error) {
	current, err := g.Site.Fingerprint(ctx)
	if err != nil {
		return core.CaptureState{}, fmt.Errorf("read the site's fingerprint: %w", err)
	}
	if _, err := g.Store.RecordFingerprint(ctx, current.Normalized(), true); err != nil {
		return core.CaptureState{}, err
	}
	g.logger().Info("staging guard: this site was adopted as the live site", "siteurl", current.SiteURL, "home", current.Home)
	g.forget()
	return g.State(ctx)
}

// Release puts the captured messages ids (every captured message when
// all) back in the queue, to be sent once each, and returns how many.
// Ids that are not captured (sent, deleted, released already) are
// skipped.
func (g *Guard) Release(ctx context.Context, ids []int64, all bool) (int, error) {
	n, err := g.Store.ReleaseCaptured(ctx, ids, all)
	if err != nil {
		return n, err
	}
	if n > 0 && g.Wake != nil {
		g.Wake()
	}
	return n, nil
}

// forget drops the cached state, so the next Holds reads it again.
func (g *Guard) forget() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.at = time.Time{}
	// A read begun before the change is not waited for by later messages.
	g.reading = nil
}
