// Command mkdist builds mailsvc's release files into a directory: a
// static binary and a Debian package for each architecture, and
// SHA256SUMS (see package internal/dist). `make dist` runs it:
//
//	go run ./cmd/mkdist -version v1.2.0 -out dist -arch amd64,arm64
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/mailsvc/mailsvc/internal/dist"
)

func main() {
	var o dist.Options
	var arches string
	flag.StringVar(&o.Version, "version", "dev", "the version `mailsvc version` prints (git describe)")
	flag.StringVar(&o.Dir, "out", "dist", "the output directory")
	flag.StringVar(&arches, "arch", "amd64,arm64", "comma-separated architectures")
	flag.StringVar(&o.Maintainer, "maintainer", dist.DefaultMaintainer, "the packages' Maintainer field")
	flag.Parse()
	o.Arches = strings.Split(arches, ",")
	o.Log = os.Stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := dist.Build(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "mkdist:", err)
		os.Exit(1)
	}
}
