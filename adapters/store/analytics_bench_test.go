package store_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// BenchmarkAnalyticsAtScale seeds MariaDB with 100,000 logs over 90 days
// (MAILSVC_BENCH_LOGS sets another count) through ImportLogs, so both
// roll-ups grow as in production, plus provider events for about a fifth
// of them, and reports p50 and p95 of the Pro analytics overview and
// deliverability over 30 days, with the roll-ups as the writers leave
// them (sharded) and after CompactRollups.
func BenchmarkAnalyticsAtScale(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds a hundred thousand logs")
	}
	n := 100_000
	if v := os.Getenv("MAILSVC_BENCH_LOGS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("MAILSVC_BENCH_LOGS=%q: want at least 1000", v)
		}
	}
	ctx := context.Background()
	db, err := store.Open(ctx, testdb.MySQL(b), store.DefaultPrefix, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var conns []int64
	for i, d := range []string{"sendgrid", "mailgun", "smtp"} {
		c := &core.Connection{Name: fmt.Sprint("c", i), Driver: d, IsActive: true}
		if err := db.CreateConnection(ctx, c); err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c.ID)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	end := time.Now().UTC()
	start := end.Add(-90 * 24 * time.Hour)
	t0 := time.Now()
	type ev struct {
		log      int64
		provider string
		event    string
		at       time.Time
	}
	var events []ev
	for done := 0; done < n; {
		batch := make([]*core.Log, 0, 1000)
		for range min(1000, n-done) {
			at := start.Add(time.Duration(rng.Int64N(int64(90 * 24 * time.Hour))))
			c := conns[rng.IntN(len(conns))]
			l := &core.Log{Status: core.StatusDelivered, Source: fmt.Sprint("plugin-", rng.IntN(8)), SentConnectionID: &c, CreatedAt: at,
				Message: core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: fmt.Sprintf("u%d@example.com", rng.IntN(50000))}}, Subject: "Order"}}
			if rng.IntN(10) < 1 {
				l.Status = core.StatusFailed
			}
			batch = append(batch, l)
		}
		if err := db.ImportLogs(ctx, batch); err != nil {
			b.Fatal(err)
		}
		for _, l := range batch {
			if l.Status != core.StatusDelivered || *l.SentConnectionID == conns[2] {
				continue
			}
			p := map[int64]string{conns[0]: "sendgrid", conns[1]: "mailgun"}[*l.SentConnectionID]
			events = append(events, ev{l.ID, p, core.EventDelivered, l.CreatedAt.Add(time.Minute)})
			switch r := rng.IntN(100); {
			case r < 2:
				events = append(events, ev{l.ID, p, core.EventBounced, l.CreatedAt.Add(2 * time.Minute)})
			case r < 3:
				events = append(events, ev{l.ID, p, core.EventComplained, l.CreatedAt.Add(time.Hour)})
			case r < 25:
				events = append(events, ev{l.ID, p, core.EventOpened, l.CreatedAt.Add(time.Hour)})
			}
		}
		done += len(batch)
	}
	for part := range slices.Chunk(events, 1000) {
		var sb strings.Builder
		args := make([]any, 0, 5*len(part))
		for i, e := range part {
			if i > 0 {
				sb.WriteString(",")
			}
			sb.WriteString("(?,?,?,?,'{}',?)")
			args = append(args, e.log, e.provider, e.event, e.at, e.at)
		}
		if err := db.Gorm().Exec("INSERT INTO wp_mailsvc_log_events (log_id, provider, event, occurred_at, detail, created_at) VALUES "+sb.String(), args...).Error; err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Gorm().Exec("ANALYZE TABLE wp_mailsvc_logs, wp_mailsvc_log_events, wp_mailsvc_outcome_buckets, wp_mailsvc_source_buckets").Error; err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d logs and %d provider events in %s", n, len(events), time.Since(t0).Round(time.Second))
	from, to := end.Add(-30*24*time.Hour).Truncate(15*time.Minute), end.Truncate(15*time.Minute)
	svc := &analytics.Service{Rollups: db, Events: db, Logs: db, Connections: db}
	q := analytics.RangeQuery{Days: "30"}
	// measure logs each store read's mean and the routes' p50 and p95.
	measure := func(stage string) {
		for _, table := range []string{"outcome_buckets", "source_buckets"} {
			var rows int64
			if err := db.Gorm().Raw("SELECT COUNT(*) FROM wp_mailsvc_" + table).Scan(&rows).Error; err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: %s holds %d rows", stage, table, rows)
		}
		for _, m := range []struct {
			name string
			call func() error
		}{
			{"OutcomeTotals", func() error { _, err := db.OutcomeTotals(ctx, from, to); return err }},
			{"SourceTotals", func() error { _, err := db.SourceTotals(ctx, from, to); return err }},
			{"OutcomeBuckets", func() error { _, err := db.OutcomeBuckets(ctx, from, to); return err }},
			{"SourceBuckets", func() error { _, err := db.SourceBuckets(ctx, from, to); return err }},
			{"EventCounts", func() error { _, err := db.EventCounts(ctx, from, to); return err }},
			{"LogEventTallies", func() error {
				_, err := db.LogEventTallies(ctx, from, to, []string{core.EventBounced, core.EventComplained})
				return err
			}},
		} {
			t := time.Now()
			for range 10 {
				if err := m.call(); err != nil {
					b.Fatal(err)
				}
			}
			b.Logf("%s: %s: %.1f ms", stage, m.name, ms(time.Since(t)/10))
		}
		for _, m := range []struct {
			name string
			call func() error
		}{
			{"overview, 30 days (and the previous 30)", func() error { _, err := svc.Overview(ctx, q); return err }},
			{"deliverability, 30 days", func() error { _, err := svc.Deliverability(ctx, q); return err }},
		} {
			var lat []time.Duration
			for i := range 70 {
				t := time.Now()
				if err := m.call(); err != nil {
					b.Fatal(err)
				}
				if i >= 20 { // 20 warm-up calls
					lat = append(lat, time.Since(t))
				}
			}
			slices.Sort(lat)
			b.Logf("%s: %-42s p50 %6.1f ms  p95 %6.1f ms", stage, m.name, ms(lat[len(lat)/2]), ms(lat[len(lat)*95/100]))
		}
	}
	b.ResetTimer()
	for range b.N {
		measure("sharded")
		t := time.Now()
		done, err := db.CompactRollups(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("CompactRollups folded %d counters and removed %d rows in %s", done.Keys, done.RowsRemoved, time.Since(t).Round(time.Millisecond))
		if err := db.Gorm().Exec("ANALYZE TABLE wp_mailsvc_outcome_buckets, wp_mailsvc_source_buckets").Error; err != nil {
			b.Fatal(err)
		}
		measure("compacted")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
