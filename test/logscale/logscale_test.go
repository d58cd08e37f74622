// Package logscale measures the email log API over a million logs in
// MariaDB. It holds only a benchmark: `go test` seeds nothing, and
// `make bench` (go test -bench .) runs it.
package logscale

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// Shape of the seeded log.
const (
	defaultLogs = 1_000_000
	addresses   = 200_000 // distinct To addresses: about 5 logs each
	words       = 2_000   // distinct subject words: about 500 logs each
	days        = 90      // the logs span the last 90 days
	requests    = 50      // requests per measured query
	likeRuns    = 3       // the LIKE scan is slow: fewer runs
	warmup      = 20      // unmeasured requests before each measured query
)

// admin lets every request in as an administrator.
type admin struct{}

func (admin) Authenticate(*http.Request, bool) (*core.User, error) {
	return &core.User{ID: 1, Login: "admin", Caps: map[string]bool{"manage_options": true}}, nil
}

// BenchmarkLogsAtScale seeds 1,000,000 logs with 1 KB bodies into a fresh
// MariaDB database (MAILSVC_BENCH_LOGS sets another count) and measures
// GET /logs through the real HTTP handler and store: a recipient search,
// a subject-word search, the status and date filters, each with the
// page's total, next to the plain LIKE '%…%' scan the log used before.
// It prints p50 and p95 per query.
func BenchmarkLogsAtScale(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds a million rows")
	}
	n := defaultLogs
	if v := os.Getenv("MAILSVC_BENCH_LOGS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("MAILSVC_BENCH_LOGS=%q: want a count of at least 1000", v)
		}
	}
	ctx := context.Background()
	dsn, reused := benchDatabase(ctx, b, n)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := store.Open(ctx, dsn, store.DefaultPrefix, quiet)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	raw, err := sql.Open("mysql", testdb.DriverDSN(dsn))
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()

	end := time.Now().UTC().Truncate(time.Second)
	start := end.Add(-days * 24 * time.Hour)
	var seeded, backfilled time.Duration
	if reused {
		// The logs' times were seeded relative to the day of the seed.
		var last string
		if err := raw.QueryRowContext(ctx, "SELECT MAX(created_at) FROM wp_mailsvc_logs").Scan(&last); err != nil {
			b.Fatal(err)
		}
		if end, err = time.Parse("2006-01-02 15:04:05.999999", last); err != nil {
			b.Fatal(err)
		}
		start = end.Add(-days * 24 * time.Hour)
	} else {
		t0 := time.Now()
		if err := seed(ctx, raw, n, start, end); err != nil {
			b.Fatal(err)
		}
		seeded = time.Since(t0)
		// The seeded logs are as schema 25 finds the logs of an existing site:
		// not in the search's address dictionary, the backfill's target the
		// highest id. The service's background backfill fills it (timed).
		if _, err := raw.ExecContext(ctx, "UPDATE wp_mailsvc_search_progress SET done_up_to = 0, target = ? WHERE name = 'addresses'", n); err != nil {
			b.Fatal(err)
		}
		t0 = time.Now()
		if _, err := db.SearchIndex().RunSearchIndex(ctx); err != nil {
			b.Fatal(err)
		}
		backfilled = time.Since(t0)
		if _, err := raw.ExecContext(ctx, "ANALYZE TABLE wp_mailsvc_logs, wp_mailsvc_log_recipients, wp_mailsvc_log_subjects, wp_mailsvc_search_addresses, wp_mailsvc_search_grams"); err != nil {
			b.Fatal(err)
		}
	}
	settle(ctx, b, raw)

	conns := apptest.NewConnectionStore()
	srv := &api.Server{
		Auth:        admin{},
		Connections: &app.Connections{Store: conns, Cipher: apptest.Cipher{Key: "k"}, Hooks: &core.Hooks{}},
		Settings:    &app.Settings{Store: apptest.NewSettingsStore(), Connections: conns},
		Logs:        &app.Logs{Store: db.Logs()},
		Hooks:       &core.Hooks{},
		Logger:      quiet,
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	day := func() (string, string) {
		d := start.AddDate(0, 0, 1+rng.IntN(days-2)).Format(time.DateOnly)
		return d, d
	}

	// MAILSVC_BENCH_ROWS, a regular expression, measures only the rows
	// whose names it matches.
	only, err := regexp.Compile(os.Getenv("MAILSVC_BENCH_ROWS"))
	if err != nil {
		b.Fatalf("MAILSVC_BENCH_ROWS: %v", err)
	}

	b.ResetTimer()
	for range b.N {
		type row struct {
			name, target string
			runs         int
			lat          []time.Duration
			total        string
		}
		var rows []*row
		measure := func(name, target string, runs int, query func() url.Values) *row {
			r := &row{name: name, target: target, runs: runs}
			if !only.MatchString(name) {
				return r
			}
			// Warm up (not measured): the first requests after a bulk
			// load meet InnoDB's background merges and cold caches.
			for range warmup {
				get(b, ts.URL+"/wp-json/mailsvc/v1/logs?"+query().Encode())
			}
			for range runs {
				q := query()
				t := time.Now()
				total := get(b, ts.URL+"/wp-json/mailsvc/v1/logs?"+q.Encode())
				r.lat = append(r.lat, time.Since(t))
				r.total = total
			}
			rows = append(rows, r)
			return r
		}
		measure("recipient search (?search=address)", "50", requests, func() url.Values {
			return url.Values{"search": {address(rng.IntN(min(addresses, n)))}}
		})
		measure("subject word search (?search=word)", "50", requests, func() url.Values {
			return url.Values{"search": {word(rng.IntN(words))}}
		})
		// A word in every subject: the full-text index holds every log
		// for it; the count is capped.
		measure("common subject word (?search=shipped)", "50", requests, func() url.Values {
			return url.Values{"search": {"shipped"}}
		})
		// Searches by a part of the address (about 10% of the logs per
		// domain; a prefix of ~20 addresses; a 4-digit fragment of ~40),
		// each also matched against the subject's words.
		domain := func() string { return fmt.Sprintf("example%d.com", rng.IntN(10)) }
		measure("domain (?search=example7.com)", "50", requests, func() url.Values {
			return url.Values{"search": {domain()}}
		})
		measure("@domain (?search=@example7.com)", "50", requests, func() url.Values {
			return url.Values{"search": {"@" + domain()}}
		})
		measure("prefix (?search=user1234)", "50", requests, func() url.Values {
			return url.Values{"search": {prefix(rng.IntN(min(addresses, n)))}}
		})
		measure("whole local part (?search=user12345@)", "50", requests, func() url.Values {
			a := address(rng.IntN(min(addresses, n)))
			return url.Values{"search": {a[:strings.IndexByte(a, '@')+1]}}
		})
		measure("local-part fragment (?search=2345)", "50", requests, func() url.Values {
			return url.Values{"search": {fragment(rng.IntN(min(addresses, n)))}}
		})
		measure("domain + status failed", "50", requests, func() url.Values {
			return url.Values{"search": {domain()}, "status": {core.StatusFailed}}
		})
		measure("domain + one day", "50", requests, func() url.Values {
			from, to := day()
			return url.Values{"search": {"@" + domain()}, "date_from": {from}, "date_to": {to}}
		})
		measure("domain + status + one day", "50", requests, func() url.Values {
			from, to := day()
			return url.Values{"search": {"@" + domain()}, "status": {core.StatusFailed}, "date_from": {from}, "date_to": {to}}
		})
		measure("prefix + status failed", "50", requests, func() url.Values {
			return url.Values{"search": {prefix(rng.IntN(min(addresses, n)))}, "status": {core.StatusFailed}}
		})
		measure("fragment + one day", "50", requests, func() url.Values {
			from, to := day()
			return url.Values{"search": {fragment(rng.IntN(min(addresses, n)))}, "date_from": {from}, "date_to": {to}}
		})
		measure("fragment in every address (?search=ser)", "50", requests, func() url.Values {
			return url.Values{"search": {"ser"}}
		})
		measure("fragment in 5% of logs (?search=ser12)", "50", requests, func() url.Values {
			return url.Values{"search": {fmt.Sprintf("ser%d", 10+rng.IntN(10))}}
		})
		measure("fragment 5% + status failed", "-", requests, func() url.Values {
			return url.Values{"search": {fmt.Sprintf("ser%d", 10+rng.IntN(10))}, "status": {core.StatusFailed}}
		})
		measure("status filter (?status=failed)", "20", requests, func() url.Values {
			return url.Values{"status": {core.StatusFailed}, "page": {strconv.Itoa(1 + rng.IntN(5))}}
		})
		measure("date filter (one day)", "20", requests, func() url.Values {
			from, to := day()
			return url.Values{"date_from": {from}, "date_to": {to}}
		})
		measure("status + date filter", "20", requests, func() url.Values {
			from, to := day()
			return url.Values{"status": {core.StatusFailed}, "date_from": {from}, "date_to": {to}}
		})
		measure("no filter, page 1", "-", requests, func() url.Values { return url.Values{} })
		if like := (&row{name: "plain LIKE '%address%' scan (before)", target: "-", runs: likeRuns}); only.MatchString(like.name) {
			for range likeRuns {
				t := time.Now()
				like.total = likeScan(ctx, b, raw, address(rng.IntN(min(addresses, n))))
				like.lat = append(like.lat, time.Since(t))
			}
			rows = append(rows, like)
		}
		// The word search again, two minutes and a full table scan later:
		// InnoDB's full-text index settles after a bulk load.
		measure("subject word search, after the scans", "50", requests, func() url.Values {
			return url.Values{"search": {word(rng.IntN(words))}}
		})
		if rollups := (&row{name: "outcome roll-ups, 30 days (store)", target: "-", runs: requests}); only.MatchString(rollups.name) {
			for range requests {
				t := time.Now()
				bs, err := db.Logs().OutcomeBuckets(ctx, end.AddDate(0, 0, -30), end)
				if err != nil {
					b.Fatal(err)
				}
				rollups.lat = append(rollups.lat, time.Since(t))
				rollups.total = strconv.Itoa(len(bs)) + " buckets"
			}
			rows = append(rows, rollups)
		}

		fmt.Printf("\nEmail log over %d logs (1 KB bodies) in MariaDB, seeded in %s, address dictionary backfilled in %s; GET /logs through the HTTP handler, per_page 10, total included\n",
			n, seeded.Round(time.Second), backfilled.Round(time.Second))
		fmt.Printf("%-40s %5s %10s %10s %10s  %s\n", "query", "runs", "p50 ms", "p95 ms", "target ms", "X-WP-Total of the last")
		for _, r := range rows {
			slices.Sort(r.lat)
			p := func(q float64) float64 { return float64(r.lat[int(q*float64(len(r.lat)-1)+0.5)].Microseconds()) / 1000 }
			fmt.Printf("%-40s %5d %10.1f %10.1f %10s  %s\n", r.name, r.runs, p(0.50), p(0.95), r.target, r.total)
			b.ReportMetric(p(0.95), metricName(r.name))
		}
	}
}

