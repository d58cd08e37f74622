package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

func configCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration: every constant, its value (secrets masked) and its source, then the settings",
		Long: `Prints every constant with its value (secrets masked) and its source, then
the stored settings. It never writes: on a database without the
service's tables it says "not installed" instead of creating them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			rt, err := readConfig(newLogger(), os.Getenv("MAILSVC_WP_CONFIG"))
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			printConstants(w, rt)
			if err := w.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout())
			db, err := store.OpenExisting(ctx, rt.dsn, rt.prefix, rt.log)
			if errors.Is(err, store.ErrNotInstalled) {
				fmt.Fprintf(cmd.OutOrStdout(), "Settings: not installed (no database at %s yet; mailsvc serve creates it).\n", core.MaskDSN(rt.dsn))
				return nil
			} else if err != nil {
				return fmt.Errorf("open database %s: %w", core.MaskDSN(rt.dsn), err)
			}
			defer db.Close()
			version, err := db.Schema().SchemaVersion(ctx)
			if err != nil {
				return err
			}
			if version == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "Settings: not installed (no %smailsvc_* tables in %s; mailsvc serve creates them).\n", rt.prefix, core.MaskDSN(rt.dsn))
				return nil
			}
			rt.db = db
			return printSettings(ctx, w, rt)
		},
	}
}

// printConstants writes every constant, its effective value and its
// source; MAILSVC_DB and MAILSVC_TABLE_PREFIX show the database and prefix
// actually in use when they come from wp-config.php.
func printConstants(w io.Writer, rt *runtime) {
	fmt.Fprintln(w, "CONSTANT\tVALUE\tSOURCE")
	for _, e := range rt.consts.Entries() {
		value, source := e.Value, string(e.Source)
		switch {
		case e.Name == "MAILSVC_DB" && !e.Defined:
			// Show the database in use and where it came from.
			value = core.MaskDSN(rt.dsn)
			if rt.wp != nil {
				source = "wp-config.php (DB_*)"
			}
		case e.Name == "MAILSVC_TABLE_PREFIX" && rt.prefixFromWP:
			value, source = rt.prefix, "wp-config.php ($table_prefix)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", e.Name, display(value), source)
	}
}

// printSettings writes the free settings with their source.
func printSettings(ctx context.Context, w *tabwriter.Writer, rt *runtime) error {
	stored, err := rt.db.Settings().LoadSettings(ctx, core.ScopeFree)
	if err != nil {
		return fmt.Errorf("load settings: %w", err)
	}
	settings, err := (&app.Settings{Store: rt.db.Settings(), Connections: rt.db.Connections()}).Get(ctx)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "SETTING\tVALUE\tSOURCE")
	for _, k := range keys {
		src := "default"
		if _, ok := stored[k]; ok {
			src = "database"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", k, display(fmt.Sprint(nullable(settings[k]))), src)
	}
	return w.Flush()
}

func display(v string) string {
	if v == "" {
		return `""`
	}
	return v
}

func nullable(v any) any {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err == nil {
			return string(b)
		}
	}
	return v
}
