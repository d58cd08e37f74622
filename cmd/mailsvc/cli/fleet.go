package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/app/fleet"
	"github.com/mailsvc/mailsvc/app/health"
)

// fleetCommand is `mailsvc fleet`: the operator's view of the sites one
// `mailsvc serve` serves, read from each site's own database, given as
// serve is given them (--site flags or MAILSVC_SITES).
func fleetCommand() *cobra.Command {
	var siteArgs []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Show every site of a fleet: its queue, failures and deliveries over 24 hours, its connections' health and held mail",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			paths, err := fleetSites(siteArgs)
			if err != nil {
				return err
			}
			if len(paths) == 0 {
				return errors.New("no sites: give each site's wp-config.php with --site, or set MAILSVC_SITES")
			}
			views := fleetViews(cmd.Context(), paths, slog.New(slog.DiscardHandler))
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(views)
			}
			return printFleet(cmd.OutOrStdout(), views)
		},
	}
	cmd.Flags().StringArrayVar(&siteArgs, "site", nil, "a site's wp-config.php (repeat for each site; default $MAILSVC_SITES)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON, as GET /wp-json/mailsvc/v1/fleet/sites answers")
	return cmd
}

// fleetViews reads every site's view from its database, opened as it is
// (never migrated); a site whose database cannot be read is listed with
// the reason.
func fleetViews(ctx context.Context, paths []string, log *slog.Logger) []fleet.SiteView {
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	sites := make([]fleet.Site, 0, len(paths))
	for _, p := range paths {
		site := fleet.Site{Name: p, WPConfig: p}
		rt, err := bootWith(ctx, log, p, store.OpenExisting)
		if err != nil {
			site.Problem = err.Error()
			sites = append(sites, site)
			continue
		}
		closers = append(closers, func() { rt.db.Close() })
		fleetDataDir(rt)
		if public, _, err := rt.siteURLs(ctx); err == nil && public != "" {
			site.HomeURL, site.Name = public, siteName(public, p)
		}
		dash, err := rt.attentionReader()
		if err != nil {
			site.Problem = err.Error()
			sites = append(sites, site)
			continue
		}
		site.Attention, site.Queue, site.Outcomes, site.Connections = dash, rt.db.Logs(), rt.db.Logs(), rt.db.Connections()
		sites = append(sites, site)
	}
	return (&fleet.Service{Sites: func() []fleet.Site { return sites }}).View(ctx)
}

// attentionReader is the dashboard's reader of what needs the site
// owner's attention, for a command that does not serve the site.
func (rt *runtime) attentionReader() (*dashboard.Service, error) {
	settings := &app.Settings{Store: rt.db.Settings(), Connections: rt.db.Connections()}
	guard, err := rt.captureGuard(rt.db, settings, nil, rt.log)
	if err != nil {
		return nil, err
	}
	return &dashboard.Service{Logs: rt.db.Logs(), Connections: rt.db.Connections(), Retrying: rt.db.Logs(), Capture: guard,
		SendHealth: &health.SendHealth{Store: rt.db.Settings(), Logger: rt.log}}, nil
}

// siteName is how a site is named: its home URL's host and path, else
// fallback.
func siteName(home, fallback string) string {
	if u, err := url.Parse(home); err == nil && u.Host != "" {
		return u.Host + strings.TrimRight(u.Path, "/")
	}
	return fallback
}

// printFleet prints the view as a table, then each site's failing
// connections and problems.
func printFleet(out io.Writer, views []fleet.SiteView) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SITE\tSTATUS\tQUEUED\tRETRYING\tFAILED 24H\tDELIVERED 24H\tCONNECTIONS\tFAILING\tHELD\tWP-CONFIG")
	for _, v := range views {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", v.Name, v.Status, v.Queue.Queued, v.Queue.Retrying, v.Failed24h, v.Delivered24h,
			v.Connections.Total, len(v.Connections.Failing), v.Held, v.WPConfig)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, v := range views {
		for _, c := range v.Connections.Failing {
			fmt.Fprintf(out, "%s: connection %q is failing: %s\n", v.Name, c.Name, c.LastError)
		}
		if v.Problem != "" {
			fmt.Fprintf(out, "%s: %s\n", v.Name, v.Problem)
		}
	}
	return nil
}