// benchDatabase returns the DSN of the database to measure, and whether
// it already holds the n seeded logs. With MAILSVC_BENCH_DB set it is that
// database on the test server, kept after the run: created and seeded by
// the first run, measured as it is by the next ones (a million logs take
// minutes to seed). Otherwise it is a fresh database, dropped at the end.
func benchDatabase(ctx context.Context, b *testing.B, n int) (string, bool) {
	name := os.Getenv("MAILSVC_BENCH_DB")
	if name == "" {
		return testdb.MySQL(b), false
	}
	server := os.Getenv("MAILSVC_TEST_MYSQL")
	if server == "" {
		server = testdb.DefaultServer
	}
	cfg, err := mysql.ParseDSN(server)
	if err != nil {
		b.Fatal(err)
	}
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+name+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		b.Fatal(err)
	}
	var logs int
	var done sql.NullInt64
	err = admin.QueryRowContext(ctx, "SELECT (SELECT COUNT(*) FROM `"+name+"`.wp_mailsvc_logs), (SELECT done_up_to FROM `"+name+"`.wp_mailsvc_search_progress WHERE name = 'addresses')").Scan(&logs, &done)
	reused := err == nil && logs == n && done.Int64 >= int64(n)
	if err == nil && !reused && logs > 0 {
		b.Fatalf("MAILSVC_BENCH_DB=%s holds %d logs, not the %d asked for: drop it first", name, logs, n)
	}
	cfg.DBName = name
	return "mysql:" + cfg.FormatDSN(), reused
}

