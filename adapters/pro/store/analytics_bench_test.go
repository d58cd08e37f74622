package store_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// BenchmarkAnalyticsAtScale seeds MariaDB with 100,000 logs over 90 days
// (MAILSVC_BENCH_LOGS sets another count) through ImportLogs, so the
// outcome roll-ups grow as in production, plus provider events for about
// two thirds of them, opens repeated up to three times over five days
// (their roll-ups built as the Pro migration 3 builds them),
// and reports p50 and p95 of the Pro analytics overview and
// deliverability over 30 days (in UTC, in Europe/Paris, whose days have
// ragged UTC edges, and as they read before the hour, day and event
// roll-ups), with the roll-ups as the writers leave them (sharded) and
// after CompactRollups.
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
	sdb, err := store.Open(ctx, testdb.MySQL(b), store.DefaultPrefix, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer sdb.Close()
	db := newProDB(sdb)
	var conns []int64
	for i, d := range []string{"sendgrid", "mailgun", "smtp"} {
		c := &core.Connection{Name: fmt.Sprint("c", i), Driver: d, IsActive: true}
		if err := db.Connections().CreateConnection(ctx, c); err != nil {
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
	var evs []ev
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
		if err := db.Logs().ImportLogs(ctx, batch); err != nil {
			b.Fatal(err)
		}
		for _, l := range batch {
			if l.Status != core.StatusDelivered || *l.SentConnectionID == conns[2] {
				continue
			}
			p := map[int64]string{conns[0]: "sendgrid", conns[1]: "mailgun"}[*l.SentConnectionID]
			evs = append(evs, ev{l.ID, p, events.EventDelivered, l.CreatedAt.Add(time.Minute)})
			switch r := rng.IntN(100); {
			case r < 2:
				evs = append(evs, ev{l.ID, p, events.EventBounced, l.CreatedAt.Add(2 * time.Minute)})
			case r < 3:
				evs = append(evs, ev{l.ID, p, events.EventComplained, l.CreatedAt.Add(time.Hour)})
			case r < 25:
				evs = append(evs, ev{l.ID, p, events.EventOpened, l.CreatedAt.Add(time.Hour)})
				// Opened again, up to three times over the next five days.
				for range rng.IntN(4) {
					evs = append(evs, ev{l.ID, p, events.EventOpened, l.CreatedAt.Add(time.Hour + time.Duration(rng.Int64N(int64(5*24*time.Hour))))})
				}
			}
		}
		done += len(batch)
	}
	for part := range slices.Chunk(evs, 1000) {
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
	b.Logf("seeded %d logs and %d provider events in %s", n, len(evs), time.Since(t0).Round(time.Second))
	// The events went in around RecordLogEvent: build their roll-ups as
	// the Pro migration 3 builds them from existing data, and the hour
	// and day roll-ups of the outcomes as the service's migration 11
	// does (those by source with the Pro migration 4).
	t0 = time.Now()
	for _, table := range []string{"outcome_rollups", "source_rollups", "event_buckets", "event_repeats"} {
		if err := db.Gorm().Exec("DROP TABLE wp_mailsvc_" + table).Error; err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Gorm().Exec("DELETE FROM wp_mailsvc_migrations WHERE version = 11").Error; err != nil {
		b.Fatal(err)
	}
	if err := db.Gorm().Exec("DELETE FROM wp_mailsvc_pro_migrations WHERE version IN (3, 4)").Error; err != nil {
		b.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("migration 11 and the Pro migrations 3 and 4 built the roll-ups from the existing data in %s", time.Since(t0).Round(time.Millisecond))
	if err := db.Gorm().Exec("ANALYZE TABLE wp_mailsvc_logs, wp_mailsvc_log_events, wp_mailsvc_outcome_buckets, wp_mailsvc_source_buckets, " +
		"wp_mailsvc_outcome_rollups, wp_mailsvc_source_rollups, wp_mailsvc_event_buckets, wp_mailsvc_event_repeats").Error; err != nil {
		b.Fatal(err)
	}
	from, to := end.Add(-30*24*time.Hour).Truncate(15*time.Minute), end.Truncate(15*time.Minute)
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		b.Fatal(err)
	}
	svc := &analytics.Service{Rollups: db.Analytics(), Events: db.Events(), Logs: db.Analytics(), Connections: db.Connections()}
	svcParis := &analytics.Service{Rollups: db.Analytics(), Events: db.Events(), Logs: db.Analytics(), Connections: db.Connections(),
		Location: func(context.Context) (*time.Location, error) { return paris, nil }}
	// As the routes read before the hour, day and event roll-ups.
	direct := directReads{db}
	before := &analytics.Service{Rollups: direct, Events: direct, Logs: db.Analytics(), Connections: db.Connections()}
	q := analytics.RangeQuery{Days: "30"}
	// measure logs each store read's mean and the routes' p50 and p95,
	// once it checked that both routes answer as they did before.
	measure := func(stage string) {
		for _, tz := range []*time.Location{nil, paris} {
			loc := func(context.Context) (*time.Location, error) { return tz, nil }
			now, old := *svc, *before
			now.Location, old.Location = loc, loc
			o1, err1 := now.Overview(ctx, q)
			o2, err2 := old.Overview(ctx, q)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(o1, o2) {
				b.Fatalf("%s: overview (%v) differs from before the roll-ups:\n%+v (%v)\n%+v (%v)", stage, tz, o1, err1, o2, err2)
			}
			d1, err1 := now.Deliverability(ctx, q)
			d2, err2 := old.Deliverability(ctx, q)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(d1, d2) {
				b.Fatalf("%s: deliverability (%v) differs from before the roll-ups:\n%+v (%v)\n%+v (%v)", stage, tz, d1, err1, d2, err2)
			}
		}
		for _, table := range []string{"outcome_buckets", "source_buckets", "outcome_rollups", "source_rollups", "event_buckets", "event_repeats"} {
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
			{"OutcomeTotals", func() error { _, err := db.Analytics().OutcomeTotals(ctx, from, to); return err }},
			{"SourceTotals", func() error { _, err := db.Analytics().SourceTotals(ctx, from, to); return err }},
			{"OutcomeBuckets", func() error { _, err := db.Logs().OutcomeBuckets(ctx, from, to); return err }},
			{"SourceBuckets", func() error { _, err := db.Analytics().SourceBuckets(ctx, from, to); return err }},
			{"EventCounts", func() error { _, err := db.Events().EventCounts(ctx, from, to); return err }},
			{"LogEventTallies", func() error {
				_, err := db.Events().LogEventTallies(ctx, from, to, []string{events.EventBounced, events.EventComplained})
				return err
			}},
			{"OutcomeTotals, 15-minute buckets only (before)", func() error { _, err := direct.OutcomeTotals(ctx, from, to); return err }},
			{"SourceTotals, 15-minute buckets only (before)", func() error { _, err := direct.SourceTotals(ctx, from, to); return err }},
			{"EventCounts over the events (before)", func() error { _, err := direct.EventCounts(ctx, from, to); return err }},
			{"LogEventTallies over the events (before)", func() error {
				_, err := direct.LogEventTallies(ctx, from, to, []string{events.EventBounced, events.EventComplained})
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
			{"overview, 30 days, Europe/Paris", func() error { _, err := svcParis.Overview(ctx, q); return err }},
			{"deliverability, 30 days, Europe/Paris", func() error { _, err := svcParis.Deliverability(ctx, q); return err }},
			{"overview, 30 days, before the roll-ups", func() error { _, err := before.Overview(ctx, q); return err }},
			{"deliverability, 30 days, before the roll-ups", func() error { _, err := before.Deliverability(ctx, q); return err }},
		} {
			var lat []time.Duration
			calls, warm := 70, 20
			if strings.Contains(m.name, "before") {
				calls, warm = 25, 5 // up to seconds each
			}
			for i := range calls {
				t := time.Now()
				if err := m.call(); err != nil {
					b.Fatal(err)
				}
				if i >= warm { // warm-up calls first
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
		done, err := db.Rollups().CompactRollups(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("CompactRollups folded %d counters and removed %d rows in %s", done.Keys, done.RowsRemoved, time.Since(t).Round(time.Millisecond))
		if err := db.Gorm().Exec("ANALYZE TABLE wp_mailsvc_outcome_buckets, wp_mailsvc_source_buckets, " +
			"wp_mailsvc_outcome_rollups, wp_mailsvc_source_rollups, wp_mailsvc_event_buckets").Error; err != nil {
			b.Fatal(err)
		}
		measure("compacted")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// directReads answers the analytics reads as they were made before the
// hour, day and event roll-ups: the outcomes from the 15-minute buckets,
// the provider events counted one by one.
type directReads struct{ db *proDB }

func (d directReads) sums(ctx context.Context, key, table string, from, to time.Time, scan func(k, status string, n int64)) error {
	rows, err := d.db.Gorm().WithContext(ctx).Raw(`SELECT `+key+`, status, SUM(messages) FROM wp_mailsvc_`+table+`
		WHERE bucket_start >= ? AND bucket_start < ? GROUP BY `+key+`, status ORDER BY `+key+`, status`, from.UTC(), to.UTC()).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k, status string
		var n int64
		if err := rows.Scan(&k, &status, &n); err != nil {
			return err
		}
		scan(k, status, n)
	}
	return rows.Err()
}

func (d directReads) OutcomeTotals(ctx context.Context, from, to time.Time) ([]core.OutcomeBucket, error) {
	var out []core.OutcomeBucket
	err := d.sums(ctx, "connection_id", "outcome_buckets", from, to, func(k, status string, n int64) {
		id, _ := strconv.ParseInt(k, 10, 64)
		out = append(out, core.OutcomeBucket{Start: from, ConnectionID: id, Status: status, Count: n})
	})
	return out, err
}

func (d directReads) SourceTotals(ctx context.Context, from, to time.Time) ([]analytics.SourceBucket, error) {
	var out []analytics.SourceBucket
	err := d.sums(ctx, "source", "source_buckets", from, to, func(k, status string, n int64) {
		out = append(out, analytics.SourceBucket{Start: from, Source: k, Status: status, Count: n})
	})
	return out, err
}

func (d directReads) EventCounts(ctx context.Context, from, to time.Time) ([]analytics.EventCount, error) {
	rows, err := d.db.Gorm().WithContext(ctx).Raw(`SELECT provider, event, COUNT(*), COUNT(DISTINCT log_id)
		FROM wp_mailsvc_log_events WHERE occurred_at >= ? AND occurred_at < ?
		GROUP BY provider, event ORDER BY provider, event`, from.UTC(), to.UTC()).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []analytics.EventCount
	for rows.Next() {
		var c analytics.EventCount
		if err := rows.Scan(&c.Provider, &c.Event, &c.Events, &c.Messages); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (d directReads) LogEventTallies(ctx context.Context, from, to time.Time, events []string) ([]analytics.LogEventTally, error) {
	rows, err := d.db.Gorm().WithContext(ctx).Raw(`SELECT COALESCE(l.sent_connection_id, 0), l.source, e.event, COUNT(DISTINCT e.log_id)
		FROM wp_mailsvc_log_events e JOIN wp_mailsvc_logs l ON l.id = e.log_id
		WHERE e.occurred_at >= ? AND e.occurred_at < ? AND e.event IN ?
		GROUP BY COALESCE(l.sent_connection_id, 0), l.source, e.event ORDER BY 1, 2, 3`, from.UTC(), to.UTC(), events).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []analytics.LogEventTally
	for rows.Next() {
		var c analytics.LogEventTally
		if err := rows.Scan(&c.ConnectionID, &c.Source, &c.Event, &c.Messages); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
