package capture

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// fakeStore is a core.CaptureStore on the in-memory log store.
type fakeStore struct {
	*apptest.LogStore
	mu   sync.Mutex
	live *core.Fingerprint
}

func (f *fakeStore) LiveFingerprint(context.Context) (*core.Fingerprint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
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

type fakeSite struct {
	mu  sync.Mutex
	fp  core.Fingerprint
	env string
}

func (s *fakeSite) Fingerprint(context.Context) (core.Fingerprint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fp, nil
}

func (s *fakeSite) EnvironmentType(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.env, nil
}

type fakeSettings map[string]any

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
	if why, hold := g.Holds(ctx, to("a@customer.example")); hold {
		t.Fatalf("the live site holds mail: %s", why)
	}
	site.mu.Lock()
	site.fp.SiteURL, site.fp.Home = "https://staging.live.example", "https://staging.live.example"
	site.mu.Unlock()
	if f, _ := g.Record(ctx); f.SiteURL != "https://live.example" {
		t.Fatalf("a second Record replaced the live fingerprint: %+v", f)
	}
	why, hold := g.Holds(ctx, to("a@customer.example"))
	if !hold || why != "This looks like a copy of https://live.example. Mail is being held." {
		t.Fatalf("the copy: hold %v, %q", hold, why)
	}
	for _, m := range []*core.Message{to("x@team.example"), to("x@dev.team.example", "boss@agency.example")} {
		if _, hold := g.Holds(ctx, m); hold {
			t.Errorf("allow-listed %v held", m.To)
		}
	}
	if _, hold := g.Holds(ctx, to("x@team.example", "a@customer.example")); !hold {
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
	if _, hold := g.Holds(ctx, to("a@customer.example")); !hold {
		t.Fatal("a WordPress staging site sends")
	}
	if _, hold := g.Holds(ctx, to("a@team.example")); hold {
		t.Fatal("a WordPress staging site holds an allow-listed recipient")
	}
	g.Environment = "production"
	if _, hold := g.Holds(ctx, to("a@customer.example")); hold {
		t.Fatal("MAILSVC_ENVIRONMENT=production did not override")
	}
	g.Settings = fakeSettings{"simulation_enabled": true}
	st, _ := g.State(ctx)
	if st.Reason != core.CaptureReasonSimulation {
		t.Fatalf("simulation state: %+v", st)
	}
	if _, hold := g.Holds(ctx, to("a@customer.example")); hold {
		t.Fatal("the guard holds in simulation mode (the delivery service captures those)")
	}
}

// gatedSite is fakeSite whose first Fingerprint waits for open, counting
// the reads.
type gatedSite struct {
	fakeSite
	open  chan struct{}
	reads atomic.Int64
}

func (s *gatedSite) Fingerprint(ctx context.Context) (core.Fingerprint, error) {
	if s.reads.Add(1) == 1 {
		<-s.open
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
					if _, hold := g.Holds(ctx, to("someone@example.com")); hold {
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
