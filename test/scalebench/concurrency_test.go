package scalebench

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// Figures of the adaptive concurrency (docs/delivery.md "Concurrency
// that adapts").
const (
	adaptiveMessages = 2000 // the 100 ms drain
	sessionLimit     = 5
	sessionMessages  = 3000
	sessionLatency   = 20 * time.Millisecond
	// cleanRun is how many messages must arrive with no refused session
	// in between for the connection to count as settled: half the
	// engine's probe interval (500 successes), so that the refusals left
	// after it are the periodic probes.
	cleanRun = 250
)

// fixedTen are the connection settings of the engine before the
// concurrency adapted: ten sends at once, always.
var fixedTen = map[string]any{"max_concurrency": 10, "adaptive_concurrency": false}

// BenchmarkAdaptiveConcurrency: the connection's concurrency left to the
// engine (default settings), in one run:
//   - 2,000 messages to a sink taking 100 ms each, beside the same drain
//     at the fixed 10 of old and beside a private Postfix with its
//     default settings relaying the same 2,000 to the same sink (target
//     ≥ 2 × Postfix; the Postfix half prints why it did not run when
//     Postfix is absent or the benchmark is not run as root);
//   - a sink taking 5 sessions that greets the sixth 421 (20 ms per
//     message): when it settles (the last refused session before 250
//     messages in a row arrive without one; target within 10 s), the
//     messages failed (target none), the share of attempts turned away
//     after settling (target under 1 %);
//   - the 1 KB drain with default settings beside the fixed 10 (target
//     no lower).
func BenchmarkAdaptiveConcurrency(b *testing.B) {
	for range b.N {
		sink := smtpsink.Start(b)
		var postfix float64
		postfixLine := postfixUnavailable()
		if postfixLine == "" {
			rate, done, peak := postfixDrain(b, sink, adaptiveMessages)
			postfix = rate
			postfixLine = fmt.Sprintf("%.0f msgs/s (%d done, peak %d in flight)", rate, done, peak)
		}
		var peak int
		rates := map[string]float64{}
		for _, run := range []struct {
			name  string
			extra map[string]any
		}{{"default settings", nil}, {"fixed 10 (before)", fixedTen}} {
			sink.Reset()
			sink.ResetPeak()
			sink.StallNext(adaptiveMessages, sinkLatency)
			rate, done, _ := drainRun{
				name: "slow sink", driver: "smtp", settings: smtpSettings(sink), extra: run.extra, n: adaptiveMessages, replicas: 1,
			}.run(b)
			rates[run.name] = rate
			if run.extra == nil {
				peak = sink.PeakTransactions()
			}
			fmt.Printf("scale: %-44s %8.0f msgs/s   %d done, peak %d in flight\n", "drain, sink 100 ms/msg, "+run.name, rate, done, sink.PeakTransactions())
		}
		def := rates["default settings"]
		b.ReportMetric(def, "msgs/s")
		ratio := "no ratio"
		if postfix > 0 {
			b.ReportMetric(postfix, "postfix-msgs/s")
			b.ReportMetric(def/postfix, "x-postfix")
			ratio = fmt.Sprintf("%.2f×", def/postfix)
		}
		fmt.Printf("scale: %-44s %8.0f msgs/s   Postfix, default settings: %s: %s; fixed 10 %.0f msgs/s   target ≥ 2×\n",
			fmt.Sprintf("drain, sink 100 ms/msg, adaptive (peak %d)", peak), def, postfixLine, ratio, rates["fixed 10 (before)"])

		sessionLimited(b)

		for _, run := range []struct {
			name  string
			extra map[string]any
		}{{"default settings", nil}, {"fixed 10 (before)", fixedTen}} {
			loop := smtpsink.Start(b)
			rate, done, steady := drainRun{
				name: "sink", driver: "smtp", settings: smtpSettings(loop), extra: run.extra, n: drainMessages, replicas: 1,
			}.run(b)
			b.ReportMetric(rate, "1KB-"+map[bool]string{true: "adaptive", false: "fixed"}[run.extra == nil]+"-msgs/s")
			fmt.Printf("scale: %-44s %8.0f msgs/s   %.0f between 10 %% and 90 %% done (%d done, peak %d in flight)\n",
				"drain 1 KB, "+run.name, rate, steady, done, loop.PeakTransactions())
		}
	}
}

// sessionLimited drains sessionMessages to a sink of sessionLimit
// sessions and prints when the connection settled and what was refused.
func sessionLimited(b *testing.B) {
	sink := smtpsink.Start(b, smtpsink.WithMaxSessions(sessionLimit), smtpsink.WithLatency(sessionLatency))
	type sample struct {
		at            time.Duration
		refused, done int
	}
	var (
		samples []sample
		t0      time.Time
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	_, done, _ := drainRun{
		name: "limited sink", driver: "smtp", settings: smtpSettings(sink), n: sessionMessages, replicas: 1,
		onStart: func(int) {
			t0 = time.Now()
			wg.Go(func() {
				for {
					samples = append(samples, sample{time.Since(t0), sink.RefusedSessions(), len(sink.Messages())})
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			})
		},
		after: func(int) { close(stop); wg.Wait() },
	}.run(b)
	final := sample{time.Since(t0), sink.RefusedSessions(), len(sink.Messages())}
	samples = append(samples, final)
	// Settled: the last refusal before cleanRun messages in a row.
	settled := samples[0]
	for i, s := range samples {
		if i > 0 && s.refused > samples[i-1].refused {
			settled = s
		}
		if s.done-settled.done >= cleanRun && s.refused == settled.refused {
			break
		}
	}
	after := final.refused - settled.refused
	attempts := after + final.done - settled.done
	share := 0.0
	if attempts > 0 {
		share = 100 * float64(after) / float64(attempts)
	}
	b.ReportMetric(settled.at.Seconds(), "settle-s")
	fmt.Printf("scale: %-44s settled after %.1f s (%d sessions refused before), %d of %d attempts refused after (%.2f %%), %d failed of %d   target ≤ 10 s, < 1 %%, none\n",
		fmt.Sprintf("drain, sink of %d sessions, 20 ms/msg", sessionLimit), settled.at.Seconds(), settled.refused, after, attempts, share, sessionMessages-final.done, done)
}
