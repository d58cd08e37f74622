package benchcompare

import (
	"strings"
	"testing"
)

func TestParseOutput(t *testing.T) {
	out := `goos: linux
BenchmarkDrain/mysql-2         	       1	2138454533 ns/op	       103.0 %-of-sink	      4693 msgs/s
BenchmarkDrain/sqlite-2        	       1	1798409230 ns/op	        66.78 %-of-sink	      5640 msgs/s
BenchmarkDrain/sqlite-2        	       1	1833302984 ns/op	        54.71 %-of-sink	      5661 msgs/s
scale: drain                                  5000 msgs/s   target ≥ 5,000
BenchmarkNoSuffix 1 10 ns/op
BenchmarkLog: a line the benchmark printed
PASS
`
	got := ParseOutput(strings.NewReader(out))
	tests := []struct {
		m    Metric
		want []float64
	}{
		{Metric{"BenchmarkDrain/mysql", "msgs/s"}, []float64{4693}},
		{Metric{"BenchmarkDrain/sqlite", "msgs/s"}, []float64{5640, 5661}},
		{Metric{"BenchmarkDrain/sqlite", "%-of-sink"}, []float64{66.78, 54.71}},
		{Metric{"BenchmarkNoSuffix", "ns/op"}, []float64{10}},
	}
	for _, tt := range tests {
		if g := got[tt.m]; len(g) != len(tt.want) || (len(g) > 0 && g[len(g)-1] != tt.want[len(tt.want)-1]) || g[0] != tt.want[0] {
			t.Errorf("%v = %v, want %v", tt.m, g, tt.want)
		}
	}
	if len(got) != 7 {
		t.Errorf("%d metrics, want 7: %v", len(got), got)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}}
	for _, tt := range tests {
		if got := Median(tt.in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestTable(t *testing.T) {
	var b strings.Builder
	m := Metric{"BenchmarkDrain/sqlite", "msgs/s"}
	only := Metric{"BenchmarkNew", "msgs/s"}
	Table(&b, map[Metric][]float64{m: {4000, 6000}}, map[Metric][]float64{m: {2500, 2500}, only: {1}}, "base", "head")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("table:\n%s", b.String())
	}
	if f := strings.Fields(lines[1]); f[0] != "BenchmarkDrain/sqlite" || f[len(f)-1] != "0.50" {
		t.Errorf("the drain's row: %q, want the ratio of the medians 2500/5000 = 0.50", lines[1])
	}
	if f := strings.Fields(lines[2]); f[0] != "BenchmarkNew" || f[len(f)-1] != "—" {
		t.Errorf("a figure only the head has: %q, want no ratio", lines[2])
	}
}

func TestParseBench(t *testing.T) {
	if b, err := ParseBench("test/queue:BenchmarkDrain$"); err != nil || b.Pkg != "test/queue" || b.Pattern != "BenchmarkDrain$" {
		t.Errorf("ParseBench = %+v, %v", b, err)
	}
	for _, bad := range []string{"", "test/queue", ":BenchmarkX", "test/queue:"} {
		if _, err := ParseBench(bad); err == nil {
			t.Errorf("ParseBench(%q) accepted", bad)
		}
	}
}
