package scheduler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// fakeClock is the job store's clock, moved by the test.
type fakeClock struct{ ns atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// cluster is a set of runners sharing one in-memory job store, as
// replicas share a database.
type cluster struct {
	t       *testing.T
	store   *apptest.JobStore
	clock   *fakeClock
	runners []*Runner
	ticks   []*atomic.Int64
	done    chan struct{}
	cancel  context.CancelFunc
}

func startCluster(t *testing.T, n int, jobs []Job, configure func(*Runner)) *cluster {
	t.Helper()
	c := &cluster{t: t, store: apptest.NewJobStore(), clock: newClock(), done: make(chan struct{})}
	c.store.SetClock(c.clock.now)
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	var wg sync.WaitGroup
	for i := range n {
		ticks := &atomic.Int64{}
		r := &Runner{
			Store: c.store, Jobs: jobs, Owner: fmt.Sprintf("replica-%d", i), Tick: time.Millisecond,
			Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
			afterTick: func() { ticks.Add(1) },
		}
		if configure != nil {
			configure(r)
		}
		c.runners = append(c.runners, r)
		c.ticks = append(c.ticks, ticks)
		wg.Go(func() { r.Run(ctx) })
	}
	go func() { wg.Wait(); close(c.done) }()
	t.Cleanup(c.stop)
	return c
}

func (c *cluster) stop() {
	c.cancel()
	<-c.done
}

// settle waits until every runner has finished two more ticks, so any
// claim that was due has been made.
func (c *cluster) settle() {
	c.t.Helper()
	start := make([]int64, len(c.ticks))
	for i, t := range c.ticks {
		start[i] = t.Load()
	}
	apptest.WaitFor(c.t, "every runner to tick twice", func() bool {
		for i, t := range c.ticks {
			if t.Load() < start[i]+2 {
				return false
			}
		}
		return true
	})
}

// counter is a job body counting its runs.
type counter struct{ n atomic.Int64 }

func (c *counter) run(context.Context) error { c.n.Add(1); return nil }

func TestRunnersShareEachIntervalOnce(t *testing.T) {
	const steps = 6
	every1, every2 := &counter{}, &counter{}
	jobs := []Job{
		{Name: "every_minute", Every: Fixed(time.Minute), Run: every1.run},
		{Name: "every_two", Every: Fixed(2 * time.Minute), Run: every2.run},
	}
	c := startCluster(t, 3, jobs, nil)
	want1, want2 := int64(1), int64(1) // the first tick runs both once
	for step := 0; ; step++ {
		apptest.WaitFor(t, "the due runs", func() bool { return every1.n.Load() == want1 && every2.n.Load() == want2 })
		c.settle()
		if g1, g2 := c.store.Claims("every_minute"), c.store.Claims("every_two"); int64(g1) != want1 || int64(g2) != want2 {
			t.Fatalf("step %d: %d and %d runs claimed, want %d and %d", step, g1, g2, want1, want2)
		}
		if got1, got2 := every1.n.Load(), every2.n.Load(); got1 != want1 || got2 != want2 {
			t.Fatalf("step %d: ran %d and %d times, want %d and %d", step, got1, got2, want1, want2)
		}
		if step == steps {
			break
		}
		c.clock.advance(time.Minute)
		want1++
		if (step+1)%2 == 0 {
			want2++
		}
	}
	runs, err := c.store.FindJobRuns(context.Background())
	if err != nil || len(runs) != 2 {
		t.Fatalf("FindJobRuns = %+v, %v", runs, err)
	}
	for _, r := range runs {
		if !strings.HasPrefix(r.Owner, "replica-") || r.LastError != "" {
			t.Errorf("run record %+v", r)
		}
	}
}

// settingsMap is a SettingsSource a test changes while runners run.
type settingsMap struct {
	mu   sync.Mutex
	m    map[string]any
	fail bool
}

func (s *settingsMap) Get(context.Context) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return nil, errors.New("database is down")
	}
	out := map[string]any{}
	for k, v := range s.m {
		out[k] = v
	}
	return out, nil
}

func (s *settingsMap) set(k string, v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
}

func TestIntervalAndEnabledFollowTheSettings(t *testing.T) {
	src := &settingsMap{m: map[string]any{"health_check_enabled": true, "health_check_interval": int64(10)}}
	health := &counter{}
	c := startCluster(t, 2, []Job{{Name: JobHealthCheck, Every: FromSettings(src, HealthCheckInterval), Run: health.run}}, nil)
	claims := func() int { return c.store.Claims(JobHealthCheck) }
	steps := []struct {
		name    string
		advance time.Duration
		set     map[string]any
		fail    bool
		want    int
	}{
		{name: "first tick runs it", want: 1},
		{name: "half the interval: nothing", advance: 5 * time.Minute, want: 1},
		{name: "a shorter interval applies at once", set: map[string]any{"health_check_interval": int64(5)}, want: 2},
		{name: "disabled: nothing, however long", set: map[string]any{"health_check_enabled": false}, advance: 60 * time.Minute, want: 2},
		{name: "settings unreadable: nothing", set: map[string]any{"health_check_enabled": true}, fail: true, want: 2},
		{name: "readable and enabled again: runs", want: 3},
		{name: "interval below a minute counts as one", set: map[string]any{"health_check_interval": int64(0)}, advance: time.Minute, want: 4},
	}
	for _, st := range steps {
		src.mu.Lock()
		src.fail = st.fail // before the values, so no tick sees them readable
		src.mu.Unlock()
		for k, v := range st.set {
			src.set(k, v)
		}
		c.clock.advance(st.advance)
		apptest.WaitFor(t, st.name, func() bool { return claims() >= st.want })
		c.settle()
		if got := claims(); got != st.want {
			t.Fatalf("%s: %d runs, want %d", st.name, got, st.want)
		}
	}
	apptest.WaitFor(t, "the last run", func() bool { return health.n.Load() == 4 })
}

