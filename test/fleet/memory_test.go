package fleet

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// memorySites is how many sites BenchmarkFleetMemory serves.
const memorySites = 20

// memoryKB reads a process's resident memory (VmRSS of
// /proc/PID/status) and its proportional share of it (Pss of
// /proc/PID/smaps_rollup: pages shared with other processes, such as the
// binary's, counted once across them), in KiB.
func memoryKB(tb testing.TB, pid int) (rss, pss int64) {
	tb.Helper()
	read := func(path, field string) int64 {
		f, err := os.Open(path)
		if err != nil {
			tb.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
				n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				if err != nil {
					tb.Fatalf("%s %s: %v", path, field, err)
				}
				return n
			}
		}
		tb.Fatalf("%s has no %s", path, field)
		return 0
	}
	return read(fmt.Sprintf("/proc/%d/status", pid), "VmRSS"), read(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss")
}

// BenchmarkFleetMemory serves memorySites sites (each its own database,
// an SQLite file its wp-config.php names, so that twenty processes do not
// exhaust MariaDB's connections; one message delivered per site) from one
// `mailsvc serve`, then from one process per site, and reports the
// memory of each way (MiB): RSS and PSS of the one process, summed over
// the processes, and the RSS of the one process serving the first site
// alone. The figures are in docs/fleet.md. Run with
// go test ./test/fleet -run '^$' -bench FleetMemory -benchtime 1x.
func BenchmarkFleetMemory(b *testing.B) {
	sink := smtpsink.Start(b)
	sites := make([]*site, memorySites)
	paths := make([]string, memorySites)
	for i := range sites {
		sites[i] = newSQLiteSite(b, fmt.Sprintf("site%02d", i), sink)
		paths[i] = sites[i].WPConfig
	}
	delivered := 0
	// deliver sends one message from every site and waits for them all.
	deliver := func() {
		for i, s := range sites {
			s.enqueue(b, fmt.Sprintf("m%02d-", i), 1)
		}
		delivered += memorySites
		if _, err := sink.WaitFor(delivered, 2*time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		// The same process with the first site alone: what one site costs.
		dir := b.TempDir()
		alone := servicetest.StartEnv(b, dir, servicetest.Environ(dir, "MAILSVC_SITES="+paths[0], "MAILSVC_TRUSTED_PROXIES=127.0.0.1"))
		awaitReadyTB(b, alone)
		sites[0].enqueue(b, "alone-", 1)
		delivered++
		if _, err := sink.WaitFor(delivered, 2*time.Minute); err != nil {
			b.Fatal(err)
		}
		aloneRSS, _ := memoryKB(b, alone.Pid())
		alone.Stop(b)

		dir = b.TempDir()
		fleet := servicetest.StartEnv(b, dir, servicetest.Environ(dir, "MAILSVC_SITES="+strings.Join(paths, ","), "MAILSVC_TRUSTED_PROXIES=127.0.0.1"))
		awaitReadyTB(b, fleet)
		deliver()
		fleetRSS, fleetPSS := memoryKB(b, fleet.Pid())
		fleet.Stop(b)

		var procRSS, procPSS int64
		procs := make([]*servicetest.Service, memorySites)
		for i, s := range sites {
			d := b.TempDir()
			procs[i] = servicetest.StartEnv(b, d, servicetest.Environ(d, "MAILSVC_WP_CONFIG="+s.WPConfig))
		}
		deliver()
		for _, p := range procs {
			rss, pss := memoryKB(b, p.Pid())
			procRSS += rss
			procPSS += pss
		}
		for _, p := range procs {
			p.Stop(b)
		}
		mib := func(kb int64) float64 { return float64(kb) / 1024 }
		b.ReportMetric(mib(aloneRSS), "MiB-rss-one-site")
		b.ReportMetric(mib(fleetRSS), "MiB-rss-one-process")
		b.ReportMetric(mib(fleetPSS), "MiB-pss-one-process")
		b.ReportMetric(mib(procRSS), "MiB-rss-20-processes")
		b.ReportMetric(mib(procPSS), "MiB-pss-20-processes")
		b.Logf("one site: RSS %.1f MiB; %d sites: one process RSS %.1f MiB (PSS %.1f), %.1f MiB more per site; %d processes RSS %.1f MiB (PSS %.1f)",
			mib(aloneRSS), memorySites, mib(fleetRSS), mib(fleetPSS), mib(fleetRSS-aloneRSS)/(memorySites-1), memorySites, mib(procRSS), mib(procPSS))
		if fleetPSS*2 > procPSS {
			b.Errorf("one process for %d sites uses %d KiB, not far less than %d processes' %d KiB", memorySites, fleetPSS, memorySites, procPSS)
		}
	}
}

// BenchmarkFleetMemoryMariaDB is BenchmarkFleetMemory's one process on
// MariaDB databases, as WordPress sites have them: the first site alone,
// then memorySites sites (twenty processes would need more connections
// than MariaDB's default max_connections leaves). Run with
// go test ./test/fleet -run '^$' -bench FleetMemoryMariaDB -benchtime 1x.
func BenchmarkFleetMemoryMariaDB(b *testing.B) {
	sink := smtpsink.Start(b)
	sites := make([]*site, memorySites)
	paths := make([]string, memorySites)
	for i := range sites {
		sites[i] = newSite(b, fmt.Sprintf("site%02d", i), "", sink, nil)
		paths[i] = sites[i].WPConfig
	}
	delivered := 0
	measure := func(n int) int64 {
		dir := b.TempDir()
		svc := servicetest.StartEnv(b, dir, servicetest.Environ(dir, "MAILSVC_SITES="+strings.Join(paths[:n], ","), "MAILSVC_TRUSTED_PROXIES=127.0.0.1"))
		awaitReadyTB(b, svc)
		for i, s := range sites[:n] {
			s.enqueue(b, fmt.Sprintf("m%02d-", i), 1)
		}
		delivered += n
		if _, err := sink.WaitFor(delivered, 2*time.Minute); err != nil {
			b.Fatal(err)
		}
		rss, _ := memoryKB(b, svc.Pid())
		svc.Stop(b)
		return rss
	}
	for b.Loop() {
		alone, all := measure(1), measure(memorySites)
		mib := func(kb int64) float64 { return float64(kb) / 1024 }
		b.ReportMetric(mib(alone), "MiB-rss-one-site")
		b.ReportMetric(mib(all), "MiB-rss-one-process")
		b.Logf("MariaDB: one site RSS %.1f MiB; %d sites in one process RSS %.1f MiB, %.1f MiB more per site",
			mib(alone), memorySites, mib(all), mib(all-alone)/(memorySites-1))
	}
}
