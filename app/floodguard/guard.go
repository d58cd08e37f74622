package floodguard

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// SettingsSource returns the free settings with defaults applied
// (app.Settings.Get).
type SettingsSource interface {
	Get(ctx context.Context) (map[string]any, error)
}

// VolumeSource gives what the logs say of each source's volume
// (core.FloodStore.SourceVolumes).
type VolumeSource interface {
	SourceVolumes(ctx context.Context, since, before time.Time) ([]core.SourceVolume, error)
}

// Defaults of the guard's timings.
const (
	// DefaultLearnEvery is how often the usual volumes are learned
	// again from the logs.
	DefaultLearnEvery = time.Hour
	// DefaultLearnWindow is how far back the logs are read to learn them.
	DefaultLearnWindow = 7 * 24 * time.Hour
	// DefaultSettingsTTL is how long the settings the delivery path uses
	// are reused.
	DefaultSettingsTTL = time.Second
)

// Guard is the flood guard of one site's delivery service. Holds is
// asked once per message on the delivery path, by many workers at once:
// it counts in memory with atomic operations (a source's hour) and one
// of many small locks (a message's recipients), and reads the logs only
// to learn the usual volumes, in the background, at most every
// LearnEvery. It is safe for concurrent use.
type Guard struct {
	Volumes  VolumeSource
	Settings SettingsSource
	// Alerts receives the flood_held alerts; nil raises none.
	Alerts core.Alerter
	// Site names the site in the alerts ("" leaves it to the alert
	// dispatcher).
	Site   string
	Logger *slog.Logger
	// Now returns the time; nil is time.Now.
	Now func() time.Time
	// LearnEvery, LearnWindow and SettingsTTL: 0 means their Default*.
	// A negative SettingsTTL reads the settings for every message.
	LearnEvery, LearnWindow, SettingsTTL time.Duration

	// usual is each source's learned usual hourly volume, replaced
	// whole by each learning.
	usual atomic.Pointer[map[sourceKey]int64]
	// learnedAt (Unix nanoseconds, 0 never) and learning: the last
	// learning, and whether one is under way.
	learnedAt atomic.Int64
	learning  atomic.Bool
	// sources are the sources seen since the process started:
	// sourceKey → *sourceState.
	sources sync.Map
	// manyOnce makes many, the one-message-to-many rule's memory.
	manyOnce sync.Once
	many     *fingerprints
	// settings is the last read of the settings, firstRead the first
	// one, reading whether a read is under way.
	settings  atomic.Pointer[settingsRead]
	firstRead sync.Once
	reading   atomic.Bool
}

// settingsRead is one read of the flood settings and when it was made.
type settingsRead struct {
	st core.FloodSettings
	at time.Time
}

// sourceKey is one source of one site.
type sourceKey struct {
	site   int64
	source string
}

// sourceState is one source's hour and whether it is flooding.
type sourceState struct {
	hour     hourWindow
	flooding atomic.Bool
}

