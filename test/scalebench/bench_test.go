package scalebench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
	"github.com/mailsvc/mailsvc/test/fakes/sendgridfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// The scale targets of `make bench` (issue "Delivery at scale"). Each
// benchmark runs its workload once per b.N (b.N stays 1: a run takes more
// than a second), reports msgs/s with b.ReportMetric and prints one line,
// "scale: ...", with the figure beside the sink's own ceiling measured in
// the same run. Nothing here fails on a timing.

const (
	drainMessages   = 10000 // the 1 KB drain
	latencyMessages = 3000  // the latency-bound runs (100 ms per message)
	sinkLatency     = 100 * time.Millisecond
	runCap          = 45 * time.Second // a latency-bound run stops here and reports what it reached
	intakeMessages  = 10000
	intakeSessions  = 20
)

// report reports a figure as the benchmark's msgs/s and prints it
// beside its target and the sink's ceiling.
func report(b *testing.B, name string, rate, ceiling float64, target string) {
	b.ReportMetric(rate, "msgs/s")
	if ceiling > 0 {
		b.ReportMetric(ceiling, "sink-msgs/s")
	}
	printFigure(name, rate, ceiling, target)
}

// printFigure prints a figure beside its target and, when measured, the
// sink's ceiling.
func printFigure(name string, rate, ceiling float64, target string) {
	if ceiling > 0 {
		fmt.Printf("scale: %-44s %8.0f msgs/s   sink ceiling %8.0f msgs/s (%3.0f%%)   target %s\n", name, rate, ceiling, 100*rate/ceiling, target)
		return
	}
	fmt.Printf("scale: %-44s %8.0f msgs/s   target %s\n", name, rate, target)
}

// rawMessage is a 1 KB RFC 5322 message.
func rawMessage(i int) string {
	return fmt.Sprintf("From: shop@example.com\r\nTo: buyer%d@example.com\r\nSubject: msg-%06d\r\nMessage-ID: <%d@bench.example>\r\n\r\n%s\r\n",
		i, i, i, strings.Repeat("x", 900))
}

// sinkCeiling sends n 1 KB messages from conns concurrent SMTP clients,
// each reusing its connection, to addr (authenticating with auth when
// set), and returns the messages accepted per second.
func sinkCeiling(b *testing.B, addr string, n, conns int, auth sasl.Client) float64 {
	b.Helper()
	return sendParallel(b, addr, n, conns, auth, rawMessage)
}

