package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// fakeStore is a core.CaptureStore on the in-memory log store; while
// liveErr is set, reading the live fingerprint fails with it.
type fakeStore struct {
	*apptest.LogStore
	mu      sync.Mutex
	live    *core.Fingerprint
	liveErr error
}

func (f *fakeStore) LiveFingerprint(context.Context) (*core.Fingerprint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.liveErr != nil {
		return nil, fmt.Errorf("read the live fingerprint: %w", f.liveErr)
	}
	if f.live == nil {
		return nil, nil
	}
	c := *f.live
	return &c, nil
}

func (f *fakeStore) RecordFingerprint(_ context.Context, fp core.Fingerprint, replace bool) (core.Fingerprint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.live == nil || replace {
		f.live = &fp
	}
	return *f.live, nil
}

// fakeSite is the running site; while fpErr (envErr) is set, reading
// its fingerprint (environment type) fails with it.
type fakeSite struct {
	mu     sync.Mutex
	fp     core.Fingerprint
	env    string
	fpErr  error
	envErr error
}

func (s *fakeSite) Fingerprint(context.Context) (core.Fingerprint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fpErr != nil {
		return core.Fingerprint{}, s.fpErr
	}
	return s.fp, nil
}

func (s *fakeSite) EnvironmentType(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.envErr != nil {
		return "", s.envErr
	}
	return s.env, nil
}

type fakeSettings map[string]any

// brokenSettings are settings whose reads fail while err is set.
type brokenSettings struct {
	fakeSettings
	mu  sync.Mutex
	err error
}

func (b *brokenSettings) Get(ctx context.Context) (map[string]any, error) {
	b.mu.Lock()
	err := b.err
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return b.fakeSettings.Get(ctx)
}

func (f fakeSettings) Get(context.Context) (map[string]any, error) {
	out := core.SettingsDefaults(core.FreeSettings)
	for k, v := range f {
		out[k] = v
	}
	return out, nil
}

func to(emails ...string) *core.Message {
	m := &core.Message{Subject: "s", Text: "b"}
	for _, e := range emails {
		m.To = append(m.To, core.Address{Email: e})
	}
	return m
}

