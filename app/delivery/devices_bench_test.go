package delivery

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// The benchmarks of the engine's performance devices, in process and
// without a database: each prints what its device costs per use and what
// it achieves (hand size, level, outcomes per commit). The end-to-end
// figures are test/queue's BenchmarkDrain and the scale benchmarks in
// test/scalebench; the store's side of the group commit and the row
// reserve is adapters/store's BenchmarkRecordAndClaim. Figures only:
// nothing here passes or fails on time.

// BenchmarkHandSizing measures the hand sizing (pace, hand.resize): one
// op is one worker's gather of 50 messages, counted into the process's
// pace, at a simulated 8 workers × 50 messages per 10 ms (40,000 msgs/s),
// then its hand resized. It reports the hand the pace gives (between
// BatchSize and handGrowth × BatchSize).
func BenchmarkHandSizing(b *testing.B) {
	s := New(Options{BatchSize: DefaultBatchSize, Workers: DefaultWorkers})
	h := &hand{s: s.pool, size: DefaultBatchSize, ids: map[int64]int{}}
	now := time.Now()
	b.ResetTimer()
	for i := range b.N {
		if i%DefaultWorkers == 0 {
			now = now.Add(10 * time.Millisecond)
		}
		h.resize(50, now)
	}
	b.ReportMetric(float64(h.size), "hand-msgs")
}

// BenchmarkLane measures a connection's lane (lane.acquire, the rate
// tokens, lane.finished, lane.release): one op is one send's passage
// through it, from parallel goroutines, the level pinned at 100 sends in
// flight. "tokens" adds a max_per_second far above the pace, so every
// send also takes a token of the bucket without waiting.
func BenchmarkLane(b *testing.B) {
	for _, perSecond := range []float64{0, 1e9} {
		name := "slots"
		if perSecond > 0 {
			name = "slots+tokens"
		}
		b.Run(name, func(b *testing.B) {
			ln := &lane{conc: newAdaptive(100, 0, true)}
			ln.configure(100, true, perSecond, 1)
			ctx := context.Background()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					epoch, err := ln.acquire(ctx)
					if err != nil {
						b.Error(err)
						return
					}
					if perSecond > 0 {
						ln.reserve(time.Now())
					}
					ln.finished(epoch, time.Millisecond, nil)
					ln.release()
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sends/s")
		})
	}
}

// BenchmarkAdaptiveConcurrencyController measures the adaptive
// concurrency controller alone: one op is one send's outcome fed to it,
// sends always waiting for a slot, against a simulated provider whose
// sends take 10 ms and that asks to slow down whenever more than 40 are
// in flight. It reports the mean level over the run (the controller
// probes above 40 and falls back: a level near 40 is the target).
// test/scalebench's BenchmarkAdaptiveConcurrency is the end-to-end
// figure.
func BenchmarkAdaptiveConcurrencyController(b *testing.B) {
	const capacity, took = 40, 10 * time.Millisecond
	c := newAdaptive(1000, StartConcurrency, false)
	now := time.Now()
	levels := 0.0
	b.ResetTimer()
	for range b.N {
		level := c.limit()
		levels += float64(level)
		now = now.Add(took / time.Duration(level))
		if level > capacity {
			c.slowedDown(c.epoch, now)
			continue
		}
		c.succeeded(now, took, true)
	}
	b.ReportMetric(levels/float64(b.N), "mean-level")
}

// commitStore is a LogBatchStore whose every transaction costs commit,
// one transaction at a time (the log flush of a database, SQLite's single
// writer), counting transactions and the batches in them.
type commitStore struct {
	*apptest.LogStore
	mu      sync.Mutex
	commit  time.Duration
	commits atomic.Int64
	batches atomic.Int64
}

func (c *commitStore) RecordOutcomes(ctx context.Context, owner string, outs []core.LogOutcome) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	time.Sleep(c.commit)
	c.commits.Add(1)
	c.batches.Add(1)
	return len(outs), nil
}

func (c *commitStore) RecordOutcomesOfOwners(ctx context.Context, owners []string, outs [][]core.LogOutcome) ([]int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	time.Sleep(c.commit)
	c.commits.Add(1)
	c.batches.Add(int64(len(owners)))
	applied := make([]int, len(owners))
	for i := range outs {
		applied[i] = len(outs[i])
	}
	return applied, nil
}

func (c *commitStore) RecordOutcomesAndClaim(ctx context.Context, owners []string, outs [][]core.LogOutcome, claims []int, lease time.Duration) ([]int, [][]*core.Log, error) {
	applied, err := c.RecordOutcomesOfOwners(ctx, owners, outs)
	return applied, make([][]*core.Log, len(owners)), err
}

// BenchmarkGroupCommit measures the recorder (the group commit of the
// workers' outcomes): 8 workers each record batches of 50 outcomes as
// fast as they can on a store whose transactions cost 1 ms each, one at
// a time; one op is one
// batch recorded. "alone" records each batch in its own transaction (no
// Options.Batches), "grouped" through the recorder. It reports outcomes
// recorded per second and batches per commit.
func BenchmarkGroupCommit(b *testing.B) {
	const workers, batch = 8, 50
	for _, grouped := range []bool{false, true} {
		name := "alone"
		if grouped {
			name = "grouped"
		}
		b.Run(name, func(b *testing.B) {
			store := &commitStore{LogStore: apptest.NewLogStore(), commit: time.Millisecond}
			o := Options{Logs: store, Workers: workers, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if grouped {
				o.Batches = store
			}
			s := New(o)
			stop := s.startRecorder()
			outs := make([]core.LogOutcome, batch)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for w := range workers {
				owner := fmt.Sprintf("w%d", w)
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						s.record(context.Background(), owner, outs, 0)
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			stop()
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "outcomes/s")
			b.ReportMetric(float64(store.batches.Load())/float64(max(store.commits.Load(), 1)), "batches/commit")
		})
	}
}