func TestFailingJobsNeverStopTheOthers(t *testing.T) {
	ok := &counter{}
	var panics, fails atomic.Int64
	jobs := []Job{
		{Name: "panics", Every: Fixed(time.Minute), Run: func(context.Context) error { panics.Add(1); panic("boom") }},
		{Name: "fails", Every: Fixed(time.Minute), Run: func(context.Context) error { fails.Add(1); return errors.New("disk full") }},
		{Name: "bad_interval", Every: func(context.Context) (time.Duration, bool, error) {
			return 0, false, errors.New("settings unreadable")
		}, Run: func(context.Context) error { t.Error("a job whose interval cannot be read ran"); return nil }},
		{Name: "ok", Every: Fixed(time.Minute), Run: ok.run},
	}
	c := startCluster(t, 2, jobs, nil)
	for step := int64(1); step <= 4; step++ {
		apptest.WaitFor(t, "every job's run", func() bool {
			return panics.Load() == step && fails.Load() == step && ok.n.Load() == step
		})
		c.settle()
		c.clock.advance(time.Minute)
	}
	apptest.WaitFor(t, "the run records", func() bool {
		runs, _ := c.store.FindJobRuns(context.Background())
		return len(runs) == 3 && runs[0].FinishedAt != nil && runs[1].FinishedAt != nil && runs[2].FinishedAt != nil
	})
	runs, _ := c.store.FindJobRuns(context.Background())
	want := map[string]string{"fails": "disk full", "ok": "", "panics": "panic: boom"}
	for _, r := range runs {
		if r.LastError != want[r.Name] {
			t.Errorf("job %s recorded error %q, want %q", r.Name, r.LastError, want[r.Name])
		}
	}
}

func TestRunTimeoutDefaultsToTheScaledInterval(t *testing.T) {
	tests := []struct {
		name    string
		minute  time.Duration
		timeout time.Duration
	}{
		{"default: one scaled minute", 20 * time.Millisecond, 0},
		{"explicit timeout", time.Minute, 20 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := apptest.NewJobStore()
			var ran atomic.Int64
			r := &Runner{
				Store: store, Tick: time.Millisecond, Minute: tt.minute,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Jobs: []Job{{Name: "slow", Every: Fixed(time.Minute), Timeout: tt.timeout, Run: func(ctx context.Context) error {
					ran.Add(1)
					<-ctx.Done()
					return ctx.Err()
				}}},
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { r.Run(ctx); close(done) }()
			defer func() { cancel(); <-done }()
			apptest.WaitFor(t, "a run ended by its timeout", func() bool {
				runs, _ := store.FindJobRuns(context.Background())
				return len(runs) == 1 && runs[0].FinishedAt != nil
			})
			runs, _ := store.FindJobRuns(context.Background())
			if runs[0].LastError != context.DeadlineExceeded.Error() {
				t.Fatalf("run recorded %q, want the deadline", runs[0].LastError)
			}
		})
	}
}

func TestShutdownWaitsForTheRunningJob(t *testing.T) {
	store := apptest.NewJobStore()
	started, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	r := &Runner{
		Store: store, Tick: time.Millisecond, Owner: "me",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Jobs: []Job{{Name: "long", Every: Fixed(time.Hour), Run: func(ctx context.Context) error {
			close(started)
			<-ctx.Done() // shutdown cancels the run...
			<-release    // ...which takes a while to wind down
			finished.Store(true)
			return nil
		}}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	<-started
	cancel()
	select {
	case <-done:
		t.Fatal("Run returned while its job was still running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-done
	if !finished.Load() {
		t.Fatal("Run returned before the job did")
	}
	runs, _ := store.FindJobRuns(context.Background())
	if len(runs) != 1 || runs[0].FinishedAt == nil || runs[0].Owner != "me" {
		t.Fatalf("the interrupted run was not recorded as finished: %+v", runs)
	}
}

func TestFromSettings(t *testing.T) {
	tests := []struct {
		name        string
		m           map[string]any
		fail        bool
		wantEvery   time.Duration
		wantEnabled bool
		wantErr     bool
	}{
		{"defaults as app.Settings gives them", core.SettingsDefaults(core.FreeSettings), false, 15 * time.Minute, true, false},
		{"disabled", map[string]any{"health_check_enabled": false, "health_check_interval": int64(3)}, false, 3 * time.Minute, false, false},
		{"missing keys: the definitions' defaults", map[string]any{}, false, 15 * time.Minute, true, false},
		{"an interval past the bounds is bounded", map[string]any{"health_check_interval": int64(0)}, false, time.Minute, true, false},
		{"the OAuth refresh's keys are not the health check's", map[string]any{"oauth_refresh_enabled": false, "oauth_refresh_interval": int64(2)}, false, 15 * time.Minute, true, false},
		{"string values from a constant", map[string]any{"health_check_enabled": "1", "health_check_interval": "1440"}, false, 1440 * time.Minute, true, false},
		{"unreadable", nil, true, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &settingsMap{m: tt.m, fail: tt.fail}
			every, enabled, err := FromSettings(src, HealthCheckInterval)(context.Background())
			if (err != nil) != tt.wantErr || every != tt.wantEvery || enabled != tt.wantEnabled {
				t.Fatalf("= %v, %v, %v; want %v, %v, error %v", every, enabled, err, tt.wantEvery, tt.wantEnabled, tt.wantErr)
			}
		})
	}
}
