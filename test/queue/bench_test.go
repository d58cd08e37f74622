package queue

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/app/floodguard"
	"github.com/mailsvc/mailsvc/core"
	_ "github.com/mailsvc/mailsvc/drivers/smtp"
	"github.com/mailsvc/mailsvc/internal/testdb"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// benchMessages is how many one-kilobyte messages each benchmark round
// moves.
const benchMessages = 10000

// BenchmarkDrain measures the delivery engine in process on a full queue:
// 10,000 one-kilobyte messages committed as queued before the engine
// starts, then delivered by the default worker pool into the SMTP sink
// over loopback, every outcome recorded. It reports delivered messages per
// second, and beside it the sink's own ceiling in the same run (the same
// number of messages sent straight to the sink over reused connections,
// as many at once as the connection's max_concurrency), so the two
// figures can be compared on one machine state.
func BenchmarkDrain(b *testing.B) {
	for _, dialect := range []string{"mysql", "sqlite"} {
		b.Run(dialect, func(b *testing.B) {
			bench := newBenchQueue(b, dialect)
			sinkRate := sinkCeiling(b, bench.sink, core.DefaultDriverConcurrency)
			bench.sink.Reset()
			var elapsed, cpu, dbCPU time.Duration
			delivered := 0
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				bench.fill(b)
				b.StartTimer()
				t0 := time.Now()
				cpu0, db0 := servicetest.ProcessCPU(b, os.Getpid()), servicetest.DatabaseCPU(b)
				stop := bench.run()
				delivered += benchMessages
				bench.await(b, delivered)
				elapsed += time.Since(t0)
				cpu += servicetest.ProcessCPU(b, os.Getpid()) - cpu0
				dbCPU += servicetest.DatabaseCPU(b) - db0
				stop()
			}
			b.StopTimer()
			if got := len(bench.sink.Messages()); got < delivered {
				b.Fatalf("the sink received %d messages, want %d", got, delivered)
			}
			rate := float64(delivered) / elapsed.Seconds()
			b.ReportMetric(rate, "msgs/s")
			b.ReportMetric(sinkRate, "sink-msgs/s")
			b.ReportMetric(100*rate/sinkRate, "%-of-sink")
			// The CPU of this process (the engine and the sink it sends
			// to) and, on MariaDB, of the database, per message: a rate
			// moves with what else the machine runs, these much less.
			b.ReportMetric(float64(cpu.Microseconds())/float64(delivered), "CPU-us/msg")
			if dialect == "mysql" {
				b.ReportMetric(float64(dbCPU.Microseconds())/float64(delivered), "db-CPU-us/msg")
			}
			reportStageCosts(b, bench.svc)
		})
	}
}

// reportStageCosts reports the time each stage of the delivery decision
// took per message it saw, in µs ("send" holds the attempt with its wait
// for a send slot).
func reportStageCosts(b *testing.B, svc *delivery.Service) {
	for _, c := range svc.StageCosts() {
		if c.Messages > 0 {
			b.ReportMetric(float64(c.Time)/float64(time.Microsecond)/float64(c.Messages), "stage-"+c.Name+"-µs/msg")
		}
	}
}

// BenchmarkEnqueueToDelivered measures the delivery engine in process
// while the queue fills: 10,000 one-kilobyte messages enqueued by 8
// concurrent callers (one commit each), delivered by the default worker
// pool into the SMTP sink over loopback as they arrive, every outcome
// recorded. It reports delivered messages per second and the enqueue
// latency percentiles.
func BenchmarkEnqueueToDelivered(b *testing.B) {
	for _, dialect := range []string{"mysql", "sqlite"} {
		b.Run(dialect, func(b *testing.B) {
			benchDelivery(b, newBenchQueue(b, dialect))
		})
	}
}

// benchQueue is a store with the sink as its default connection and a
// delivery service on it.
type benchQueue struct {
	db   *store.DB
	sink *smtpsink.Sink
	svc  *delivery.Service
	next int // the number of the next message
}

