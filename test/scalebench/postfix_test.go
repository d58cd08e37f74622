package scalebench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// Bounds of the Postfix half of BenchmarkAdaptiveConcurrency: a broken
// or stuck Postfix costs the benchmark a few minutes at most.
const (
	postfixCommandLimit = time.Minute     // one postconf or postfix command
	postfixDrainLimit   = 2 * time.Minute // injection to the last message at the sink
	// postfixInjectors is how many SMTP sessions hand the messages to
	// Postfix at once (its smtpd takes up to 100 by default).
	postfixInjectors = 20
)

// postfixInstance is a private Postfix (not the system's): its own
// configuration, queue and data directories under a temporary
// directory, an smtpd on a free loopback port, and every message
// relayed to one host. Only the settings that make it private and point
// it at the relay are set; everything else, concurrency included, is
// Postfix's default.
type postfixInstance struct {
	config  string // config_directory
	dir     string // the temporary directory holding everything
	addr    string // its smtpd, 127.0.0.1:port
	postfix string // the postfix command
}

// postfixUnavailable says why the Postfix half cannot run here ("" when
// it can): Postfix must be installed and the benchmark run as root.
func postfixUnavailable() string {
	if postfixCommand("postfix") == "" || postfixCommand("postconf") == "" {
		return "postfix absent"
	}
	if os.Geteuid() != 0 {
		return "postfix needs root"
	}
	return ""
}

// postfixCommand finds a Postfix command on PATH or in /usr/sbin (not
// on an ordinary user's PATH); "" when there is none.
func postfixCommand(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// startPostfix configures and starts a private Postfix that relays all
// mail to the sink relay, and stops it and removes its files
// when b ends.
func startPostfix(b *testing.B, relay *smtpsink.Sink) *postfixInstance {
	b.Helper()
	dir, err := os.MkdirTemp("", "mailsvc-postfix-")
	if err != nil {
		b.Fatal(err)
	}
	// Postfix's daemons run as the postfix user and must reach the queue.
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	pf := &postfixInstance{config: filepath.Join(dir, "etc"), dir: dir, postfix: postfixCommand("postfix")}
	b.Cleanup(func() {
		pf.stop()
		_ = os.RemoveAll(dir)
	})
	for _, d := range []string{pf.config, filepath.Join(dir, "queue")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	// Debian's default main.cf (cosmetic settings only) or none at all:
	// Postfix's compiled-in defaults.
	mainCF, _ := os.ReadFile("/usr/share/postfix/main.cf.debian")
	masterCF, err := firstFile("/etc/postfix/master.cf", "/usr/share/postfix/master.cf.dist")
	if err != nil {
		b.Fatalf("postfix: no default master.cf: %v", err)
	}
	for name, data := range map[string][]byte{"main.cf": mainCF, "master.cf": masterCF} {
		if err := os.WriteFile(filepath.Join(pf.config, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	port := freePort(b)
	pf.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	listener := pf.addr + "/inet"
	for _, args := range [][]string{
		{"-e",
			"queue_directory=" + filepath.Join(dir, "queue"),
			"data_directory=" + filepath.Join(dir, "data"),
			"maillog_file=" + filepath.Join(dir, "maillog"),
			"maillog_file_prefixes=" + dir,
			"inet_interfaces=loopback-only",
			"mydestination=",
			"relayhost=[127.0.0.1]:" + strconv.Itoa(relay.Port()),
			"mynetworks=127.0.0.0/8",
			"smtp_tls_security_level=none",
		},
		// The system's port 25 listener out, this instance's port in.
		{"-M#", "smtp/inet"},
		{"-Me", listener + "=" + pf.addr + " inet n - n - - smtpd"},
		// The private queue has none of the files a chroot needs.
		{"-F", "*/*/chroot=n"},
	} {
		pf.run(b, postfixCommand("postconf"), append([]string{"-c", pf.config}, args...)...)
	}
	pf.run(b, pf.postfix, "-c", pf.config, "start")
	awaitListening(b, pf, postfixCommandLimit)
	return pf
}

// run runs a Postfix command, bounded by postfixCommandLimit, and fails
// b with its output and the instance's log when it fails.
func (pf *postfixInstance) run(b *testing.B, name string, args ...string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), postfixCommandLimit)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		b.Fatalf("%s %v: %v\n%s%s", filepath.Base(name), args, err, out, pf.log())
	}
}

// stop stops the instance; it is a no-op when it is not running.
func (pf *postfixInstance) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), postfixCommandLimit)
	defer cancel()
	_ = exec.CommandContext(ctx, pf.postfix, "-c", pf.config, "stop").Run()
}

// log returns the end of the instance's log, for a failure message.
func (pf *postfixInstance) log() string {
	data, err := os.ReadFile(filepath.Join(pf.dir, "maillog"))
	if err != nil {
		return ""
	}
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return "postfix log (end):\n" + string(data)
}

// awaitListening waits until the instance's smtpd accepts connections.
func awaitListening(b *testing.B, pf *postfixInstance, limit time.Duration) {
	b.Helper()
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", pf.addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("postfix: smtpd at %s not listening after %s: %v\n%s", pf.addr, limit, err, pf.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// postfixDrain hands n messages to a private Postfix with its default
// settings over postfixInjectors SMTP sessions and waits until the sink
// has all of them (counting only the messages of this run, which carry
// a header of their own). It returns the messages delivered per second
// from the first injection to the last arrival, how many arrived, and
// the most mail transactions Postfix held open at the sink at once.
func postfixDrain(b *testing.B, sink *smtpsink.Sink, n int) (rate float64, done, peak int) {
	b.Helper()
	pf := startPostfix(b, sink)
	mark := []byte(fmt.Sprintf("X-Bench-Run: postfix-%d\r\n", time.Now().UnixNano()))
	sink.Reset()
	sink.ResetPeak()
	sink.StallNext(n, sinkLatency)
	t0 := time.Now()
	sendParallel(b, pf.addr, n, postfixInjectors, nil, func(i int) string { return string(mark) + rawMessage(i) })
	deadline := t0.Add(postfixDrainLimit)
	for {
		done = 0
		for _, m := range sink.Messages() {
			if bytes.Contains(m.Data, mark) {
				done++
			}
		}
		if done >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	el := time.Since(t0)
	peak = sink.PeakTransactions()
	pf.stop()
	if done < n {
		fmt.Printf("scale: postfix: %d of %d messages at the sink after %s\n%s", done, n, postfixDrainLimit, pf.log())
	}
	return float64(done) / el.Seconds(), done, peak
}

// firstFile returns the contents of the first of paths that can be read.
func firstFile(paths ...string) ([]byte, error) {
	var err error
	for _, p := range paths {
		var data []byte
		if data, err = os.ReadFile(p); err == nil {
			return data, nil
		}
	}
	return nil, err
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(b *testing.B) int {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
