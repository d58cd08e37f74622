package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/adapters/systemd"
)

// noEnvFile are the commands that do not read the environment file: they
// need no configuration.
var noEnvFile = map[string]bool{"version": true, "help": true, "completion": true, "__complete": true}

// loadEnvFile reads the environment file (MAILSVC_ENV_FILE, by default
// /etc/mailsvc/mailsvc.env, systemd.LoadEnv) into the environment before
// a command runs, so that a command run by hand after the package's steps
// sees the settings the service gets from its unit. The environment wins
// over the file. A file that exists but cannot be read is an error with a
// hint to use sudo, unless the environment already holds MAILSVC_
// settings of its own (the service under systemd, whose unit gave it the
// file's variables) or the command is sendmail (run by PHP as the web
// server's user, it must not fail on a file it was never meant to read).
func loadEnvFile(cmd *cobra.Command) error {
	for c := cmd; c != nil; c = c.Parent() {
		if noEnvFile[c.Name()] {
			return nil
		}
	}
	path, _, problems, err := systemd.LoadEnv(os.LookupEnv, os.Setenv)
	if errors.Is(err, systemd.ErrEnvUnreadable) && (cmd.Name() == "sendmail" || hasOwnSettings(os.Environ())) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(cmd.ErrOrStderr(), "mailsvc: %s %s: ignored\n", path, p)
	}
	return nil
}

// hasOwnSettings reports whether env sets a MAILSVC_ variable other than
// MAILSVC_ENV_FILE.
func hasOwnSettings(env []string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, "MAILSVC_") && !strings.HasPrefix(kv, systemd.EnvFileName+"=") {
			return true
		}
	}
	return false
}
