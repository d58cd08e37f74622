package servicetest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What a process costs, read from /proc: its memory and its CPU time, for
// the benchmarks that print them beside their rates. A rate moves with
// whatever else the machine runs; the CPU a message costs moves much
// less.

// Memory reads VmRSS and VmHWM (peak RSS) of pid, in bytes.
func Memory(tb testing.TB, pid int) (rss, peak int64) {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return rss, peak
}

// ProcessCPU returns the CPU time (user and system) pid has used.
func ProcessCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	// The command name, in parentheses, may hold spaces: the fields
	// counted from 3 (state) start after its closing parenthesis.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		tb.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's
// CPU times: 100 on every Linux architecture Go builds for.
const clockTicks = 100

// DatabaseCPU returns the CPU time the local MariaDB server has used, or
// 0 when no mariadbd or mysqld process is found.
func DatabaseCPU(tb testing.TB) time.Duration {
	tb.Helper()
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			continue
		}
		if name := strings.TrimSpace(string(comm)); name == "mariadbd" || name == "mysqld" {
			return ProcessCPU(tb, pid)
		}
	}
	return 0
}

// SettledMemory reads pid's RSS and peak RSS once the RSS has settled:
// unchanged (within 1 %) over half a second, the workers' poll interval,
// in which a process that has just drained its queue sees it empty and
// gives the drain's memory back. It waits 5 s at most.
func SettledMemory(tb testing.TB, pid int) (rss, peak int64) {
	tb.Helper()
	const every, still = 50 * time.Millisecond, 500 * time.Millisecond
	deadline := time.Now().Add(5 * time.Second)
	rss, peak = Memory(tb, pid)
	since := time.Now()
	for time.Since(since) < still && time.Now().Before(deadline) {
		time.Sleep(every)
		r, p := Memory(tb, pid)
		if d := r - rss; d > rss/100 || -d > rss/100 {
			since = time.Now()
		}
		rss, peak = r, p
	}
	return rss, peak
}
