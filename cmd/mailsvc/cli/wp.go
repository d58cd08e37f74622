package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/adapters/systemd"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/adapters/wordpress/wpconfig"
	"github.com/mailsvc/mailsvc/core"
)

// siteFlags are the flags that locate a WordPress site on disk.
type siteFlags struct {
	wpPath     string // the WordPress root holding wp-config.php
	contentDir string // WP_CONTENT_DIR, when not the default
}

func (f *siteFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.wpPath, "wp-path", "", "the WordPress root directory, holding wp-config.php")
	cmd.Flags().StringVar(&f.contentDir, "content-dir", "", "the site's WP_CONTENT_DIR (default: WP_CONTENT_DIR of wp-config.php, else WP-PATH/wp-content)")
}

// wpConfigPath returns the wp-config.php to use: MAILSVC_WP_CONFIG when
// set, else wp-config.php in the WordPress root, else "" (standalone).
func (f *siteFlags) wpConfigPath() string {
	if p := os.Getenv("MAILSVC_WP_CONFIG"); p != "" {
		return p
	}
	if f.wpPath != "" {
		return filepath.Join(f.wpPath, "wp-config.php")
	}
	return ""
}

// useWPConfig points boot at the site's wp-config.php (boot reads
// MAILSVC_WP_CONFIG) and returns its path, or "" in standalone mode.
func (f *siteFlags) useWPConfig() (string, error) {
	path := f.wpConfigPath()
	if path == "" {
		return "", nil
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("wp-config.php of the site: %w", err)
	}
	if err := os.Setenv("MAILSVC_WP_CONFIG", path); err != nil {
		return "", fmt.Errorf("set MAILSVC_WP_CONFIG: %w", err)
	}
	return path, nil
}

// resolveContentDir returns the site's WP_CONTENT_DIR: --content-dir, else
// an absolute WP_CONTENT_DIR defined in wp-config.php, else
// <wp-path>/wp-content. It returns "" when none of them is known.
func (f *siteFlags) resolveContentDir(wp *wpconfig.File) string {
	if f.contentDir != "" {
		return f.contentDir
	}
	if wp != nil {
		if v, ok := wp.Lookup("WP_CONTENT_DIR"); ok && filepath.IsAbs(v.String()) {
			return v.String()
		}
	}
	if f.wpPath != "" {
		return filepath.Join(f.wpPath, "wp-content")
	}
	return ""
}

