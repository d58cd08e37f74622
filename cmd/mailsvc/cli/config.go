package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

func configCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration: every constant, its value (secrets masked) and its source, then the settings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			rt, err := boot(ctx, newLogger())
			if err != nil {
				return err
			}
			defer rt.db.Close()
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "CONSTANT\tVALUE\tSOURCE")
			for _, e := range rt.consts.Entries() {
				value, source := e.Value, string(e.Source)
				if e.Name == "MAILSVC_DB" && !e.Defined {
					// Show the database in use and where it came from.
					value = core.MaskDSN(rt.dsn)
					if rt.wp != nil {
						source = "wp-config (DB_*)"
					}
				}
				fmt.Fprintf(w, "%s\t%s\t%s\n", e.Name, display(value), source)
			}
			stored, err := rt.db.LoadSettings(ctx, core.ScopeFree)
			if err != nil {
				return fmt.Errorf("load settings: %w", err)
			}
			settings, err := (&app.Settings{Store: rt.db, Connections: rt.db}).Get(ctx)
			if err != nil {
				return err
			}
			keys := make([]string, 0, len(settings))
			for k := range settings {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			fmt.Fprintln(w, "\nSETTING\tVALUE\tSOURCE")
			for _, k := range keys {
				src := "default"
				if _, ok := stored[k]; ok {
					src = "database"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\n", k, display(fmt.Sprint(nullable(settings[k]))), src)
			}
			return w.Flush()
		},
	}
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
