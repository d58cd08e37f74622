package takeover

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// benchCalls is how many wp_mail() calls each side makes in one PHP process.
const benchCalls = 1000

// benchWarmup calls run first and are not measured (class loading, the
// first query's table metadata, the first SMTP connection's DNS).
const benchWarmup = 20

// wpMailLatencies calls wp_mail() warmup+calls times in one PHP process,
// timing each call with hrtime, and returns the measured durations. Every
// call must return true.
func wpMailLatencies(b *testing.B, site *wpsite.Site, calls int) []time.Duration {
	b.Helper()
	out := site.PHP(b, fmt.Sprintf(`$ns = array();
for ( $i = 0; $i < %d; $i++ ) {
	$t0 = hrtime( true );
	$ok = wp_mail( 'reader@example.com', 'Benchmark message ' . $i, "Hello,\n\nthis is message $i of the wp_mail() benchmark.\n", array( 'From: Site <site@example.com>' ) );
	$t1 = hrtime( true );
	if ( true !== $ok ) {
		wpsite_fail( "wp_mail() call $i returned false" );
	}
	if ( $i >= %d ) {
		$ns[] = $t1 - $t0;
	}
}
echo wp_json_encode( $ns );`, benchWarmup+calls, benchWarmup))
	var ns []int64
	if err := json.Unmarshal([]byte(out), &ns); err != nil || len(ns) != calls {
		b.Fatalf("PHP output (%d values): %v", len(ns), err)
	}
	d := make([]time.Duration, len(ns))
	for i, v := range ns {
		d[i] = time.Duration(v)
	}
	slices.Sort(d)
	return d
}

// percentile returns the p-th percentile (nearest rank) of sorted d.
func percentile(d []time.Duration, p float64) time.Duration {
	i := int(float64(len(d))*p+0.999999) - 1
	return d[max(0, min(i, len(d)-1))]
}

// BenchmarkWPMailBridgeVsPHPMailer measures wp_mail() as PHP sees it:
// with the bridge (one INSERT into the queue table of the site's MariaDB
// database) against WordPress's own wp_mail() sending synchronously
// through PHPMailer over SMTP to a local sink. 1,000 calls each, in one
// PHP process per side; it reports p50 and p95 of both in microseconds and
// the ratios (core / bridge). WordPress's side runs twice: as configured
// (PHP's default socket) and with TCP_NODELAY, its best case.
func BenchmarkWPMailBridgeVsPHPMailer(b *testing.B) {
	site := wpsite.Install(b, wpsite.Options{Prefix: "wpbench_"})
	sink := smtpsink.Start(b)
	dir := b.TempDir()
	if out, err := run(b, dir, environ(dir), "wp", "install", "--wp-path", site.Dir); err != nil {
		b.Fatalf("wp install: %v\n%s", err, out)
	}
	// WordPress's own wp_mail() is configured to the sink by a
	// phpmailer_init hook; the bridge never fires phpmailer_init. With
	// nodelay, PHP's socket sets TCP_NODELAY: PHPMailer writes the message
	// a line at a time, and without it Nagle's algorithm on the client and
	// delayed ACKs on the server add about 40 ms to every message.
	configureSMTP := func(nodelay bool) {
		b.Helper()
		more := ""
		if nodelay {
			more = "\t$phpmailer->SMTPOptions = array( 'socket' => array( 'tcp_nodelay' => true ) );\n"
		}
		site.WriteContent(b, map[string]string{"mu-plugins/phpmailer-sink.php": wpsite.PHPMailerSMTPPlugin(sink.Port(), more)})
	}
	bridgeFile := filepath.Join(site.ContentDir, "mu-plugins", "mailsvc-bridge.php")
	bridgeSource, err := os.ReadFile(bridgeFile)
	if err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	for range b.N {
		if err := os.WriteFile(bridgeFile, bridgeSource, 0o644); err != nil {
			b.Fatal(err)
		}
		bridge := wpMailLatencies(b, site, benchCalls)
		if err := os.Remove(bridgeFile); err != nil {
			b.Fatal(err)
		}
		coreRun := func(nodelay bool) []time.Duration {
			configureSMTP(nodelay)
			sink.Reset()
			d := wpMailLatencies(b, site, benchCalls)
			if n := len(sink.Messages()); n != benchCalls+benchWarmup {
				b.Fatalf("the sink got %d messages from WordPress's wp_mail(), want %d", n, benchCalls+benchWarmup)
			}
			return d
		}
		core := coreRun(false)
		nodelay := coreRun(true)
		us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
		b.ReportMetric(us(percentile(bridge, 0.50)), "bridge-p50-µs")
		b.ReportMetric(us(percentile(bridge, 0.95)), "bridge-p95-µs")
		b.ReportMetric(us(percentile(core, 0.50)), "phpmailer-p50-µs")
		b.ReportMetric(us(percentile(core, 0.95)), "phpmailer-p95-µs")
		b.ReportMetric(float64(percentile(core, 0.50))/float64(percentile(bridge, 0.50)), "p50-speedup-x")
		b.ReportMetric(float64(percentile(core, 0.95))/float64(percentile(bridge, 0.95)), "p95-speedup-x")
		b.ReportMetric(us(percentile(nodelay, 0.50)), "phpmailer-nodelay-p50-µs")
		b.ReportMetric(us(percentile(nodelay, 0.95)), "phpmailer-nodelay-p95-µs")
		b.ReportMetric(float64(percentile(nodelay, 0.50))/float64(percentile(bridge, 0.50)), "nodelay-p50-speedup-x")
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
}