// settle waits (up to two minutes) until InnoDB has written back most of
// the pages the bulk load dirtied: until then every cold read waits for a
// page to be flushed, which measures the load, not the queries.
func settle(ctx context.Context, b *testing.B, raw *sql.DB) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var name string
		var dirty, total float64
		if err := raw.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'").Scan(&name, &dirty); err != nil {
			b.Fatal(err)
		}
		if err := raw.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_total'").Scan(&name, &total); err != nil {
			b.Fatal(err)
		}
		if dirty <= 0.05*total {
			return
		}
		time.Sleep(time.Second)
	}
}

// metricName turns a row's name into a benchmark metric unit.
func metricName(s string) string {
	s, _, _ = strings.Cut(s, " (")
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		case r == ' ' || r == '-':
			return '-'
		}
		return -1
	}, s) + "-p95-ms"
}

// get requests one page and returns X-WP-Total (with "+" when capped).
func get(b *testing.B, u string) string {
	resp, err := http.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %s", u, resp.StatusCode, body)
	}
	total := resp.Header.Get("X-WP-Total")
	if resp.Header.Get("X-Mailsvc-Total-Capped") == "true" {
		total += "+"
	}
	return total
}

// likeScan runs the log search as it was before the recipients table and
// the full-text index: a LIKE '%…%' over recipients, subject and bodies,
// with its exact count and the first page.
func likeScan(ctx context.Context, b *testing.B, raw *sql.DB, term string) string {
	p := "%" + term + "%"
	cond := ` FROM wp_mailsvc_logs WHERE recipients LIKE ? OR subject LIKE ? OR text_body LIKE ? OR html_body LIKE ?`
	var total int
	if err := raw.QueryRowContext(ctx, "SELECT COUNT(*)"+cond, p, p, p, p).Scan(&total); err != nil {
		b.Fatal(err)
	}
	rows, err := raw.QueryContext(ctx, "SELECT id, subject"+cond+" ORDER BY created_at DESC, id DESC LIMIT 10", p, p, p, p)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
	}
	rows.Close()
	return strconv.Itoa(total)
}

