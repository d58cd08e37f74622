package benchcompare

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Options configure a comparison.
type Options struct {
	// Root is the working tree (the repository's top directory).
	Root string
	// Base is the revision to compare with (a commit, tag or branch).
	Base string
	// Rounds is how many times each side runs each benchmark.
	Rounds int
	// Benches are the benchmarks; nil means DefaultBenches.
	Benches []Bench
	// Log receives progress and each run's output; Out the table.
	Log, Out io.Writer
}

// Run builds both sides, runs the benchmarks alternately and writes the
// table. The base revision is checked out in a temporary worktree,
// removed afterwards.
func Run(ctx context.Context, o Options) error {
	if o.Rounds < 1 {
		o.Rounds = 1
	}
	benches := o.Benches
	if benches == nil {
		benches = DefaultBenches
	}
	tmp, err := os.MkdirTemp("", "bench-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	baseTree := filepath.Join(tmp, "base")
	if err := command(ctx, o.Root, o.Log, "git", "worktree", "add", "--detach", baseTree, o.Base); err != nil {
		return fmt.Errorf("check out %s: %w", o.Base, err)
	}
	defer func() {
		_ = command(context.Background(), o.Root, o.Log, "git", "worktree", "remove", "--force", baseTree)
	}()

	type side struct {
		name, tree string
		results    map[Metric][]float64
	}
	sides := []*side{{name: "base " + o.Base, tree: baseTree, results: map[Metric][]float64{}}, {name: "head (working tree)", tree: o.Root, results: map[Metric][]float64{}}}
	binaries := map[string]string{}
	for _, s := range sides {
		for _, b := range benches {
			key := s.tree + "|" + b.Pkg
			if binaries[key] != "" {
				continue
			}
			bin := filepath.Join(tmp, fmt.Sprintf("%s-%s.test", strings.Fields(s.name)[0], strings.ReplaceAll(b.Pkg, "/", "_")))
			fmt.Fprintf(o.Log, "bench-compare: building %s of %s\n", b.Pkg, s.name)
			if err := command(ctx, s.tree, o.Log, "go", "test", "-c", "-o", bin, "./"+b.Pkg); err != nil {
				return fmt.Errorf("build %s of %s: %w", b.Pkg, s.name, err)
			}
			binaries[key] = bin
		}
	}
	for r := 0; r < o.Rounds; r++ {
		for _, b := range benches {
			order := sides
			if r%2 == 1 {
				order = []*side{sides[1], sides[0]}
			}
			for _, s := range order {
				fmt.Fprintf(o.Log, "bench-compare: round %d, %s %s, %s\n", r+1, b.Pkg, b.Pattern, s.name)
				var buf bytes.Buffer
				cmd := exec.CommandContext(ctx, binaries[s.tree+"|"+b.Pkg], "-test.run", "^$", "-test.bench", b.Pattern, "-test.benchtime", "1x", "-test.timeout", "60m")
				cmd.Dir = filepath.Join(s.tree, b.Pkg)
				cmd.Stdout = io.MultiWriter(&buf, o.Log)
				cmd.Stderr = o.Log
				if err := cmd.Run(); err != nil {
					return fmt.Errorf("run %s %s of %s: %w", b.Pkg, b.Pattern, s.name, err)
				}
				for m, vs := range ParseOutput(&buf) {
					s.results[m] = append(s.results[m], vs...)
				}
			}
		}
	}
	Table(o.Out, sides[0].results, sides[1].results, sides[0].name, sides[1].name)
	return nil
}

// command runs name with args in dir, its output to log.
func command(ctx context.Context, dir string, log io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	return cmd.Run()
}