func wpCommand() *cobra.Command {
	wp := &cobra.Command{Use: "wp", Short: "Connect the service to a WordPress site"}
	var flags siteFlags
	var unit systemdFlags
	var verbose bool
	install := &cobra.Command{
		Use:   "install --wp-path DIR [--systemd]",
		Short: "Install the wp_mail() bridge into the site's mu-plugins and check the shared database",
		Long: `Copies the wp_mail() bridge, a must-use plugin (the loader mailsvc-bridge.php
and its folder mailsvc-bridge/), into <content>/mu-plugins/, replacing an
earlier version's files, and checks that the service sees the site's database: it boots with the
site's wp-config.php (MAILSVC_WP_CONFIG, default DIR/wp-config.php), migrates
the service's tables and verifies that the queue table the bridge writes to
exists there.

With --systemd it also writes the service's hardened systemd unit (the one
the Debian package ships, running this binary) and, when missing,
/etc/mailsvc/mailsvc.env naming the site's wp-config.php, creates the
mailsvc system user, and enables and starts the service where systemd runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if flags.wpPath == "" && flags.contentDir == "" {
				return errors.New("give the WordPress root with --wp-path DIR (or --content-dir DIR with MAILSVC_WP_CONFIG)")
			}
			configPath, err := flags.useWPConfig()
			if err != nil {
				return err
			}
			if configPath == "" {
				return errors.New("the bridge needs the site's database: give --wp-path DIR or set MAILSVC_WP_CONFIG to its wp-config.php")
			}
			ctx := cmd.Context()
			// The migrations are one line, unless --verbose.
			var counter *migrationCounter
			log := newLogger()
			if !verbose {
				counter = newMigrationCounter(log.Handler())
				log = slog.New(counter)
			}
			rt, err := boot(ctx, log)
			if err != nil {
				return err
			}
			defer rt.db.Close()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Database: %s, table prefix %q (from %s)\n", siteDatabase(rt.wp), rt.prefix, configPath)
			if counter != nil {
				version, err := rt.db.Schema().SchemaVersion(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintln(out, migratedLine(version, counter.Steps()))
			}

			// The same database as WordPress: its options table, with the
			// same prefix, names the site.
			var siteURL string
			options := rt.prefix + "options"
			err = rt.db.Gorm().WithContext(ctx).
				Raw("SELECT option_value FROM `" + options + "` WHERE option_name = 'siteurl' LIMIT 1").
				Scan(&siteURL).Error
			if err != nil {
				return fmt.Errorf("read %s: is WordPress installed in the database %s describes, with table prefix %q? %w", options, configPath, rt.prefix, err)
			}
			if siteURL == "" {
				return fmt.Errorf("%s has no siteurl: WordPress is not installed in the database %s describes", options, configPath)
			}
			fmt.Fprintf(out, "WordPress site: %s\n", siteURL)

			queue := rt.db.TableName("logs")
			tables, err := rt.db.Installation().ServiceTables(ctx)
			if err != nil {
				return fmt.Errorf("check the queue table: %w", err)
			}
			if !slices.Contains(tables, queue) {
				return fmt.Errorf("the queue table %s is missing from the site's database after migration", queue)
			}
			fmt.Fprintf(out, "Queue table %s: ready (%d service tables)\n", queue, len(tables))

			content := flags.resolveContentDir(rt.wp)
			if content == "" {
				return errors.New("cannot tell the site's content directory: give --wp-path DIR or --content-dir DIR")
			}
			path, err := bridge.Install(content)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "Installed the wp_mail() bridge: %s\n", path)
			// Until the bridge's first page load publishes the site's
			// filters, the service refuses every route rather than guess
			// them (wordpress.FiltersPending).
			pending, err := markFiltersPending(ctx, rt)
			if err != nil {
				return err
			}
			if pending {
				fmt.Fprintln(out, "Load any page of the site once: the bridge then publishes the site's filters, and the service answers its API (until then it refuses every route).")
			}
			if unit.enabled {
				return unit.install(ctx, configPath, out)
			}
			fmt.Fprintln(out, nextStep(installedByPackage(thisExecutable(), systemd.PackageUnitPath, systemd.UnitPath)))
			return nil
		},
	}
	flags.register(install)
	unit.register(install)
	install.Flags().BoolVarP(&verbose, "verbose", "v", false, "log each schema migration instead of one line")
	wp.AddCommand(install)
	return wp
}

// siteDatabase describes the database wp-config.php names, without the
// password.
func siteDatabase(wp *wpconfig.File) string {
	if wp == nil {
		return "standalone"
	}
	return fmt.Sprintf("MySQL %s on %s as %s", wp.Str("DB_NAME"), wp.Str("DB_HOST"), wp.Str("DB_USER"))
}

// readConstants reads the configuration constants as boot does (the
// site's wp-config.php, then the environment) without opening the
// database.
func readConstants(configPath string) (*core.Constants, *wpconfig.File, error) {
	var defines map[string]string
	var wp *wpconfig.File
	if configPath != "" {
		f, err := wpconfig.ParseFile(configPath, os.LookupEnv)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("wp-config.php of the site: %w", err)
		} else if err != nil {
			return nil, nil, fmt.Errorf("read wp-config %s: %w", configPath, err)
		}
		wp, defines = f, f.ConstantStrings()
	}
	consts, _ := core.NewConstants(defines, os.LookupEnv)
	return consts, wp, nil
}

// markFiltersPending writes wordpress.FiltersOption as
// {wordpress.FiltersPending: true} when the site has none yet: the
// bridge is installed but has not evaluated the site's filters, and the
// service refuses the capability until its first page load does. It
// reports whether it wrote the option.
func markFiltersPending(ctx context.Context, rt *runtime) (bool, error) {
	value := fmt.Sprintf("a:1:{s:%d:\"%s\";b:1;}", len(wordpress.FiltersPending), wordpress.FiltersPending)
	res := rt.db.Gorm().WithContext(ctx).Exec("INSERT IGNORE INTO `"+rt.prefix+"options` (option_name, option_value, autoload) VALUES (?, ?, 'yes')",
		wordpress.FiltersOption, value)
	if res.Error != nil {
		return false, fmt.Errorf("write the %s option: %w", wordpress.FiltersOption, res.Error)
	}
	return res.RowsAffected > 0, nil
}