func address(k int) string { return fmt.Sprintf("user%d@example%d.com", k, k%10) }

// prefix is the start of address(k) without its last digit, from k ≥ 10000:
// user1234 for user12345 (about 20 addresses: user1234, user1234x,
// user1234xx up to the count of addresses).
func prefix(k int) string {
	k = max(k, 10000)
	local := fmt.Sprintf("user%d", k)
	return local[:len(local)-1]
}

// fragment is four digits from inside address(k)'s local part, from k ≥
// 10000: 2345 for user12345.
func fragment(k int) string {
	d := strconv.Itoa(max(k, 10000))
	return d[1:5]
}

func word(j int) string { return fmt.Sprintf("zq%04d", j) }

// seed writes n logs, their recipients and subjects rows and the outcome
// roll-ups with
// multi-row INSERTs over two connections.
func seed(ctx context.Context, raw *sql.DB, n int, start, end time.Time) error {
	const chunk = 500
	step := end.Sub(start) / time.Duration(n)
	filler := strings.Repeat("Thank you for your order. Your items will ship soon; tracking details follow by email. ", 13)[:1024]
	rollups := map[[3]string]int{}
	jobs := make(chan int)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			var err error
			for first := range jobs {
				if err == nil {
					err = seedChunk(ctx, raw, first, min(first+chunk, n), start, step, filler)
				}
			}
			errs <- err
		}()
	}
	for first := 0; first < n; first += chunk {
		jobs <- first
	}
	close(jobs)
	for range 2 {
		if err := <-errs; err != nil {
			return err
		}
	}
	for i := range n {
		status, conn := shape(i)
		if status == core.StatusDelivered || status == core.StatusFailed {
			at := start.Add(time.Duration(i) * step).Truncate(core.OutcomeBucketSize)
			rollups[[3]string{at.Format(time.DateTime), strconv.Itoa(conn), status}]++
		}
	}
	var vals []string
	var args []any
	flush := func() error {
		if len(vals) == 0 {
			return nil
		}
		_, err := raw.ExecContext(ctx, "INSERT INTO wp_mailsvc_outcome_buckets (bucket_start, connection_id, status, messages) VALUES "+strings.Join(vals, ","), args...)
		vals, args = vals[:0], args[:0]
		return err
	}
	for k, c := range rollups {
		vals = append(vals, "(?,?,?,?)")
		args = append(args, k[0], k[1], k[2], c)
		if len(vals) == 1000 {
			if err := flush(); err != nil {
				return fmt.Errorf("seed roll-ups: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("seed roll-ups: %w", err)
	}
	return nil
}

// shape gives log i its status and connection: 85% delivered, 14%
// failed, 1% queued; two connections.
func shape(i int) (string, int) {
	switch r := i % 100; {
	case r < 85:
		return core.StatusDelivered, 1 + i%2
	case r < 99:
		return core.StatusFailed, 1 + i%2
	default:
		return core.StatusQueued, 0
	}
}

func seedChunk(ctx context.Context, raw *sql.DB, first, last int, start time.Time, step time.Duration, filler string) error {
	var logs, recips, subjects strings.Builder
	logs.WriteString(`INSERT INTO wp_mailsvc_logs (id, status, connection_id, sent_connection_id, source, recipients, subject,
		text_body, html_body, message, attempts, phase_attempts, used_fallback, simulated, provider_message_id, last_error,
		next_attempt_at, created_at, updated_at, delivered_at, recipients_indexed) VALUES `)
	recips.WriteString(`INSERT INTO wp_mailsvc_log_recipients (log_id, kind, email) VALUES `)
	subjects.WriteString(`INSERT INTO wp_mailsvc_log_subjects (log_id, created_at, subject) VALUES `)
	var largs, rargs, sargs []any
	for i := first; i < last; i++ {
		if i > first {
			logs.WriteString(",")
			recips.WriteString(",")
			subjects.WriteString(",")
		}
		id := i + 1
		to := address(i % addresses)
		status, conn := shape(i)
		at := start.Add(time.Duration(i) * step)
		var sent, delivered any
		if conn > 0 {
			sent = conn
		}
		if status == core.StatusDelivered {
			delivered = at
		}
		subject := fmt.Sprintf("Order %d shipped: %s edition", id, word(i%words))
		body := fmt.Sprintf("Hello customer %d. %s", id, filler)[:1024]
		msg := fmt.Sprintf(`{"from":{"email":"shop@example.com"},"to":[{"email":%q}]}`, to)
		logs.WriteString("(?,?,NULL,?,'bench',?,?,?,'',?,1,1,0,0,'','',?,?,?,?,1)")
		largs = append(largs, id, status, sent, to, subject, body, msg, at, at, at, delivered)
		recips.WriteString("(?,'to',?)")
		rargs = append(rargs, id, to)
		subjects.WriteString("(?,?,?)")
		sargs = append(sargs, id, at, subject)
	}
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := tx.ExecContext(ctx, logs.String(), largs...); err != nil {
		return fmt.Errorf("seed logs %d-%d: %w", first, last, err)
	}
	if _, err := tx.ExecContext(ctx, recips.String(), rargs...); err != nil {
		return fmt.Errorf("seed recipients %d-%d: %w", first, last, err)
	}
	if _, err := tx.ExecContext(ctx, subjects.String(), sargs...); err != nil {
		return fmt.Errorf("seed subjects %d-%d: %w", first, last, err)
	}
	return tx.Commit()
}
