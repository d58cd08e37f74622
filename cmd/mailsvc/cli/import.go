package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/adapters/wordpress/migrationsite"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/logbody"
	"github.com/mailsvc/mailsvc/app/migration"
	"github.com/mailsvc/mailsvc/core"
)

// importCommand is `mailsvc import SOURCE`: the migration engine from
// the command line.
func importCommand() *cobra.Command {
	var dryRun, logs, restart bool
	var maxLogs int64
	cmd := &cobra.Command{
		Use:   "import SOURCE",
		Short: "Import the connections (and logs) of another SMTP plugin: " + strings.Join(sourceIDs(), ", "),
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			log := newLogger()
			rt, err := boot(ctx, log)
			if err != nil {
				return err
			}
			defer rt.db.Close()
			cipher, err := rt.cipher()
			if err != nil {
				return err
			}
			hooks := &core.Hooks{}
			if err := rt.applySiteFilters(hooks, log); err != nil {
				return err
			}
			conns := &app.Connections{Store: rt.db.Connections(), Cipher: cipher, Pins: rt.consts.Pins, Hooks: hooks, Settings: rt.db.Settings(),
				SensitiveKeys:        SplitList(rt.consts.String("MAILSVC_SENSITIVE_KEYS")),
				AllowCustomEndpoints: rt.consts.Bool(core.AllowCustomEndpointsConstant)}
			redaction, err := rt.logRedaction(hooks, log)
			if err != nil {
				return err
			}
			engine, err := rt.migrationEngine(conns, &app.Settings{Store: rt.db.Settings(), Connections: rt.db.Connections()}, redaction)
			if err != nil {
				return err
			}
			if engine.Site == nil {
				return errors.New("import needs the WordPress site: set MAILSVC_WP_CONFIG to its wp-config.php")
			}
			req := migration.ImportRequest{Source: args[0], DryRun: dryRun, ImportLogs: logs, RestartLogs: restart}
			if cmd.Flags().Changed("max-logs") {
				req.MaxLogs = &maxLogs
			}
			return runImport(ctx, cmd.OutOrStdout(), engine, req)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "assess only: write nothing")
	cmd.Flags().BoolVar(&logs, "logs", false, "also import the plugin's email log")
	cmd.Flags().Int64Var(&maxLogs, "max-logs", 0, fmt.Sprintf("import at most N log rows (0 to %d; 0: no cap)", migration.MaxLogs))
	cmd.Flags().BoolVar(&restart, "restart-logs", false, "walk the log from its first row again (rows already imported are skipped)")
	return cmd
}

func sourceIDs() []string {
	var ids []string
	for _, s := range migration.Sources() {
		ids = append(ids, s.ID())
	}
	return ids
}

// importer is what runImport needs (*migration.Engine).
type importer interface {
	Import(ctx context.Context, req migration.ImportRequest) (*migration.ImportResult, error)
}

// runImport imports the connections, then the log chunk by chunk with a
// progress bar until the engine says done.
func runImport(ctx context.Context, out io.Writer, engine importer, req migration.ImportRequest) error {
	res, err := engine.Import(ctx, req)
	if err != nil {
		if fields := core.ErrorFields(err); len(fields) > 0 {
			var parts []string
			for k, v := range fields {
				parts = append(parts, k+": "+v)
			}
			return fmt.Errorf("%s", strings.Join(parts, "; "))
		}
		return err
	}
	verb := "Imported"
	if req.DryRun {
		verb = "Would import"
	}
	fmt.Fprintf(out, "%s from %s:\n", verb, res.Source)
	for _, c := range res.Connections {
		id := "-"
		if c.ConnectionID != nil {
			id = fmt.Sprint(*c.ConnectionID)
		}
		role := ""
		if c.WasDefault {
			role = " (default)"
		} else if c.WasFallback {
			role = " (fallback)"
		}
		fmt.Fprintf(out, "  %-20s %s → %s  #%s  %s%s\n", c.Status, c.Conversion.From, c.Conversion.To, id, c.Name, role)
		for _, m := range c.Missing {
			fmt.Fprintf(out, "      missing: %s\n", m)
		}
		for _, i := range c.Issues {
			fmt.Fprintf(out, "      %s\n", i)
		}
	}
	for _, s := range res.Suggestions {
		fmt.Fprintf(out, "  note: %s\n", s)
	}
	for _, e := range res.Errors {
		fmt.Fprintf(out, "  error: %s\n", e)
	}
	if !res.Logs.Available {
		if res.Logs.Reason != "" {
			fmt.Fprintf(out, "Logs: %s\n", res.Logs.Reason)
		}
		return nil
	}
	if req.DryRun || !req.ImportLogs {
		fmt.Fprintf(out, "Logs: %d rows (import them with --logs)\n", res.Logs.Total)
		return nil
	}
	conn := false
	req.ImportConnections = &conn
	req.RestartLogs = false
	skipped := res.Logs.Skipped
	for {
		progress(out, res.Logs.ImportedTotal, res.Logs.Total, req.MaxLogs)
		if res.Logs.Done {
			break
		}
		req.Cursor = res.Logs.Cursor
		if res, err = engine.Import(ctx, req); err != nil {
			fmt.Fprintln(out)
			return err
		}
		skipped += res.Logs.Skipped
	}
	fmt.Fprintf(out, "\nLogs: %d imported, %d skipped\n", res.Logs.ImportedTotal, skipped)
	return nil
}

// progress redraws a one-line progress bar.
func progress(out io.Writer, done, total int64, maxLogs *int64) {
	if maxLogs != nil && *maxLogs > 0 && *maxLogs < total {
		total = *maxLogs
	}
	const width = 30
	filled := width
	if total > 0 {
		filled = int(min(done, total) * width / total)
	}
	fmt.Fprintf(out, "\r[%s%s] %d/%d logs", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total)
}

// migrationEngine returns the migration engine over the WordPress site.
// In standalone mode it has no site: there is no other plugin to import
// from, so its scan finds nothing and its imports answer 422.
func (rt *runtime) migrationEngine(conns *app.Connections, settings *app.Settings, redaction *logbody.Redactors) (*migration.Engine, error) {
	if rt.standalone() {
		return &migration.Engine{}, nil
	}
	site, err := migrationsite.New(rt.db.Gorm(), rt.prefix, rt.wp.ConstantStrings())
	if err != nil {
		return nil, err
	}
	return &migration.Engine{
		Site:          site,
		Connections:   conns,
		Settings:      settings,
		State:         rt.db.Settings(),
		Logs:          rt.db.Logs(),
		Bodies:        &logbody.Keeper{Store: rt.db.Logs(), Settings: settings, Redaction: redaction},
		SensitiveKeys: conns.ExtraSensitiveKeys,
	}, nil
}
