package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
)

func uninstallCommand() *cobra.Command {
	var flags siteFlags
	cmd := &cobra.Command{
		Use:   "uninstall [--wp-path DIR]",
		Short: "Remove the wp_mail() bridge and, unless MAIL_SVC_PRESERVE_DATA is true, the service's tables and options",
		Long: `Removes the wp_mail() bridge from the site's mu-plugins (always), and,
unless the constant MAIL_SVC_PRESERVE_DATA is true, drops the service's
tables ({prefix}mailsvc_*: connections, settings, logs) and deletes its
options from the site's options table. Without a WordPress site (no
--wp-path and no MAILSVC_WP_CONFIG) it drops the tables of the configured
database (MAILSVC_DB) unless preserved.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			configPath, err := flags.useWPConfig()
			if err != nil {
				return err
			}
			consts, wp, err := readConstants(configPath)
			if err != nil {
				return err
			}
			if consts.Bool("MAIL_SVC_PRESERVE_DATA") {
				// Not even opened: booting would migrate, creating tables.
				fmt.Fprintln(out, "Kept the service's tables and options: MAIL_SVC_PRESERVE_DATA is true.")
			} else {
				ctx := cmd.Context()
				rt, err := boot(ctx, newLogger())
				if err != nil {
					return err
				}
				defer rt.db.Close()
				options, err := rt.db.DeleteServiceOptions(ctx)
				if err != nil {
					return err
				}
				dropped, err := rt.db.DropServiceTables(ctx)
				if err != nil {
					return fmt.Errorf("uninstall: %w", err)
				}
				fmt.Fprintf(out, "Dropped %d tables from %s: %s\n", len(dropped), siteDatabase(rt.wp), strings.Join(dropped, ", "))
				fmt.Fprintf(out, "Deleted %d options.\n", options)
			}

			content := flags.resolveContentDir(wp)
			if content == "" {
				fmt.Fprintln(out, "No WordPress site given (--wp-path or --content-dir): no bridge to remove.")
				return nil
			}
			removed, err := bridge.Remove(content)
			if err != nil {
				return err
			}
			if removed {
				fmt.Fprintf(out, "Removed the wp_mail() bridge: %s\n", bridge.Path(content))
			} else {
				fmt.Fprintf(out, "No bridge at %s.\n", bridge.Path(content))
			}
			return nil
		},
	}
	flags.register(cmd)
	return cmd
}
