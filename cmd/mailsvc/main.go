// Command mailsvc is the mail-delivery service for WordPress sites: one
// binary that serves the admin REST API, manages users in standalone mode
// and prints its effective configuration.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	_ "github.com/mailsvc/mailsvc/drivers/all"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := rootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "mailsvc:", err)
		os.Exit(1)
	}
}

func rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "mailsvc",
		Short:         "Mail delivery service for WordPress sites",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCommand(), usersCommand(), configCommand(), versionCommand())
	root.AddCommand(sendmailCommand())
	root.AddCommand(wpCommand())
	root.AddCommand(uninstallCommand())
	return root
}

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "mailsvc %s\n", version)
		},
	}
}
