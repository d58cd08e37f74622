package cli

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/logbody"
	"github.com/mailsvc/mailsvc/core"
)

// logsCommand is `mailsvc logs`: maintenance of the email log.
func logsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "logs",
		Short: "Maintain the email log",
	}
	cmd.AddCommand(logsRedactCommand())
	return cmd
}

// logsRedactCommand is `mailsvc logs redact`: the log_body settings
// applied to the logs already stored (docs/logs.md).
func logsRedactCommand() *cobra.Command {
	var (
		fromID int64
		batch  int
		all    bool
	)
	cmd := &cobra.Command{
		Use:   "redact [--from-id N] [--batch N] [--all]",
		Short: "Apply the log_body settings (redacted, none) to the delivered and failed logs already stored",
		Long: `Applies the log_body settings to the delivered and failed logs stored
whole: those written before the modes existed and those imported from
other plugins. In redacted mode one-time links and credentials are
replaced with [redacted]; in none mode the body goes; attachments keep
their names, types and sizes only unless log_attachments is true.

It walks the logs by id in batches (--batch, default 500), each rewritten
in one short transaction, so the site and the queue go on while it runs.
It can be stopped at any time: a log done is not read again, and
--from-id starts after the last id a run printed. --all also goes over
logs that already have a mode (a stricter mode applies; redacted logs
are redacted again with the current patterns).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			log := newLogger()
			rt, err := boot(ctx, log)
			if err != nil {
				return err
			}
			defer rt.db.Close()
			st, err := (&app.Settings{Store: rt.db.Settings(), Connections: rt.db.Connections()}).Get(ctx)
			if err != nil {
				return err
			}
			redaction, err := rt.logRedaction(&core.Hooks{}, log)
			if err != nil {
				return err
			}
			b := &logbody.Backfill{Store: rt.db.Logs(), Policy: logbody.PolicyOf(st), Redactor: redaction.Redactor(ctx), Batch: batch, All: all}
			out := cmd.OutOrStdout()
			p, err := b.Run(ctx, fromID, func(p logbody.BackfillProgress) {
				fmt.Fprintf(out, "up to log %d of %d: %d read, %d rewritten, %d values redacted\n", p.LastID, p.UpTo, p.Read, p.Rewritten, p.Redacted)
			})
			if err != nil {
				fmt.Fprintf(out, "Stopped; resume with --from-id %d\n", p.LastID)
				return err
			}
			fmt.Fprintf(out, "Done: %d logs read, %d rewritten, %d values redacted.\n", p.Read, p.Rewritten, p.Redacted)
			return nil
		},
	}
	cmd.Flags().Int64Var(&fromID, "from-id", 0, "start after this log id (the last id a stopped run printed)")
	cmd.Flags().IntVar(&batch, "batch", logbody.DefaultBackfillBatch, "logs per transaction")
	cmd.Flags().BoolVar(&all, "all", false, "also go over logs that already have a mode")
	return cmd
}

// logRedaction returns the redactors of the log_body redacted mode: the
// built-in rules, the patterns the WordPress bridge publishes (its
// mail_svc_log_redact_patterns filter) and the Go filter of that name.
func (rt *runtime) logRedaction(hooks *core.Hooks, log *slog.Logger) (*logbody.Redactors, error) {
	rs := &logbody.Redactors{Hooks: hooks, Logger: log}
	if !rt.standalone() {
		src, err := wordpress.NewGormSource(rt.db.Gorm(), rt.prefix)
		if err != nil {
			return nil, err
		}
		rs.Published = (&wordpress.LogRedactPatterns{Options: src}).Patterns
	}
	return rs, nil
}
