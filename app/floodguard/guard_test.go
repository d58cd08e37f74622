package floodguard

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// fixedSettings is a settings source with fixed values over the defaults.
type fixedSettings map[string]any

func (f fixedSettings) Get(context.Context) (map[string]any, error) {
	m := core.SettingsDefaults(core.FreeSettings)
	for k, v := range f {
		m[k] = v
	}
	return m, nil
}

// recordedAlerts keeps the alerts raised.
type recordedAlerts struct {
	mu   sync.Mutex
	list []core.Alert
}

func (r *recordedAlerts) Raise(_ context.Context, a core.Alert) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, a)
}

func (r *recordedAlerts) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.list)
}

// countOf counts the alerts whose title holds part.
func (r *recordedAlerts) countOf(part string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, a := range r.list {
		if strings.Contains(a.Title, part) {
			n++
		}
	}
	return n
}

// fixedVolumes is a volume source answering fixed volumes.
type fixedVolumes []core.SourceVolume

func (f fixedVolumes) SourceVolumes(context.Context, time.Time, time.Time) ([]core.SourceVolume, error) {
	return f, nil
}

// clock is a settable time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// message returns log id from source, to one recipient, with its own
// body unless same.
func message(id int64, source, to string, same bool, at time.Time) *core.Log {
	body := fmt.Sprintf("body %d", id)
	if same {
		body = "the same body"
	}
	return &core.Log{ID: id, SiteID: 1, Source: source, CreatedAt: at,
		Message: core.Message{Subject: "Hello", Text: body, To: []core.Address{{Email: to}}}}
}

func newGuard(t *testing.T, settings fixedSettings, volumes fixedVolumes, c *clock) (*Guard, *recordedAlerts) {
	t.Helper()
	al := &recordedAlerts{}
	g := &Guard{Volumes: volumes, Settings: settings, Alerts: al, Site: "example.com", Now: c.now, SettingsTTL: -1, LearnEvery: 1000 * time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := g.Learn(context.Background()); err != nil {
		t.Fatal(err)
	}
	return g, al
}

// TestVolumeRule: a source sending more than max(multiplier × its usual
// hourly volume, the floor) within an hour has its excess held (or only
// alerted on, or nothing when trusted), with one alert per episode.
func TestVolumeRule(t *testing.T) {
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		settings   fixedSettings
		volumes    fixedVolumes
		source     string
		send       int
		wantHeld   int
		wantAlerts int
	}{
		{"core mail over the floor: held", nil, nil, core.FloodSourceCore, 300, 250, 1},
		{"core mail at the floor: sent", nil, nil, core.FloodSourceCore, 50, 0, 0},
		{"a plugin: alerted on only", nil, nil, "woocommerce", 300, 0, 1},
		{"a plugin held by its policy", fixedSettings{"flood_sources": map[string]any{"woocommerce": "hold"}}, nil, "woocommerce", 300, 250, 1},
		{"core mail alerted on only by its policy", fixedSettings{"flood_sources": map[string]any{"wordpress": "alert"}}, nil, core.FloodSourceCore, 300, 0, 1},
		{"a trusted source", fixedSettings{"flood_sources": map[string]any{"wordpress": "trusted"}}, nil, core.FloodSourceCore, 300, 0, 0},
		{"a usual volume of 20 an hour: the threshold is 200", nil,
			fixedVolumes{{SiteID: 1, Source: core.FloodSourceCore, Messages: 400, ActiveHours: 20}}, core.FloodSourceCore, 300, 100, 1},
		{"the usual volume of another site counts for nothing", nil,
			fixedVolumes{{SiteID: 2, Source: core.FloodSourceCore, Messages: 400, ActiveHours: 20}}, core.FloodSourceCore, 300, 250, 1},
		{"thresholds from the settings", fixedSettings{"flood_volume_floor": int64(100), "flood_volume_multiplier": int64(3)},
			fixedVolumes{{SiteID: 1, Source: core.FloodSourceCore, Messages: 50, ActiveHours: 1}}, core.FloodSourceCore, 300, 150, 1},
		{"the guard off", fixedSettings{"flood_guard_enabled": false}, nil, core.FloodSourceCore, 300, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: start}
			g, al := newGuard(t, tc.settings, tc.volumes, c)
			held := 0
			for i := range tc.send {
				c.t = start.Add(time.Duration(i) * 100 * time.Millisecond)
				if _, hold := g.Holds(context.Background(), message(int64(i+1), tc.source, fmt.Sprintf("r%d@example.com", i), false, c.t)); hold {
					held++
				}
			}
			if held != tc.wantHeld {
				t.Errorf("held %d of %d, want %d", held, tc.send, tc.wantHeld)
			}
			if al.count() != tc.wantAlerts {
				t.Fatalf("%d alerts, want %d: %+v", al.count(), tc.wantAlerts, al.list)
			}
			if tc.wantAlerts > 0 {
				a := al.list[0]
				if a.Event != core.EventFloodHeld || a.Site != "example.com" {
					t.Errorf("alert %+v, want a flood_held alert of example.com", a)
				}
				for _, want := range []string{tc.source, "Hello", "messages within an hour"} {
					if !strings.Contains(a.Title+a.Message, want) {
						t.Errorf("alert %q / %q does not name %q", a.Title, a.Message, want)
					}
				}
			}
		})
	}
}

