// Package benchcompare measures two revisions of the project side by side
// in one run: it builds the benchmark binaries of a base revision and of
// the working tree, runs each benchmark alternately (base then tree, tree
// then base in the next round, so that a machine getting busier or
// quieter weighs on both alike) and prints every figure beside its
// counterpart with the ratio of their medians. `make bench-compare
// BASE=<rev>` runs it (cmd/benchcompare).
package benchcompare

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Bench is one benchmark to compare: a package directory of the tree and
// the -test.bench pattern that selects it.
type Bench struct {
	Pkg     string // e.g. "test/queue"
	Pattern string // e.g. "BenchmarkDrain$"
}

// DefaultBenches are the figures that guard the delivery path and the
// store: the in-process drain of a full queue, the service's drain to a
// loopback sink (of logs the store queued, and of wp_mail() calls the
// real bridge queued in a WordPress site's database), the latency-bound drain (100 ms per message), the SMTP
// intake, and the log search at a million logs (MAILSVC_BENCH_LOGS
// chooses another count).
var DefaultBenches = []Bench{
	{"test/queue", "BenchmarkDrain$"},
	{"test/scalebench", "BenchmarkDrainLoopback$"},
	{"test/takeover", "BenchmarkBridgeDrain$"},
	{"test/scalebench", "BenchmarkDrainSlowSink$"},
	{"test/scalebench", "BenchmarkIntake$"},
	{"test/logscale", "BenchmarkLogsAtScale$"},
}

// ParseBench parses "pkg:pattern".
func ParseBench(s string) (Bench, error) {
	pkg, pattern, ok := strings.Cut(s, ":")
	if !ok || pkg == "" || pattern == "" {
		return Bench{}, fmt.Errorf("%q: want package:pattern, e.g. test/queue:BenchmarkDrain$", s)
	}
	return Bench{Pkg: pkg, Pattern: pattern}, nil
}

// Metric names one figure: a benchmark (without its -N suffix) and a
// unit ("msgs/s", "ns/op", ...).
type Metric struct {
	Bench string
	Unit  string
}

// ParseOutput reads the benchmark result lines of a test binary's
// output ("BenchmarkX/sub-2  1  123 ns/op  456 msgs/s") and returns each
// figure. Other lines are ignored.
func ParseOutput(r io.Reader) map[Metric][]float64 {
	out := map[Metric][]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue // not a result line ("BenchmarkX: some log")
		}
		name := f[0]
		if i := strings.LastIndex(name, "-"); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			m := Metric{Bench: name, Unit: f[i+1]}
			out[m] = append(out[m], v)
		}
	}
	return out
}

// Median is the median of vs (0 for none).
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Table writes every metric of base and head side by side: the values of
// each round, the medians and head's median over base's.
func Table(w io.Writer, base, head map[Metric][]float64, baseName, headName string) {
	keys := map[Metric]bool{}
	for m := range base {
		keys[m] = true
	}
	for m := range head {
		keys[m] = true
	}
	list := make([]Metric, 0, len(keys))
	for m := range keys {
		list = append(list, m)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Bench != list[j].Bench {
			return list[i].Bench < list[j].Bench
		}
		return list[i].Unit < list[j].Unit
	})
	fmt.Fprintf(w, "%-52s %-14s %-28s %-28s %s\n", "benchmark", "unit", baseName, headName, "ratio")
	for _, m := range list {
		b, h := base[m], head[m]
		ratio := "—"
		if mb, mh := Median(b), Median(h); mb != 0 && len(h) > 0 {
			ratio = fmt.Sprintf("%.2f", mh/mb)
		}
		fmt.Fprintf(w, "%-52s %-14s %-28s %-28s %s\n", m.Bench, m.Unit, values(b), values(h), ratio)
	}
}

func values(vs []float64) string {
	if len(vs) == 0 {
		return "—"
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.FormatFloat(v, 'g', 4, 64)
	}
	return strings.Join(parts, " ")
}