// sendParallel sends messages msg(0) to msg(n-1) like sinkCeiling; a
// server that stops answering fails b after a minute instead of hanging
// the benchmark.
func sendParallel(b *testing.B, addr string, n, conns int, auth sasl.Client, msg func(int) string) float64 {
	b.Helper()
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	clients := make([]*smtp.Client, conns)
	for i := range clients {
		c, err := smtp.Dial(addr)
		if err != nil {
			b.Fatal(err)
		}
		c.CommandTimeout, c.SubmissionTimeout = time.Minute, time.Minute
		if auth != nil {
			if err := c.Auth(auth); err != nil {
				b.Fatalf("AUTH: %v", err)
			}
		}
		clients[i] = c
	}
	t0 := time.Now()
	for _, c := range clients {
		wg.Go(func() {
			defer c.Close()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if _, err := smtpsink.Send(c, "shop@example.com", []string{fmt.Sprintf("buyer%d@example.com", i)}, msg(i)); err != nil {
					if failed.Add(1) == 1 {
						b.Logf("send %d: %v", i, err)
					}
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(t0)
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d messages refused", f, n)
	}
	return float64(n) / el.Seconds()
}

// drainRate waits until want logs are final (no longer queued or
// sending) or limit passes. It returns the messages finished per second
// since t0, how many, and the steady rate: between the polls where 10 %
// and 90 % of want were finished (start-up and the last stragglers left
// out; 0 when the run did not get that far). It polls the queue's
// pending counts (a read of the claim index, which shrinks as the drain
// goes) every 20 ms near the 10 % and 90 % marks and the end, and up to
// 200 ms apart in between, so that measuring takes little of the
// database the drain runs on.
func drainRate(b *testing.B, db *store.DB, t0 time.Time, want int, limit time.Duration) (rate float64, done int, steady float64) {
	b.Helper()
	deadline := t0.Add(limit)
	var t10, t90 time.Time
	var d10, d90 int
	for {
		st, err := db.Logs().PendingCounts(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		done = max(want-st.Queued-st.Sending, 0)
		if t10.IsZero() && done*10 >= want {
			t10, d10 = now, done
		}
		if t90.IsZero() && done*10 >= want*9 {
			t90, d90 = now, done
		}
		if done >= want || now.After(deadline) {
			if final, err := db.Logs().QueueDepth(context.Background()); err == nil && final.Failed > 0 {
				b.Logf("%d of %d failed", final.Failed, done)
			}
			if !t90.IsZero() && t90.After(t10) {
				steady = float64(d90-d10) / t90.Sub(t10).Seconds()
			}
			return float64(done) / now.Sub(t0).Seconds(), done, steady
		}
		// Sleep half the expected time to the next mark (10 %, 90 %,
		// all), between 20 and 200 ms.
		wait := 20 * time.Millisecond
		if el := now.Sub(t0).Seconds(); done > 0 && el > 0 {
			next := want
			for _, m := range []int{(want + 9) / 10, (want*9 + 9) / 10} {
				if done < m {
					next = m
					break
				}
			}
			eta := time.Duration(float64(next-done) / (float64(done) / el) * float64(time.Second))
			wait = min(max(eta/2, 20*time.Millisecond), 200*time.Millisecond)
		}
		time.Sleep(wait)
	}
}

// drainRun is one queue-drain measurement: n messages enqueued while the
// services are stopped, then the given number of replicas started on the
// same database; the rate counts from the moment every replica serves.
type drainRun struct {
	name     string
	driver   string
	settings map[string]any
	// extra are the engine's connection settings (max_concurrency,
	// max_per_second), dropped if the build refuses them.
	extra    map[string]any
	n        int
	replicas int
	env      []string
	msg      func(int) core.Message
	// onStart, when set, runs with the first replica's pid once all serve.
	onStart func(pid int)
	// during, when set, runs with the first replica's pid after the drain.
	after func(pid int)
}

func (r drainRun) run(b *testing.B) (rate float64, done int, steady float64) {
	b.Helper()
	dsn := testdb.MySQL(b)
	db := openStore(b, dsn)
	dirs := make([]string, r.replicas)
	for i := range dirs {
		dirs[i] = b.TempDir()
	}
	// The first start migrates the database and creates the admin: set
	// the connection up through it, then stop it.
	setup := startIn(b, dirs[0], dsn, "MAILSVC_WORKERS=1")
	admin := adminAuth(b, setup)
	id := createConnection(b, setup, admin, r.name, r.driver, r.settings, r.extra)
	useDefault(b, setup, admin, id)
	setup.Stop(b)
	msg := r.msg
	if msg == nil {
		msg = message
	}
	enqueue(b, db, 0, r.n, msg)
	svcs := make([]*servicetest.Service, r.replicas)
	var wg sync.WaitGroup
	for i := range svcs {
		wg.Go(func() { svcs[i] = startIn(b, dirs[i], dsn, r.env...) })
	}
	wg.Wait()
	t0 := time.Now()
	pid := svcs[0].Pid()
	if r.onStart != nil {
		r.onStart(pid)
	}
	rate, done, steady = drainRate(b, db, t0, r.n, runCap)
	if r.after != nil {
		r.after(pid)
	}
	for _, s := range svcs {
		s.Stop(b)
	}
	return rate, done, steady
}

// smtpSettings points an smtp connection at sink.
func smtpSettings(sink *smtpsink.Sink) map[string]any {
	return map[string]any{"host": sink.Host(), "port": sink.Port(), "encryption": "none", "auth": false, "timeout": 30}
}

// BenchmarkDrainLoopback: 10,000 × 1 KB to a loopback sink (target
// ≥ 5,000 msgs/s, ≥ 50 % of the sink's ceiling); also the process's
// memory: idle RSS (≤ 40 MB), peak RSS at full load (≤ 150 MB) and the
// RSS once the 10,000 are drained and it has settled (< 45 MB, issue 33;
// see servicetest.SettledMemory). The
// sink's ceiling is measured before and after the drain and the higher
// figure counts: on a shared 2-core machine one measurement can come out
// a fifth lower than the next.
func BenchmarkDrainLoopback(b *testing.B) {
	for range b.N {
		sink := smtpsink.Start(b)
		before := sinkCeiling(b, sink.Addr(), drainMessages, 10, nil)
		sink.Reset()
		var idle, drained, peak int64
		var cpu0, cpu1, db0, db1 time.Duration
		rate, done, steady := drainRun{
			name: "sink", driver: "smtp", settings: smtpSettings(sink), n: drainMessages, replicas: 1,
			onStart: func(pid int) {
				idle, _ = servicetest.Memory(b, pid)
				cpu0, db0 = servicetest.ProcessCPU(b, pid), servicetest.DatabaseCPU(b)
			},
			after: func(pid int) {
				cpu1, db1 = servicetest.ProcessCPU(b, pid), servicetest.DatabaseCPU(b)
				drained, peak = servicetest.SettledMemory(b, pid)
			},
		}.run(b)
		sink.Reset()
		after := sinkCeiling(b, sink.Addr(), drainMessages, 10, nil)
		ceiling := max(before, after)
		fmt.Printf("scale: %-44s %8.0f msgs/s before the drain, %8.0f after\n", "sink ceiling, 10 clients", before, after)
		report(b, fmt.Sprintf("drain 1 KB, loopback sink (%d done)", done), rate, ceiling, "≥ 5,000 msgs/s, ≥ 50 % of the sink")
		b.ReportMetric(steady, "steady-msgs/s")
		fmt.Printf("scale: %-44s %8.0f msgs/s   (%3.0f%% of the sink)\n", "drain 1 KB, between 10 % and 90 % done", steady, 100*steady/ceiling)
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
		b.ReportMetric(float64(drained)/(1<<20), "RSS-after-MB")
		// CPU time per message does not move with what else the machine
		// runs, as the rates do.
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(max(done, 1)), "svc-CPU-us/msg")
		b.ReportMetric(float64((db1-db0).Microseconds())/float64(max(done, 1)), "db-CPU-us/msg")
		fmt.Printf("scale: %-44s %8.0f µs of the service, %0.0f µs of the database\n", "CPU time per message", float64((cpu1-cpu0).Microseconds())/float64(max(done, 1)), float64((db1-db0).Microseconds())/float64(max(done, 1)))
		fmt.Printf("scale: %-44s %8.1f MB (at start, queue full)   target ≤ 40 MB idle\n", "memory: RSS at start", float64(idle)/(1<<20))
		fmt.Printf("scale: %-44s %8.1f MB   target ≤ 150 MB\n", "memory: peak RSS, 1 KB drain", float64(peak)/(1<<20))
		fmt.Printf("scale: %-44s %8.1f MB   target < 45 MB\n", "memory: RSS after the drain", float64(drained)/(1<<20))
	}
}

// BenchmarkIdleMemory: RSS of a served process with an empty queue after
// it settles (target ≤ 40 MB).
func BenchmarkIdleMemory(b *testing.B) {
	for range b.N {
		svc := start(b, testdb.MySQL(b))
		pid := svc.Pid()
		time.Sleep(2 * time.Second) // let boot garbage be collected; figures only
		rss, peak := servicetest.Memory(b, pid)
		b.ReportMetric(float64(rss)/(1<<20), "RSS-MB")
		fmt.Printf("scale: %-44s %8.1f MB (peak %0.1f MB)   target ≤ 40 MB\n", "memory: idle RSS", float64(rss)/(1<<20), float64(peak)/(1<<20))
		svc.Stop(b)
	}
}

// slowDrain measures the sink's ceiling with concurrency clients while
// it holds every message sinkLatency, then the drain through a
// connection pinned at as many sends (adaptive_concurrency off).
func slowDrain(b *testing.B, sink *smtpsink.Sink, concurrency int) (rate, ceiling float64, done int) {
	b.Helper()
	sink.Reset()
	sink.StallNext(latencyMessages, sinkLatency)
	ceiling = sinkCeiling(b, sink.Addr(), latencyMessages, concurrency, nil)
	sink.Reset()
	sink.StallNext(latencyMessages, sinkLatency)
	rate, done, _ = drainRun{
		name: fmt.Sprintf("slow sink, %d at once", concurrency), driver: "smtp", settings: smtpSettings(sink),
		extra: map[string]any{"max_concurrency": concurrency, "adaptive_concurrency": false}, n: latencyMessages, replicas: 1,
	}.run(b)
	return rate, ceiling, done
}

// BenchmarkDrainSlowSink: the sink takes 100 ms per message; a connection
// allowed 50 concurrent sends (target ≥ 500 msgs/s), then one limited to
// max_per_second (target within 5 % of it).
func BenchmarkDrainSlowSink(b *testing.B) {
	for range b.N {
		sink := smtpsink.Start(b)
		rate, ceiling, done := slowDrain(b, sink, 50)
		report(b, fmt.Sprintf("drain, sink 100 ms/msg, 50 concurrent (%d done)", done), rate, ceiling, "≥ 500 msgs/s")

		// 50 sends in flight that each take 100 ms carry 500 msgs/s at
		// most: with 100 allowed, the engine shows what it carries past
		// that bound.
		wide, wideCeiling, done := slowDrain(b, sink, 100)
		b.ReportMetric(wide, "wide-msgs/s")
		printFigure(fmt.Sprintf("drain, sink 100 ms/msg, 100 concurrent (%d done)", done), wide, wideCeiling, "(50 × 10/s bounds the run above)")

		const perSecond = 300
		sink.Reset()
		sink.StallNext(latencyMessages, sinkLatency)
		limited, done, steady := drainRun{
			name: "slow sink limited", driver: "smtp", settings: smtpSettings(sink),
			extra: map[string]any{"max_concurrency": 50, "adaptive_concurrency": false, "max_per_second": perSecond},
			n:     latencyMessages, replicas: 1,
		}.run(b)
		// The whole run (about 10 s) is the window; the 10 %–90 % rate
		// is printed too, though outcomes recorded in batches make it
		// jumpy.
		b.ReportMetric(limited, "limited-msgs/s")
		fmt.Printf("scale: %-44s %8.0f msgs/s   max_per_second %d (%+.1f%%; %.0f msgs/s between 10 %% and 90 %% done)   target within 5 %%\n",
			fmt.Sprintf("drain, max_per_second %d (%d done)", perSecond, done), limited, perSecond, 100*(limited-perSecond)/perSecond, steady)
	}
}

// BenchmarkReplicas: the latency-bound run (sink 100 ms/msg, 50
// concurrent sends per process: max_concurrency, which the replicas
// share, is 50 per replica, pinned) with one and three processes on one
// database (target: three ≥ 1.8 × one).
func BenchmarkReplicas(b *testing.B) {
	for range b.N {
		var rates [2]float64
		for i, n := range []int{1, 3} {
			sink := smtpsink.Start(b)
			sink.StallNext(latencyMessages, sinkLatency)
			rates[i], _, _ = drainRun{
				name: "slow sink", driver: "smtp", settings: smtpSettings(sink), extra: map[string]any{"max_concurrency": 50 * n, "adaptive_concurrency": false},
				n: latencyMessages, replicas: n,
			}.run(b)
		}
		b.ReportMetric(rates[1]/rates[0], "x")
		fmt.Printf("scale: %-44s %8.0f msgs/s   one replica %8.0f msgs/s (%.2f×)   target ≥ 1.8×\n",
			"drain, sink 100 ms/msg, three replicas", rates[1], rates[0], rates[1]/rates[0])
	}
}

// httpConcurrency is the connection's max_concurrency in the HTTP API run:
// an API takes many requests at once, so the 100 ms of each need not
// bound the rate at 500 msgs/s as 50 concurrent sends would.
const httpConcurrency = 100

// BenchmarkDrainHTTPAPI: the SendGrid driver against its fake behind a
// proxy adding 100 ms per request (target ≥ 500 msgs/s); the ceiling is
// httpConcurrency concurrent keep-alive clients against the same proxy.
func BenchmarkDrainHTTPAPI(b *testing.B) {
	const apiKey = "SG.bench-key"
	for range b.N {
		fake := sendgridfake.New(apiKey)
		b.Cleanup(fake.Close)
		target, _ := url.Parse(fake.URL)
		proxy := httputil.NewSingleHostReverseProxy(target)
		proxy.Transport = &http.Transport{MaxIdleConnsPerHost: 500}
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(sinkLatency)
			proxy.ServeHTTP(w, r)
		}))
		b.Cleanup(slow.Close)
		ceiling := httpCeiling(b, slow.URL, apiKey, latencyMessages, httpConcurrency)
		rate, done, _ := drainRun{
			name: "sendgrid", driver: "sendgrid", settings: map[string]any{"api_key": apiKey, "base_url": slow.URL},
			extra: map[string]any{"max_concurrency": httpConcurrency, "adaptive_concurrency": false},
			n:     latencyMessages, replicas: 1,
		}.run(b)
		report(b, fmt.Sprintf("drain, SendGrid fake 100 ms/request, %d concurrent (%d done)", httpConcurrency, done), rate, ceiling, "≥ 500 msgs/s")
	}
}