// TestEpisodes: an episode ends when the source's hour falls back under
// its threshold; the next flood is a new episode with its own alert.
// Messages already tried, or released from a hold, are neither counted
// nor held.
func TestEpisodes(t *testing.T) {
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	c := &clock{t: start}
	g, al := newGuard(t, nil, nil, c)
	ctx := context.Background()
	flood := func(from int64, n int) (held int) {
		for i := range n {
			l := message(from+int64(i), core.FloodSourceCore, "a@example.com", false, c.t)
			if _, hold := g.Holds(ctx, l); hold {
				held++
			}
		}
		return held
	}
	if held := flood(1, 60); held != 10 || al.count() != 1 || !g.Flooding(1, core.FloodSourceCore) {
		t.Fatalf("first flood: held %d, %d alerts, flooding %v; want 10, 1, true", held, al.count(), g.Flooding(1, core.FloodSourceCore))
	}
	released := message(1000, core.FloodSourceCore, "a@example.com", false, c.t)
	released.FloodReleased = true
	tried := message(1001, core.FloodSourceCore, "a@example.com", false, c.t)
	tried.Attempts = 1
	for _, l := range []*core.Log{released, tried} {
		if _, hold := g.Holds(ctx, l); hold {
			t.Errorf("log %d (released %v, attempts %d) held", l.ID, l.FloodReleased, l.Attempts)
		}
	}
	c.t = start.Add(61 * time.Minute)
	if held := flood(2000, 1); held != 0 || g.Flooding(1, core.FloodSourceCore) {
		t.Fatalf("an hour later: held %d, flooding %v; want 0, false", held, g.Flooding(1, core.FloodSourceCore))
	}
	if held := flood(3000, 60); held != 11 || al.count() != 2 {
		t.Fatalf("second flood (61 in the hour): held %d, %d alerts; want 11, 2", held, al.count())
	}
	// A message queued more than an hour ago (a backlog) is not counted.
	old := message(4000, "backlog", "a@example.com", false, c.t.Add(-2*time.Hour))
	for range 100 {
		g.Holds(ctx, old)
	}
	if s, ok := g.sources.Load(sourceKey{site: 1, source: "backlog"}); ok && s.(*sourceState).hour.total(c.t) != 0 {
		t.Error("a message queued two hours ago was counted in the hour")
	}
}

// TestManyRecipients: one message (the same subject and body) to more
// than 50 different recipients within 10 minutes is held past the 50th
// for every source by default, once alerted; the same recipient again,
// other messages, a trusted source, a source that usually sends that
// much, or a window that passed do not count.
func TestManyRecipients(t *testing.T) {
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		settings   fixedSettings
		volumes    fixedVolumes
		same       bool
		recipients int // different recipients among the 80 messages
		step       time.Duration
		wantHeld   int
		wantAlerts int
	}{
		{"one message to 80", nil, nil, true, 80, time.Second, 30, 1},
		{"one message to 50", nil, nil, true, 50, time.Second, 0, 0},
		{"one message 80 times to 10 recipients", nil, nil, true, 10, time.Second, 0, 0},
		{"80 messages", nil, nil, false, 80, time.Second, 0, 0},
		{"one message to 80 over 80 minutes", nil, nil, true, 80, time.Minute, 0, 0},
		{"a trusted source", fixedSettings{"flood_sources": map[string]any{"contact-form": "trusted"}}, nil, true, 80, time.Second, 0, 0},
		{"alerted on only", fixedSettings{"flood_sources": map[string]any{"contact-form": "alert"}}, nil, true, 80, time.Second, 0, 1},
		{"a source that usually sends 60 an hour", nil,
			fixedVolumes{{SiteID: 1, Source: "contact-form", Messages: 600, ActiveHours: 10}}, true, 80, time.Second, 0, 0},
		{"thresholds from the settings", fixedSettings{"flood_recipients": int64(20)}, nil, true, 80, time.Second, 60, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: start}
			g, al := newGuard(t, tc.settings, tc.volumes, c)
			held := 0
			for i := range 80 {
				c.t = start.Add(time.Duration(i) * tc.step)
				l := message(int64(i+1), "contact-form", fmt.Sprintf("r%d@example.com", i%tc.recipients), tc.same, c.t)
				if _, hold := g.Holds(context.Background(), l); hold {
					held++
				}
			}
			if n := al.countOf("recipients"); held != tc.wantHeld || n != tc.wantAlerts {
				t.Errorf("held %d, %d alerts; want %d, %d", held, n, tc.wantHeld, tc.wantAlerts)
			}
		})
	}
}

// TestFingerprintsBounded: the messages the one-message-to-many rule
// keeps stay within their bound however many different ones pass.
func TestFingerprintsBounded(t *testing.T) {
	f := newFingerprints(640)
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for i := range 100000 {
		msg := &core.Message{Subject: "s", Text: fmt.Sprint(i), To: []core.Address{{Email: "a@example.com"}}}
		f.add(f.key(1, "x", msg), msg, 50, 10*time.Minute, now)
	}
	if kept, ordered := f.size(); kept > 640 || ordered > 2*640 {
		t.Errorf("%d fingerprints, %d in order; want at most 640", kept, ordered)
	}
}

// TestHourWindowConcurrent: workers counting one source at once lose no
// message, and a bucket of an earlier hour starts again at its next use.
func TestHourWindowConcurrent(t *testing.T) {
	var w hourWindow
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				w.add(now, now)
			}
		}()
	}
	wg.Wait()
	if n := w.total(now); n != 8000 {
		t.Fatalf("counted %d of 8000", n)
	}
	later := now.Add(time.Hour)
	w.add(later, later)
	if n := w.total(later); n != 1 {
		t.Fatalf("an hour later counted %d, want 1", n)
	}
}
