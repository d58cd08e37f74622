// Package scheduler runs mailsvc's periodic jobs (among them OAuth
// refresh, health checks, the retention purge, the queue-stalled watch and
// the summary report; `mailsvc serve` lists them, cmd/mailsvc/cli
// watch.go, and add-on modules add theirs through cli.ServeEnv.Jobs) once
// per interval in total across every replica that shares the database.
//
// # The once-per-interval guarantee
//
// Every replica runs a Runner with the same jobs. On each tick a Runner
// asks, for each enabled job it is not already running, core.JobStore to
// claim a run (ClaimJobRun): the store records the run's start and grants
// it only when the last run of that job started at least one interval
// ago, atomically, so of any number of concurrent claimers exactly one
// wins. The winner runs the job and records its end (FinishJobRun).
//
// Whose clock decides: the store's. On MySQL/MariaDB both the recorded
// start and the eligibility test use the database server's clock
// (UTC_TIMESTAMP), so clock skew between replicas cannot give a job two
// runs in one interval; on SQLite (one file, one host) the host's clock
// decides. The replicas' own clocks only pace their ticks.
//
// Limits: runs start at most one tick late (Tick, a few seconds), so
// intervals stretch by up to a tick. A run is bounded by its timeout
// (by default its interval), so it normally ends before the next run may
// start; a run that ignores its context can overlap the next one. A
// replica that dies during a run leaves the run recorded as unfinished;
// the job runs again when the interval has passed. Intervals are read from
// their settings on every tick, so a change through PUT /settings applies
// at the next tick, measured from the last run's start.
package scheduler

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Names of the built-in jobs.
const (
	JobOAuthRefresh = "oauth_refresh"
	JobHealthCheck  = "health_check"
	JobLogPurge     = "log_purge"
	JobQueueStalled = "queue_stalled"
)

// Defaults of the Runner's fields.
const (
	DefaultTick   = 5 * time.Second
	DefaultMinute = time.Minute
	// finishTimeout bounds the write that records a run's end.
	finishTimeout = 10 * time.Second
)

// Job is one periodic task.
type Job struct {
	// Name identifies the job in the store (one row per name). Every and
	// Run are required; a job without them never runs.
	Name string
	// Every returns the job's interval, in minutes of wall time (the
	// Runner scales it by its Minute), and whether the job is enabled.
	// It is called on every tick, so it should read settings each time.
	Every func(ctx context.Context) (interval time.Duration, enabled bool, err error)
	// Run does the work. It must honour ctx, which ends at the run's
	// timeout or when the Runner shuts down.
	Run func(ctx context.Context) error
	// Timeout bounds one run; 0 means the job's (scaled) interval.
	Timeout time.Duration
}

// Runner runs Jobs, each once per interval across the replicas sharing
// Store. Set the fields, then call Run. Zero fields take the defaults.
type Runner struct {
	Store  core.JobStore
	Jobs   []Job
	Logger *slog.Logger
	// Owner names this process in the job records; empty means
	// host-pid-random.
	Owner string
	// Tick is how often due jobs are looked for (DefaultTick).
	Tick time.Duration
	// Minute is the length of one minute of the jobs' intervals:
	// MAILSVC_SCHEDULER_MINUTE seconds (DefaultMinute); shorter only in
	// tests and demos.
	Minute time.Duration

	initOnce sync.Once
	mu       sync.Mutex
	running  map[string]bool
	// afterTick, when set (tests), is called at the end of every tick.
	afterTick func()
}

func (r *Runner) init() {
	r.initOnce.Do(func() {
		if r.Logger == nil {
			r.Logger = slog.Default()
		}
		if r.Tick <= 0 {
			r.Tick = DefaultTick
		}
		if r.Minute <= 0 {
			r.Minute = DefaultMinute
		}
		if r.Owner == "" {
			host, _ := os.Hostname()
			var b [4]byte
			_, _ = crand.Read(b[:])
			r.Owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
		}
		r.running = map[string]bool{}
	})
}

// Run looks for due jobs at once and then every Tick, runs each won job in
// its own goroutine, and blocks until ctx is done. It then cancels the
// runs in progress (their context ends), waits for them to return and
// record their end, and returns. A job's error or panic is logged and
// recorded; it never stops the Runner or the other jobs.
func (r *Runner) Run(ctx context.Context) {
	r.init()
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(r.Tick)
	defer t.Stop()
	for {
		r.tick(ctx, &wg)
		if r.afterTick != nil {
			r.afterTick()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tick claims and starts every due job that this process is not running.
func (r *Runner) tick(ctx context.Context, wg *sync.WaitGroup) {
	for _, j := range r.Jobs {
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		busy := r.running[j.Name]
		r.mu.Unlock()
		if busy || j.Every == nil || j.Run == nil {
			continue
		}
		interval, enabled, err := j.Every(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.Logger.Warn("scheduler: read job interval", "job", j.Name, "err", err)
			}
			continue
		}
		if !enabled || interval <= 0 {
			continue
		}
		interval = r.scale(interval)
		won, err := r.Store.ClaimJobRun(ctx, j.Name, r.Owner, interval)
		if err != nil {
			if ctx.Err() == nil {
				r.Logger.Warn("scheduler: claim job run", "job", j.Name, "err", err)
			}
			continue
		}
		if !won {
			continue
		}
		timeout := j.Timeout
		if timeout <= 0 {
			timeout = interval
		}
		r.mu.Lock()
		r.running[j.Name] = true
		r.mu.Unlock()
		wg.Go(func() {
			defer func() {
				r.mu.Lock()
				delete(r.running, j.Name)
				r.mu.Unlock()
			}()
			r.runOne(ctx, j, timeout)
		})
	}
}

// scale converts an interval in wall-time minutes to Runner minutes.
func (r *Runner) scale(d time.Duration) time.Duration {
	if r.Minute == time.Minute {
		return d
	}
	return time.Duration(float64(d) / float64(time.Minute) * float64(r.Minute))
}

// runOne runs a won job under its timeout and records its end.
func (r *Runner) runOne(ctx context.Context, j Job, timeout time.Duration) {
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	err := r.safeRun(rctx, j)
	cancel()
	msg := ""
	if err != nil {
		msg = err.Error()
		r.Logger.Warn("scheduler: job failed", "job", j.Name, "duration", time.Since(start), "err", err)
	} else {
		r.Logger.Debug("scheduler: job done", "job", j.Name, "duration", time.Since(start))
	}
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer fcancel()
	if err := r.Store.FinishJobRun(fctx, j.Name, r.Owner, msg); err != nil {
		r.Logger.Warn("scheduler: record job end", "job", j.Name, "err", err)
	}
}

// safeRun calls j.Run, turning a panic into an error (the stack goes to
// the log, not into the job record).
func (r *Runner) safeRun(ctx context.Context, j Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.Logger.Error("scheduler: job panicked", "job", j.Name, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return j.Run(ctx)
}