// httpCeiling posts n minimal SendGrid messages from conns concurrent
// clients and returns the accepted messages per second.
func httpCeiling(b *testing.B, base, apiKey string, n, conns int) float64 {
	b.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}}
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Int64
	t0 := time.Now()
	for range conns {
		wg.Go(func() {
			for int(next.Add(1)) <= n {
				body := `{"personalizations":[{"to":[{"email":"buyer@example.com"}]}],"from":{"email":"shop@example.com"},"subject":"x","content":[{"type":"text/plain","value":"` + strings.Repeat("x", 900) + `"}]}`
				req, _ := http.NewRequest("POST", base+"/v3/mail/send", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+apiKey)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil || resp.StatusCode != http.StatusAccepted {
					failed.Add(1)
				}
				if resp != nil {
					resp.Body.Close()
				}
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d API requests failed", f, n)
	}
	return float64(n) / time.Since(t0).Seconds()
}

// BenchmarkIntake: the SMTP submission listener, 20 authenticated
// sessions each sending 1 KB messages; a message counts once its 250
// reply (sent after the commit) arrives (target ≥ 3,000 msgs/s). Measured
// twice: while the engine delivers what arrives to the sink, and alone
// (the engine held: one message in flight to a sink that does not answer).
// The ceiling is the same client against the bare sink.
func BenchmarkIntake(b *testing.B) {
	for range b.N {
		bare := smtpsink.Start(b)
		ceiling := sinkCeiling(b, bare.Addr(), intakeMessages, intakeSessions, nil)
		bare.Close()
		for _, alone := range []bool{false, true} {
			sink := smtpsink.Start(b)
			dsn := testdb.MySQL(b)
			smtpAddr := servicetest.FreeAddr(b)
			env := []string{"MAILSVC_SMTP_LISTEN=" + smtpAddr}
			name := "SMTP listener intake, 20 sessions, delivering"
			if alone {
				env = append(env, "MAILSVC_MAX_IN_FLIGHT=1")
				sink.StallNext(1, time.Hour)
				name = "SMTP listener intake, 20 sessions, alone"
			}
			svc := start(b, dsn, env...)
			admin := adminAuth(b, svc)
			id := createConnection(b, svc, admin, "sink", "smtp", smtpSettings(sink), nil)
			useDefault(b, svc, admin, id)
			cpu0, db0 := servicetest.ProcessCPU(b, svc.Pid()), servicetest.DatabaseCPU(b)
			rate := sinkCeiling(b, smtpAddr, intakeMessages, intakeSessions, sasl.NewPlainClient("", "admin", svc.AdminPassword()))
			if alone {
				b.ReportMetric(float64((servicetest.ProcessCPU(b, svc.Pid())-cpu0).Microseconds())/intakeMessages, "svc-CPU-us/msg")
				b.ReportMetric(float64((servicetest.DatabaseCPU(b)-db0).Microseconds())/intakeMessages, "db-CPU-us/msg")
			}
			db := openStore(b, dsn)
			st, err := db.Logs().QueueStats(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if got := st.Queued + st.Sending + st.Delivered + st.Failed; got != intakeMessages {
				b.Fatalf("%d logs committed, want %d", got, intakeMessages)
			}
			report(b, name, rate, ceiling, "≥ 3,000 msgs/s")
			sink.Close()
			svc.Stop(b)
		}
	}
}

// BenchmarkDrainLargeAttachments: 8 messages with a 10 MB attachment each
// (80 MB in flight at most); peak RSS of the process (target ≤ 3 × the
// bytes in flight).
func BenchmarkDrainLargeAttachments(b *testing.B) {
	const n, size = 8, 10 << 20
	blob := make([]byte, size)
	for i := range blob {
		blob[i] = byte('a' + i%26)
	}
	for range b.N {
		sink := smtpsink.Start(b)
		var idle, peak int64
		_, done, _ := drainRun{
			name: "sink", driver: "smtp", settings: smtpSettings(sink), n: n, replicas: 1,
			env: []string{"MAILSVC_BATCH_SIZE=" + fmt.Sprint(n)},
			msg: func(i int) core.Message {
				m := message(i)
				m.Attachments = []core.Attachment{{Filename: "big.bin", ContentType: "application/octet-stream", Data: blob}}
				return m
			},
			onStart: func(pid int) { idle, _ = servicetest.Memory(b, pid) },
			after:   func(pid int) { _, peak = servicetest.Memory(b, pid) },
		}.run(b)
		inFlight := int64(n * size)
		b.ReportMetric(float64(peak)/float64(inFlight), "peak/in-flight")
		fmt.Printf("scale: %-44s %8.1f MB   %.2f × the %d MB in flight (%d done; %.1f MB at start)   target ≤ 3×\n",
			"memory: peak RSS, 8 × 10 MB attachments", float64(peak)/(1<<20), float64(peak)/float64(inFlight), inFlight>>20, done, float64(idle)/(1<<20))
	}
}
