// Command benchcompare measures a base revision and the working tree side
// by side in one run (see package internal/benchcompare). `make
// bench-compare BASE=<rev>` runs it:
//
//	go run ./cmd/benchcompare -base 5b6de79 -rounds 2
//	go run ./cmd/benchcompare -base main -bench test/queue:BenchmarkDrain$
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"

	"github.com/mailsvc/mailsvc/internal/benchcompare"
)

func main() {
	var o benchcompare.Options
	var benches string
	flag.StringVar(&o.Base, "base", "", "the revision to compare the working tree with (required)")
	flag.IntVar(&o.Rounds, "rounds", 2, "runs of each benchmark on each side, alternating which goes first")
	flag.StringVar(&benches, "bench", "", "comma-separated package:pattern list (default: the drain, the latency-bound drain, the SMTP intake and the log search at a million logs)")
	flag.Parse()
	if o.Base == "" {
		fmt.Fprintln(os.Stderr, "benchcompare: -base is required (make bench-compare BASE=<rev>)")
		os.Exit(2)
	}
	if benches != "" {
		for _, s := range strings.Split(benches, ",") {
			b, err := benchcompare.ParseBench(strings.TrimSpace(s))
			if err != nil {
				fmt.Fprintln(os.Stderr, "benchcompare:", err)
				os.Exit(2)
			}
			o.Benches = append(o.Benches, b)
		}
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare: not in a git checkout:", err)
		os.Exit(1)
	}
	o.Root = strings.TrimSpace(string(top))
	o.Log, o.Out = os.Stderr, os.Stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := benchcompare.Run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
}