// TestGuardRecordAdoptHold: the first Record wins, a copy holds mail
// except for the allow-list, Adopt makes the copy the live site, and
// nothing captured is released by it.
func TestGuardRecordAdoptHold(t *testing.T) {
	ctx := context.Background()
	store := &fakeStore{LogStore: apptest.NewLogStore()}
	site := &fakeSite{fp: core.Fingerprint{SiteURL: "https://live.example", Home: "https://live.example", DBName: "wp", DBHost: "db", TablePrefix: "wp_"}}
	settings := fakeSettings{"capture_allow_list": []any{"@team.example", "boss@agency.example"}}
	woken := 0
	g := &Guard{Store: store, Site: site, Settings: settings, Wake: func() { woken++ }, TTL: -1}
	if _, err := g.Record(ctx); err != nil {
		t.Fatal(err)
	}
	if why, hold, err := g.Holds(ctx, to("a@customer.example")); hold || err != nil {
		t.Fatalf("the live site holds mail: %s (%v)", why, err)
	}
	site.mu.Lock()
	site.fp.SiteURL, site.fp.Home = "https://staging.live.example", "https://staging.live.example"
	site.mu.Unlock()
	if f, _ := g.Record(ctx); f.SiteURL != "https://live.example" {
		t.Fatalf("a second Record replaced the live fingerprint: %+v", f)
	}
	why, hold, _ := g.Holds(ctx, to("a@customer.example"))
	if !hold || why != "This looks like a copy of https://live.example. Mail is being held." {
		t.Fatalf("the copy: hold %v, %q", hold, why)
	}
	for _, m := range []*core.Message{to("x@team.example"), to("x@dev.team.example", "boss@agency.example")} {
		if _, hold, _ := g.Holds(ctx, m); hold {
			t.Errorf("allow-listed %v held", m.To)
		}
	}
	if _, hold, _ := g.Holds(ctx, to("x@team.example", "a@customer.example")); !hold {
		t.Error("a message with a recipient off the list went out")
	}
	// One captured log, then adopt.
	l := &core.Log{Message: *to("a@customer.example")}
	if err := store.EnqueueLog(ctx, l); err != nil {
		t.Fatal(err)
	}
	claimed, _ := store.ClaimLogs(ctx, "w", 1, 60e9)
	if _, err := store.RecordOutcomes(ctx, "w", []core.LogOutcome{{LogID: claimed[0].ID, Status: core.StatusCaptured}}); err != nil {
		t.Fatal(err)
	}
	st, err := g.Adopt(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode != core.CaptureModeSend || st.Captured != 1 || st.Live.SiteURL != "https://staging.live.example" {
		t.Fatalf("after adopt: %+v", st)
	}
	if n, err := g.Release(ctx, []int64{l.ID}, false); n != 1 || err != nil || woken != 1 {
		t.Fatalf("release = %d, %v (woken %d)", n, err, woken)
	}
	if n, _ := g.Release(ctx, []int64{l.ID}, false); n != 0 || woken != 1 {
		t.Fatalf("a second release moved %d", n)
	}
}

// TestGuardEnvironment: MAILSVC_ENVIRONMENT overrides WordPress's
// environment type; simulation mode is left to the delivery service.
func TestGuardEnvironment(t *testing.T) {
	ctx := context.Background()
	store := &fakeStore{LogStore: apptest.NewLogStore()}
	site := &fakeSite{env: "staging"}
	g := &Guard{Store: store, Site: site, Settings: fakeSettings{"capture_allow_list": []any{"team.example"}}, TTL: -1}
	if _, hold, _ := g.Holds(ctx, to("a@customer.example")); !hold {
		t.Fatal("a WordPress staging site sends")
	}
	if _, hold, _ := g.Holds(ctx, to("a@team.example")); hold {
		t.Fatal("a WordPress staging site holds an allow-listed recipient")
	}
	g.Environment = "production"
	if _, hold, _ := g.Holds(ctx, to("a@customer.example")); hold {
		t.Fatal("MAILSVC_ENVIRONMENT=production did not override")
	}
	g.Settings = fakeSettings{"simulation_enabled": true}
	st, _ := g.State(ctx)
	if st.Reason != core.CaptureReasonSimulation {
		t.Fatalf("simulation state: %+v", st)
	}
	if _, hold, _ := g.Holds(ctx, to("a@customer.example")); hold {
		t.Fatal("the guard holds in simulation mode (the delivery service captures those)")
	}
}

// gatedSite is fakeSite whose first Fingerprint waits for open, counting
// the reads; that first read fails with firstErr when it is set.
type gatedSite struct {
	fakeSite
	open     chan struct{}
	reads    atomic.Int64
	firstErr error
}

func (s *gatedSite) Fingerprint(ctx context.Context) (core.Fingerprint, error) {
	if s.reads.Add(1) == 1 {
		<-s.open
		if s.firstErr != nil {
			return core.Fingerprint{}, s.firstErr
		}
	}
	return s.fakeSite.Fingerprint(ctx)
}

// TestGuardHoldsReadsOnceForConcurrentMessages: the messages that ask
// while the state is being read wait for that one read instead of each
// reading it; with a negative TTL every message still reads it.
func TestGuardHoldsReadsOnceForConcurrentMessages(t *testing.T) {
	const messages = 50
	for _, tc := range []struct {
		name      string
		ttl       time.Duration
		wantReads int64
	}{
		{"cached", time.Hour, 1},
		{"every message", -1, messages},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			fp := core.Fingerprint{SiteURL: "https://live.example", Home: "https://live.example", DBName: "wp", DBHost: "db", TablePrefix: "wp_"}
			site := &gatedSite{fakeSite: fakeSite{fp: fp}, open: make(chan struct{})}
			store := &fakeStore{LogStore: apptest.NewLogStore(), live: &fp}
			g := &Guard{Store: store, Site: site, Settings: fakeSettings{}, TTL: tc.ttl}
			var started, done sync.WaitGroup
			held := atomic.Int64{}
			for range messages {
				started.Add(1)
				done.Go(func() {
					started.Done()
					if _, hold, _ := g.Holds(ctx, to("someone@example.com")); hold {
						held.Add(1)
					}
				})
			}
			started.Wait()
			close(site.open)
			done.Wait()
			if got := site.reads.Load(); got != tc.wantReads {
				t.Errorf("the site's fingerprint was read %d times for %d messages, want %d", got, messages, tc.wantReads)
			}
			if n := held.Load(); n != 0 {
				t.Errorf("%d messages held on the live site", n)
			}
		})
	}
}

// TestGuardUnknownStateSharedRead: the messages that ask while the first
// read is in flight share its failure: each meets ErrStateUnknown, and
// the state was read once.
func TestGuardUnknownStateSharedRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const messages = 50
		ctx := context.Background()
		fp := core.Fingerprint{SiteURL: "https://live.example", Home: "https://live.example", DBName: "wp", DBHost: "db", TablePrefix: "wp_"}
		site := &gatedSite{fakeSite: fakeSite{fp: fp}, open: make(chan struct{}), firstErr: errors.New("connection refused")}
		store := &fakeStore{LogStore: apptest.NewLogStore(), live: &fp}
		g := &Guard{Store: store, Site: site, Settings: fakeSettings{}, TTL: time.Hour, Logger: discardLogger()}
		var done sync.WaitGroup
		var unknown atomic.Int64
		for range messages {
			done.Go(func() {
				_, hold, err := g.Holds(ctx, to("someone@example.com"))
				switch {
				case errors.Is(err, ErrStateUnknown) && !hold:
					unknown.Add(1)
				default:
					t.Errorf("Holds with the first read failing = %v, %v; want ErrStateUnknown", hold, err)
				}
			})
		}
		// Every message is waiting: one on the read, the others on it.
		synctest.Wait()
		close(site.open)
		done.Wait()
		if got := site.reads.Load(); got != 1 {
			t.Errorf("the site's fingerprint was read %d times for %d messages, want 1", got, messages)
		}
		if n := unknown.Load(); n != messages {
			t.Errorf("%d of %d messages met an unknown state", n, messages)
		}
	})
}