func (g *Guard) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Guard) logger() *slog.Logger {
	if g.Logger != nil {
		return g.Logger
	}
	return slog.Default()
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Holds counts l's message and reports whether the guard holds it and,
// when it does, the sentence that says why. A message already tried or
// released from a hold is neither counted nor held. When a source starts
// flooding the alert is raised here, once per episode.
func (g *Guard) Holds(ctx context.Context, l *core.Log) (why string, hold bool) {
	if l.FloodReleased || l.Attempts > 0 {
		return "", false
	}
	st := g.readSettings(ctx)
	if !st.Enabled {
		return "", false
	}
	now := g.now()
	g.maybeLearn(now)
	volume, many := st.Policy(l.Source), st.ManyPolicy(l.Source)
	if volume == core.FloodPolicyTrusted && many == core.FloodPolicyTrusted {
		return "", false
	}
	k := sourceKey{site: l.SiteID, source: l.Source}
	var usual int64
	if m := g.usual.Load(); m != nil {
		usual = (*m)[k]
	}
	var alerts []core.Alert
	if volume != core.FloodPolicyTrusted {
		s := g.source(k)
		at := l.CreatedAt
		if at.IsZero() {
			at = now
		}
		s.hour.add(at, now)
		n, limit := s.hour.total(now), st.VolumeThreshold(usual)
		switch {
		case n > limit:
			if s.flooding.CompareAndSwap(false, true) {
				alerts = append(alerts, g.volumeAlert(l, n, limit, usual, volume == core.FloodPolicyHold, now))
			}
			if volume == core.FloodPolicyHold {
				why, hold = fmt.Sprintf("the source %s sent %d messages within an hour, more than %d (it usually sends %d an hour)", l.Source, n, limit, usual), true
			}
		case s.flooding.Load():
			s.flooding.Store(false)
		}
	}
	// A source whose usual hour is as many messages as the rule's
	// threshold usually sends one message to many: the rule leaves it be.
	if many != core.FloodPolicyTrusted && usual < st.Recipients {
		g.manyOnce.Do(func() { g.many = newFingerprints(maxFingerprints) })
		window := time.Duration(st.RecipientsMinutes) * time.Minute
		n, started := g.many.add(g.many.key(l.SiteID, l.Source, &l.Message), &l.Message, int(st.Recipients), window, now)
		if n > int(st.Recipients) {
			if started {
				alerts = append(alerts, g.manyAlert(l, n, st, many == core.FloodPolicyHold, now))
			}
			if many == core.FloodPolicyHold && !hold {
				why, hold = fmt.Sprintf("one message from the source %s went to more than %d recipients within %d minutes", l.Source, st.Recipients, st.RecipientsMinutes), true
			}
		}
	}
	for _, a := range alerts {
		g.logger().Warn("flood guard: "+a.Title, "site_id", l.SiteID, "source", l.Source, "held", hold)
		if g.Alerts != nil {
			g.Alerts.Raise(ctx, a)
		}
	}
	return why, hold
}

// source returns k's state, made when k is new.
func (g *Guard) source(k sourceKey) *sourceState {
	if s, ok := g.sources.Load(k); ok {
		return s.(*sourceState)
	}
	s, _ := g.sources.LoadOrStore(k, &sourceState{})
	return s.(*sourceState)
}

// Flooding reports whether source of site is in a flood episode of the
// volume rule now.
func (g *Guard) Flooding(site int64, source string) bool {
	s, ok := g.sources.Load(sourceKey{site: site, source: source})
	return ok && s.(*sourceState).flooding.Load()
}

// readSettings returns the flood settings. The first message reads them
// (the others arriving meanwhile wait for that one read); afterwards a
// message that finds them older than SettingsTTL has them read again in
// the background and goes on with the last ones, so the delivery path
// never waits on the database. A negative SettingsTTL reads them for
// every message. A failed read keeps the last ones (the defaults when
// there are none).
func (g *Guard) readSettings(ctx context.Context) core.FloodSettings {
	ttl := orDefault(g.SettingsTTL, DefaultSettingsTTL)
	if ttl < 0 {
		return g.loadSettings(ctx)
	}
	last := g.settings.Load()
	if last == nil {
		g.firstRead.Do(func() { g.loadSettings(ctx) })
		return g.settings.Load().st
	}
	if time.Since(last.at) >= ttl && g.reading.CompareAndSwap(false, true) {
		go func() {
			defer g.reading.Store(false)
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), learnTimeout)
			defer cancel()
			g.loadSettings(ctx)
		}()
	}
	return last.st
}

// loadSettings reads the flood settings and keeps them.
func (g *Guard) loadSettings(ctx context.Context) core.FloodSettings {
	m, err := g.Settings.Get(ctx)
	if err != nil {
		if last := g.settings.Load(); last != nil {
			g.logger().Warn("flood guard: cannot read the settings; the last ones apply", "err", err)
			g.settings.Store(&settingsRead{st: last.st, at: time.Now()})
			return last.st
		}
		g.logger().Warn("flood guard: cannot read the settings; the defaults apply", "err", err)
		m = nil
	}
	st := core.DecodeGeneralSettings(m).Flood
	g.settings.Store(&settingsRead{st: st, at: time.Now()})
	return st
}

// volumeAlert is the alert of a source that started flooding.
func (g *Guard) volumeAlert(l *core.Log, n, limit, usual int64, held bool, now time.Time) core.Alert {
	what := "Nothing is held (this source is alerted on only): its mail is still sent."
	if held {
		what = "Its excess is held, not sent: release or discard it on the Email logs screen (filter: held)."
	}
	return core.Alert{
		Event: core.EventFloodHeld, LogID: l.ID, Site: g.Site, At: now,
		Title: fmt.Sprintf("Flood of mail from %s: %d messages within an hour", l.Source, n),
		Message: fmt.Sprintf("%sThe source %s sent %d messages within an hour, more than %d (it usually sends %d an hour). Sample subject: %q. %s",
			g.sitePrefix(l), l.Source, n, limit, usual, l.Message.Subject, what),
	}
}

// manyAlert is the alert of a message that went to too many recipients.
func (g *Guard) manyAlert(l *core.Log, n int, st core.FloodSettings, held bool, now time.Time) core.Alert {
	what := "Nothing is held (this source is alerted on only): its mail is still sent."
	if held {
		what = "Its further copies are held, not sent: release or discard them on the Email logs screen (filter: held)."
	}
	return core.Alert{
		Event: core.EventFloodHeld, LogID: l.ID, Site: g.Site, At: now,
		Title: fmt.Sprintf("Flood of mail from %s: one message to more than %d recipients", l.Source, st.Recipients),
		Message: fmt.Sprintf("%sOne message from the source %s went to %d or more different recipients within %d minutes. Subject: %q. %s",
			g.sitePrefix(l), l.Source, n, st.RecipientsMinutes, l.Message.Subject, what),
	}
}

// sitePrefix names the site the alert is about, as its message starts.
func (g *Guard) sitePrefix(l *core.Log) string {
	switch {
	case g.Site != "" && l.SiteID > 1:
		return fmt.Sprintf("Site %s (site %d): ", g.Site, l.SiteID)
	case g.Site != "":
		return fmt.Sprintf("Site %s: ", g.Site)
	case l.SiteID > 1:
		return fmt.Sprintf("Site %d: ", l.SiteID)
	}
	return ""
}
