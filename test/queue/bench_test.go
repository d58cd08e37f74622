package queue

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/core"
	_ "github.com/mailsvc/mailsvc/drivers/smtp"
	"github.com/mailsvc/mailsvc/internal/testdb"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// BenchmarkEnqueueToDelivered measures the delivery engine in process:
// 10,000 one-kilobyte messages enqueued by 8 concurrent callers, delivered
// by the default worker pool into the SMTP sink over loopback, every
// outcome recorded. It reports delivered messages per second and the
// enqueue latency percentiles.
func BenchmarkEnqueueToDelivered(b *testing.B) {
	for _, dialect := range []string{"mysql", "sqlite"} {
		b.Run(dialect, func(b *testing.B) {
			dsn := testdb.SQLite(b)
			if dialect == "mysql" {
				dsn = testdb.MySQL(b)
			}
			benchDelivery(b, dsn)
		})
	}
}

func benchDelivery(b *testing.B, dsn string) {
	const perRound, callers = 10000, 8
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	sink := smtpsink.Start(b)
	db, err := store.Open(ctx, dsn, store.DefaultPrefix, quiet)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	conn := &core.Connection{Name: "sink", Driver: "smtp", IsActive: true, Settings: core.Settings{
		"host": sink.Host(), "port": int64(sink.Port()), "encryption": "none", "auth": false,
	}}
	if err := db.CreateConnection(ctx, conn); err != nil {
		b.Fatal(err)
	}
	if err := db.SaveSettings(ctx, core.ScopeFree, map[string]any{"default_connection_id": conn.ID}); err != nil {
		b.Fatal(err)
	}
	svc := &delivery.Service{
		Logs:        db,
		Connections: &app.Connections{Store: db},
		Settings:    &app.Settings{Store: db, Connections: db},
		Leases:      db,
		Logger:      quiet,
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(runCtx) }()
	defer func() { stop(); <-done }()

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
					if _, err := svc.Enqueue(ctx, &core.Log{Message: message(i), Source: "bench"}); err != nil {
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
		for i := range perRound {
			next <- i
		}
		close(next)
		wg.Wait()
		delivered += perRound
		deadline := time.Now().Add(10 * time.Minute)
		for {
			st, err := db.QueueStats(ctx)
			if err == nil && st.Delivered >= delivered {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("not delivered in 10 minutes: %+v", st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	elapsed := time.Since(startAll)
	b.StopTimer()
	if got := len(sink.Messages()); got < delivered {
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
