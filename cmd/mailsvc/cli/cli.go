// Package cli is the mailsvc command line: serve, users, config, doctor,
// sendmail, wp, uninstall, import, logs and version, plus the commands of
// the add-on modules joined to the build (RegisterModule). Command mailsvc
// is this package plus the built-in drivers and the Pro add-on
// (cmd/mailsvc/pro); a build without Pro leaves out that import. A custom
// build adds its own drivers the same way, by a blank import beside
// drivers/all in its own main package:
//
//	package main
//
//	import (
//		"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
//		_ "github.com/mailsvc/mailsvc/drivers/all"
//		_ "example.com/acme/mailsvc-acme" // registers the "acme" driver
//	)
//
//	func main() { cli.Main() }
package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Version is set at build time with
// -ldflags "-X github.com/mailsvc/mailsvc/cmd/mailsvc/cli.Version=...".
var Version = "dev"

// Main runs the command line with the process's arguments until it ends
// or SIGINT/SIGTERM cancels it, and exits non-zero on failure.
func Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Command().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "mailsvc:", err)
		stop()
		os.Exit(1)
	}
}

// Command returns the root command with every subcommand.
func Command() *cobra.Command {
	root := &cobra.Command{
		Use:           "mailsvc",
		Short:         "Mail delivery service for WordPress sites",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return loadEnvFile(cmd)
		},
	}
	root.AddCommand(serveCommand(), usersCommand(), configCommand(), versionCommand(),
		sendmailCommand(), wpCommand(), uninstallCommand(), importCommand(), logsCommand(), doctorCommand(), fleetCommand())
	for _, m := range modules {
		root.AddCommand(m.Commands()...)
	}
	return root
}

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "mailsvc %s\n", Version)
		},
	}
}