// discardLogger is a logger that writes nothing.
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// lockedBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// count returns how many times s was written.
func (b *lockedBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

// String returns what was written.
func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestGuardUnknownState: while the guard has never worked out its state
// and a read fails (whichever of its sources fails), Holds neither sends
// nor holds a message: it answers ErrStateUnknown, with one warning for
// all the messages. Once a read succeeds, the state decides (send on the
// live site, capture on a copy); a read failing after that keeps the
// last known state, again with one warning.
func TestGuardUnknownState(t *testing.T) {
	live := core.Fingerprint{SiteURL: "https://live.example", Home: "https://live.example", DBName: "wp", DBHost: "db", TablePrefix: "wp_"}
	copied := live
	copied.SiteURL, copied.Home = "https://staging.example", "https://staging.example"
	type sources struct {
		store    *fakeStore
		site     *fakeSite
		settings *brokenSettings
	}
	breaks := []struct {
		name  string
		fail  func(s sources, err error)
		cause string
	}{
		{"the live fingerprint", func(s sources, err error) { s.store.mu.Lock(); s.store.liveErr = err; s.store.mu.Unlock() }, "read the live fingerprint"},
		{"the site's fingerprint", func(s sources, err error) { s.site.mu.Lock(); s.site.fpErr = err; s.site.mu.Unlock() }, "read the site's fingerprint"},
		{"the site's environment type", func(s sources, err error) { s.site.mu.Lock(); s.site.envErr = err; s.site.mu.Unlock() }, "read the site's environment type"},
		{"the settings", func(s sources, err error) { s.settings.mu.Lock(); s.settings.err = err; s.settings.mu.Unlock() }, "read settings"},
	}
	for _, br := range breaks {
		for _, running := range []struct {
			name     string
			fp       core.Fingerprint
			wantHold bool
		}{{"live site", live, false}, {"copy", copied, true}} {
			t.Run(br.name+" failing on the "+running.name, func(t *testing.T) {
				ctx := context.Background()
				src := sources{
					store:    &fakeStore{LogStore: apptest.NewLogStore(), live: &live},
					site:     &fakeSite{fp: running.fp},
					settings: &brokenSettings{fakeSettings: fakeSettings{}},
				}
				logs := &lockedBuffer{}
				g := &Guard{Store: src.store, Site: src.site, Settings: src.settings, TTL: -1, Logger: slog.New(slog.NewTextHandler(logs, nil))}
				br.fail(src, errors.New("connection refused"))
				for range 3 {
					why, hold, err := g.Holds(ctx, to("a@customer.example"))
					if !errors.Is(err, ErrStateUnknown) || hold || why != "" {
						t.Fatalf("no state known, the read failing: Holds = %q, %v, %v; want ErrStateUnknown", why, hold, err)
					}
					if !strings.Contains(err.Error(), br.cause) {
						t.Errorf("the error %q does not say what failed (%q)", err, br.cause)
					}
				}
				if n := logs.count("level=WARN"); n != 1 {
					t.Fatalf("%d warnings for three messages, want 1:\n%s", n, logs)
				}

				br.fail(src, nil)
				if _, hold, err := g.Holds(ctx, to("a@customer.example")); err != nil || hold != running.wantHold {
					t.Fatalf("the read recovered: hold %v, %v; want hold %v", hold, err, running.wantHold)
				}
				if n := logs.count("the state can be read again"); n != 1 {
					t.Errorf("%d lines say the state is read again, want 1", n)
				}

				br.fail(src, errors.New("connection refused"))
				for range 3 {
					if _, hold, err := g.Holds(ctx, to("a@customer.example")); err != nil || hold != running.wantHold {
						t.Fatalf("a state known, the read failing: hold %v, %v; want the last known state (hold %v)", hold, err, running.wantHold)
					}
				}
				if n := logs.count("level=WARN"); n != 2 {
					t.Fatalf("%d warnings after two outages, want 2 (one each):\n%s", n, logs)
				}
			})
		}
	}
}