func newBenchQueue(b *testing.B, dialect string) *benchQueue {
	dsn := testdb.SQLite(b)
	if dialect == "mysql" {
		dsn = testdb.MySQL(b)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	sink := smtpsink.Start(b)
	db, err := store.Open(ctx, dsn, store.DefaultPrefix, quiet)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	conn := &core.Connection{Name: "sink", Driver: "smtp", IsActive: true, Settings: core.Settings{
		"host": sink.Host(), "port": int64(sink.Port()), "encryption": "none", "auth": false,
	}}
	if err := db.Connections().CreateConnection(ctx, conn); err != nil {
		b.Fatal(err)
	}
	if err := db.Settings().SaveSettings(ctx, core.ScopeFree, map[string]any{"default_connection_id": conn.ID}); err != nil {
		b.Fatal(err)
	}
	settings := &app.Settings{Store: db.Settings(), Connections: db.Connections()}
	svc := delivery.New(delivery.Options{
		Logs:        db.Logs(),
		Batches:     db.Logs(),
		Connections: &app.Connections{Store: db.Connections()},
		Settings:    settings,
		Logger:      quiet,
		// The flood guard, as the service wires it (the bench source is
		// alerted on only: nothing is held).
		Stages: []delivery.AddedStage{delivery.FloodStage(&floodguard.Guard{Volumes: db.Flood(), Settings: settings, Logger: quiet})},
	})
	return &benchQueue{db: db, sink: sink, svc: svc}
}

// fill commits benchMessages queued messages, 500 per transaction.
func (q *benchQueue) fill(b *testing.B) {
	const chunk = 500
	for done := 0; done < benchMessages; done += chunk {
		logs := make([]*core.Log, 0, chunk)
		for range min(chunk, benchMessages-done) {
			logs = append(logs, &core.Log{Message: message(q.next), Source: "bench"})
			q.next++
		}
		if err := q.db.Logs().EnqueueLogs(context.Background(), logs); err != nil {
			b.Fatal(err)
		}
	}
}

// run starts the service and returns its stop, which waits for it.
func (q *benchQueue) run() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); q.svc.Run(ctx) }()
	return func() { cancel(); <-done }
}

// await waits until no message is queued or sending any more, then
// checks that delivered messages have been delivered in all. It polls
// the pending counts (a read of the claim index, which shrinks as the
// drain goes) half the expected time to the end apart, 10 to 200 ms,
// so that measuring takes little of the database the drain runs on (a
// count of every status every few milliseconds cost the database more
// than the drain itself).
func (q *benchQueue) await(b *testing.B, delivered int) {
	t0 := time.Now()
	deadline := t0.Add(10 * time.Minute)
	first := -1
	for {
		st, err := q.db.Logs().PendingCounts(context.Background())
		pending := st.Queued + st.Sending
		if err == nil && pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("not delivered in 10 minutes: %+v (%v)", st, err)
		}
		wait := 10 * time.Millisecond
		if first < 0 {
			first = pending
		} else if el := time.Since(t0).Seconds(); first > pending && el > 0 {
			eta := time.Duration(float64(pending) / (float64(first-pending) / el) * float64(time.Second))
			wait = min(max(eta/2, 10*time.Millisecond), 200*time.Millisecond)
		}
		time.Sleep(wait)
	}
	st, err := q.db.Logs().QueueStats(context.Background())
	if err != nil || st.Delivered < delivered {
		b.Fatalf("queue drained with %+v (%v), want %d delivered", st, err, delivered)
	}
}

// sinkCeiling sends benchMessages messages of the benchmark's size
// straight to the sink over conns reused connections and returns the
// messages per second.
func sinkCeiling(b *testing.B, sink *smtpsink.Sink, conns int) float64 {
	data := "From: shop@example.com\r\nTo: buyer@example.com\r\nSubject: ceiling\r\n\r\n" + strings.Repeat("x", 900) + "\r\n"
	next := make(chan struct{})
	var wg sync.WaitGroup
	t0 := time.Now()
	for range conns {
		wg.Go(func() {
			c, err := smtp.Dial(sink.Addr())
			if err != nil {
				b.Error(err)
				return
			}
			defer c.Close()
			if err := c.Hello("localhost"); err != nil {
				b.Error(err)
				return
			}
			for range next {
				if _, err := smtpsink.Send(c, "shop@example.com", []string{"buyer@example.com"}, data); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	for range benchMessages {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	return benchMessages / time.Since(t0).Seconds()
}

func benchDelivery(b *testing.B, q *benchQueue) {
	const callers = 8
	ctx := context.Background()
	stop := q.run()
	defer stop()

	var lat []time.Duration
	var latMu sync.Mutex
	delivered := 0
	b.ResetTimer()
	startAll := time.Now()
	for range b.N {
		next := make(chan int)
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				var mine []time.Duration
				for i := range next {
					t0 := time.Now()
					if _, err := q.svc.Enqueue(ctx, &core.Log{Message: message(i), Source: "bench"}); err != nil {
						b.Error(err)
						continue
					}
					mine = append(mine, time.Since(t0))
				}
				latMu.Lock()
				lat = append(lat, mine...)
				latMu.Unlock()
			})
		}
		for i := range benchMessages {
			next <- i
		}
		close(next)
		wg.Wait()
		delivered += benchMessages
		q.await(b, delivered)
	}
	elapsed := time.Since(startAll)
	b.StopTimer()
	if got := len(q.sink.Messages()); got < delivered {
		b.Fatalf("the sink received %d messages, want %d", got, delivered)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(delivered)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(pct(0.50), "enqueue-p50-ms")
	b.ReportMetric(pct(0.99), "enqueue-p99-ms")
}
