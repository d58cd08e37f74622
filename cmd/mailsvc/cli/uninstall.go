package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
)

func uninstallCommand() *cobra.Command {
	var flags siteFlags
	var yes, force bool
	cmd := &cobra.Command{
		Use:   "uninstall [--wp-path DIR] [--yes] [--force]",
		Short: "Remove the wp_mail() bridge and, unless MAIL_SVC_PRESERVE_DATA is true, the service's tables, options and user meta",
		Long: `Removes the wp_mail() bridge from the site's mu-plugins and its WP-cron
event (always), and, unless the constant MAIL_SVC_PRESERVE_DATA is true,
drops the service's tables ({prefix}mailsvc_*: connections, settings,
logs) and deletes the options, transients and user meta the service and
its bridge wrote (on a network every site's, and the network's). Without
a WordPress site (no --wp-path and no MAILSVC_WP_CONFIG) it drops the
tables of the configured database (MAILSVC_DB) unless preserved.

It says what it is about to do and how many messages are still queued,
then asks for confirmation on a terminal; scripts pass --yes (off a
terminal, without --yes, it refuses and changes nothing). While messages
are queued or being sent it refuses to drop the tables unless --force:
start the service and let the queue drain first. A service still running
on the dropped tables stops by itself with one log line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			ctx := cmd.Context()
			configPath, err := flags.useWPConfig()
			if err != nil {
				return err
			}
			consts, wp, err := readConstants(configPath)
			if err != nil {
				return err
			}
			preserve := consts.Bool("MAIL_SVC_PRESERVE_DATA")
			content := flags.resolveContentDir(wp)

			// The database, opened as it is (nothing is created or
			// migrated): for the tables, and beside WordPress for the
			// bridge's WP-cron event even when the data is preserved.
			var db, site *store.DB
			var prefix string
			if !preserve || wp != nil {
				rt, err := bootReadOnly(ctx, newLogger())
				switch {
				case err == nil:
					defer rt.db.Close()
					prefix = rt.prefix
					if wp != nil {
						site = rt.db
					}
					if !preserve {
						db = rt.db
					}
				case errors.Is(err, store.ErrNotInstalled):
				case preserve:
					fmt.Fprintf(out, "The site's database does not answer (%v): the bridge's WP-cron event stays scheduled.\n", err)
				default:
					return err
				}
			}
			if preserve {
				fmt.Fprintln(out, "The service's tables and options stay: MAIL_SVC_PRESERVE_DATA is true.")
			} else if db != nil {
				if err := checkQueueEmpty(ctx, out, db, force); err != nil {
					return err
				}
				fmt.Fprintf(out, "This drops the service's tables (%smailsvc_*) and deletes its options, transients and user meta (every site's on a network) from %s.\n", prefix, siteDatabase(wp))
			} else {
				fmt.Fprintln(out, "No database of the service's: no tables to drop.")
			}
			if content != "" {
				fmt.Fprintf(out, "This removes the wp_mail() bridge %s and its folder %s.\n", bridge.Path(content), bridge.DirPath(content))
			}
			if site != nil {
				fmt.Fprintf(out, "This unschedules the bridge's WP-cron event %s.\n", wordpress.CronHook)
			}
			if err := confirm(cmd.InOrStdin(), out, yes); err != nil {
				return err
			}

			if db != nil {
				options, err := db.Installation().DeleteServiceOptions(ctx)
				if err != nil {
					return err
				}
				networkOptions, err := db.Installation().DeleteServiceNetworkOptions(ctx)
				if err != nil {
					return err
				}
				userMeta, err := db.Installation().DeleteServiceUserMeta(ctx)
				if err != nil {
					return err
				}
				dropped, err := db.Installation().DropServiceTables(ctx)
				if err != nil {
					return fmt.Errorf("uninstall: %w", err)
				}
				fmt.Fprintf(out, "Dropped %d tables: %s\n", len(dropped), strings.Join(dropped, ", "))
				fmt.Fprintf(out, "Deleted %d options, %d network options and %d user meta rows.\n", options, networkOptions, userMeta)
			} else if preserve {
				fmt.Fprintln(out, "Kept the service's tables and options: MAIL_SVC_PRESERVE_DATA is true.")
			}

			if content == "" {
				fmt.Fprintln(out, "No WordPress site given (--wp-path or --content-dir): no bridge to remove.")
				return unscheduleBridgeCron(ctx, out, site)
			}
			removed, err := bridge.Remove(content)
			if err != nil {
				return err
			}
			if removed {
				fmt.Fprintf(out, "Removed the wp_mail() bridge: %s and %s\n", bridge.Path(content), bridge.DirPath(content))
			} else {
				fmt.Fprintf(out, "No bridge at %s.\n", bridge.Path(content))
			}
			if gone, err := bridge.RemoveCreatedDir(content); err != nil {
				return err
			} else if gone {
				fmt.Fprintf(out, "Removed %s, which wp install had created.\n", filepath.Join(content, "mu-plugins"))
			}
			// After the bridge is gone, so that no page load schedules
			// the event again.
			return unscheduleBridgeCron(ctx, out, site)
		},
	}
	flags.register(cmd)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation (for scripts)")
	cmd.Flags().BoolVar(&force, "force", false, "drop the tables even while messages are still queued (they are lost)")
	return cmd
}

// unscheduleBridgeCron removes the bridge's WP-cron event from the cron
// option of the site (every site of a network, store's OptionsTables):
// without the bridge its schedule is unknown to WordPress, which would log
// invalid_schedule at every run. db nil means no site database.
func unscheduleBridgeCron(ctx context.Context, out io.Writer, db *store.DB) error {
	if db == nil {
		return nil
	}
	tables, err := db.Installation().OptionsTables(ctx)
	if err != nil {
		return fmt.Errorf("unschedule %s: %w", wordpress.CronHook, err)
	}
	events := 0
	for _, table := range tables {
		n, err := wordpress.UnscheduleCronHook(ctx, db.Gorm(), table, wordpress.CronHook)
		if err != nil {
			return fmt.Errorf("unschedule %s: %w", wordpress.CronHook, err)
		}
		events += n
	}
	fmt.Fprintf(out, "Unscheduled the bridge's WP-cron event %s (%d events in %d options tables).\n", wordpress.CronHook, events, len(tables))
	return nil
}

// checkQueueEmpty prints how many messages are still queued or being
// sent, and refuses while there are any unless force. A database without
// the service's tables has none.
func checkQueueEmpty(ctx context.Context, out io.Writer, db *store.DB, force bool) error {
	version, err := db.Schema().SchemaVersion(ctx)
	if err != nil || version == 0 {
		return err
	}
	counts, err := db.Logs().PendingCounts(ctx)
	if err != nil {
		return fmt.Errorf("count queued messages: %w", err)
	}
	pending := counts.Queued + counts.Sending
	fmt.Fprintf(out, "Messages still queued: %d.\n", pending)
	if pending > 0 && !force {
		return fmt.Errorf("messages still queued: %d; they would be lost: start the service and let the queue drain, or pass --force to drop them; nothing was changed", pending)
	}
	return nil
}

// confirm asks "Proceed?" when in is a terminal; yes skips the question.
// Off a terminal without yes it refuses: a script must say --yes.
func confirm(in io.Reader, out io.Writer, yes bool) error {
	if yes {
		return nil
	}
	if !isTerminal(in) {
		return errors.New("uninstall asks for confirmation, and standard input is not a terminal: pass --yes to confirm from a script; nothing was changed")
	}
	fmt.Fprint(out, "Proceed? [y/N] ")
	answer, _ := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return errors.New("uninstall cancelled; nothing was changed")
	}
	return nil
}

// isTerminal reports whether r is a character device (a terminal).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
