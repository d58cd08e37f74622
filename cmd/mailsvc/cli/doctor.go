package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/adapters/httpprobe"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/doctor"
	"github.com/mailsvc/mailsvc/core"
)

func doctorCommand() *cobra.Command {
	var flags siteFlags
	var service string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [--wp-path DIR] [--service URL] [--json]",
		Short: "Check the installation: database, bridge, service, REST through the site, screens, HTTPS, clock, WP-cron, queue, connections",
		Long: `Runs every check of the installation and prints, for each, a verdict
(ok, warning, error), what it found and the fix in words. It only reads:
nothing is created or migrated. The exit code is non-zero when a check
whose failure stops mail or the screens failed (the database, the bridge,
the service, REST through the site, the screens); the others are warnings.
The service is looked for at --service, else where the bridge sends
(MAILSVC_SERVICE_URL of wp-config.php, then of the environment), else at
http(s)://MAILSVC_ADDR. When the database does not answer, the checks
that need it say they were not checked instead of failing again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if _, err := flags.useWPConfig(); err != nil {
				return err
			}
			rt, err := readConfig(newLogger(), os.Getenv("MAILSVC_WP_CONFIG"))
			if err != nil {
				return err
			}
			d := &siteDoctor{rt: rt, contentDir: flags.resolveContentDir(rt.wp), service: service}
			if d.service == "" {
				d.service = bridgeServiceURL(rt)
			}
			d.db, d.dbErr = store.OpenExisting(ctx, rt.dsn, rt.prefix, rt.log)
			if d.db != nil {
				defer d.db.Close()
			}
			report := d.Diagnose(ctx)
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(report); err != nil {
					return err
				}
			} else {
				printReport(cmd, report)
			}
			if !report.Healthy {
				return fmt.Errorf("%d checks failed: mail or the screens do not work until they are fixed", failed(report))
			}
			return nil
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVar(&service, "service", "", "the service's own address (default MAILSVC_SERVICE_URL beside WordPress, else http://MAILSVC_ADDR)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (as GET /tools/doctor answers)")
	return cmd
}

// failed counts the critical checks that failed.
func failed(r doctor.Report) int {
	n := 0
	for _, c := range r.Checks {
		if c.Critical && c.Verdict == doctor.Error {
			n++
		}
	}
	return n
}

// printReport writes one line per check, and its fix under it.
func printReport(cmd *cobra.Command, r doctor.Report) {
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	warnings := 0
	for _, c := range r.Checks {
		fmt.Fprintf(w, "%s\t%s\t%s\n", c.Verdict, c.Title, c.Message)
		if c.Fix != "" {
			fmt.Fprintf(w, "\t\tfix: %s\n", c.Fix)
		}
		if c.Verdict == doctor.Warning {
			warnings++
		}
	}
	_ = w.Flush()
	out := cmd.OutOrStdout()
	_, _ = out.Write(buf.Bytes())
	switch {
	case !r.Healthy:
		fmt.Fprintf(out, "\n%d checks failed, %d warnings.\n", failed(r), warnings)
	case warnings > 0:
		fmt.Fprintf(out, "\nMail and the screens work; %d warnings.\n", warnings)
	default:
		fmt.Fprintln(out, "\nEverything checked is fine.")
	}
}

// bridgeServiceURL is where the doctor looks for the service: beside
// WordPress where the bridge sends, MAILSVC_SERVICE_URL (a constant of
// wp-config.php, then the environment, as mailsvc_bridge_service_url
// reads it); otherwise (and when neither sets it) at MAILSVC_ADDR.
func bridgeServiceURL(rt *runtime) string {
	if rt.wp != nil {
		if v := rt.wp.Str("MAILSVC_SERVICE_URL"); v != "" {
			return strings.TrimRight(v, "/")
		}
		if v := os.Getenv("MAILSVC_SERVICE_URL"); v != "" {
			return strings.TrimRight(v, "/")
		}
	}
	return serviceURL(rt, rt.consts.String("MAILSVC_ADDR"))
}

// serviceURL is the service's own base URL for a listen address: a
// wildcard host is reached on loopback.
func serviceURL(rt *runtime, addr string) string {
	scheme := "http"
	if rt.consts.String("MAILSVC_TLS_CERT") != "" {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return scheme + "://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// siteDoctor builds the doctor's checks from the configuration and the
// site as they are at each call (doctor.Doctor), for `mailsvc doctor` and
// GET /tools/doctor.
type siteDoctor struct {
	rt *runtime
	// db is the database, nil when it could not be opened (dbErr).
	db    *store.DB
	dbErr error
	// contentDir is WP_CONTENT_DIR ("" to derive it from wp-config.php's
	// directory); service the service's own base URL.
	contentDir string
	service    string
	prober     doctor.Prober
	now        func() time.Time
}

// Diagnose runs every check.
func (d *siteDoctor) Diagnose(ctx context.Context) doctor.Report {
	return (&doctor.Doctor{Checks: d.checks(ctx)}).Diagnose(ctx)
}

// unavailable answers every port of the doctor with the database's
// opening error.
type unavailable struct{ err error }

func (u unavailable) SchemaVersion(context.Context) (int, error)         { return 0, u.err }
func (u unavailable) DatabaseNow(context.Context) (time.Time, error)     { return time.Time{}, u.err }
func (u unavailable) OldestQueuedAt(context.Context) (*time.Time, error) { return nil, u.err }
func (u unavailable) NextCronEvent(context.Context) (time.Time, bool, error) {
	return time.Time{}, false, u.err
}
func (u unavailable) FindConnections(context.Context, core.ConnectionFilter) ([]*core.Connection, int, error) {
	return nil, 0, u.err
}
func (u unavailable) Option(context.Context, string) (string, bool, error) { return "", false, u.err }

// databasePorts is what the checks read from the database.
type databasePorts interface {
	doctor.SchemaReader
	doctor.DatabaseClock
	doctor.QueueReader
	doctor.ConnectionLister
}

func (d *siteDoctor) checks(ctx context.Context) []doctor.Check {
	rt := d.rt
	prober, now := d.prober, d.now
	if prober == nil {
		c := httpprobe.Client{}
		// A service serving several sites (a fleet) finds this one by its
		// site key, as the bridge sends it.
		if key, err := siteKey(ctx, rt, d.db); err == nil && !rt.standalone() {
			c.ServiceBase, c.ServiceHeader = d.service, http.Header{api.SiteHeader: {key}}
		}
		prober = c
	}
	if now == nil {
		now = time.Now
	}
	var db databasePorts = unavailable{d.dbErr}
	var options wordpress.OptionReader = unavailable{d.dbErr}
	if d.db != nil {
		db = doctorDB{d.db, d.db.Schema(), d.db.Logs(), d.db.Connections()}
		if src, err := wordpress.NewGormSource(d.db.Gorm(), rt.prefix); err == nil {
			options = src
		} else {
			options = unavailable{err}
		}
	}
	var captureState func(context.Context) (core.CaptureState, error)
	if d.db != nil {
		if guard, err := rt.captureGuard(d.db, &app.Settings{Store: d.db.Settings(), Connections: d.db.Connections()}, nil, rt.log); err == nil {
			captureState = guard.State
		} else {
			captureState = func(context.Context) (core.CaptureState, error) { return core.CaptureState{}, err }
		}
	}
	// One cause once: when the database does not answer, the Database
	// check says so, and the checks that need it are not run.
	needsDB := func(c doctor.Check) doctor.Check { return c }
	if d.db == nil {
		needsDB = func(c doctor.Check) doctor.Check {
			return doctor.NotChecked(c, "the database does not answer (see “Database reachable and migrated”)")
		}
	}
	checks := []doctor.Check{doctor.Database(db, store.LatestVersion())}
	if rt.standalone() {
		return append(checks, doctor.Service(prober, d.service), doctor.Screens(prober, d.service),
			needsDB(doctor.Clock(db, now)), needsDB(doctor.Queue(db, now)), needsDB(doctor.Connections(db)), needsDB(doctor.Capture(captureState)))
	}
	var problems []string
	for _, w := range rt.wp.Warnings {
		problems = append(problems, fmt.Sprintf("line %d: %s", w.Line, w.Message))
	}
	home := d.siteOption(ctx, options, "WP_HOME", "home")
	siteURL := d.siteOption(ctx, options, "WP_SITEURL", "siteurl")
	environment := rt.wp.Str("WP_ENVIRONMENT_TYPE")
	if environment == "" {
		environment = os.Getenv("WP_ENVIRONMENT_TYPE")
	}
	cronOff, _ := rt.wp.Lookup("DISABLE_WP_CRON")
	// The site's URLs come from the database unless wp-config.php
	// defines them.
	needsURL := func(c doctor.Check, urls ...string) doctor.Check {
		for _, u := range urls {
			if u == "" {
				return needsDB(c)
			}
		}
		return c
	}
	return append(checks,
		doctor.WPConfig(rt.wpConfigPath, rt.prefix, problems),
		doctor.Bridge(d.bridge),
		doctor.Service(prober, d.service),
		needsURL(doctor.RESTThroughSite(prober, home), home),
		doctor.Screens(prober, d.service),
		needsURL(doctor.HTTPS(siteURL, environment), siteURL),
		needsDB(doctor.Clock(db, now)),
		needsDB(doctor.Cron(wordpress.CronSchedule{Options: options}, cronOff.Truthy(), now)),
		needsDB(doctor.Queue(db, now)),
		needsDB(doctor.Connections(db)),
		needsURL(doctor.SiteURLs(rt.consts.String("MAILSVC_PUBLIC_URL"), rt.consts.String("MAILSVC_ADMIN_URL"), home, siteURL), home, siteURL),
		needsDB(doctor.Capture(captureState)),
	)
}

// siteOption returns the constant (WP_HOME, WP_SITEURL) when wp-config.php
// defines it, as WordPress does, else the option; "" when unknown.
func (d *siteDoctor) siteOption(ctx context.Context, options wordpress.OptionReader, constant, option string) string {
	if v := d.rt.wp.Str(constant); v != "" {
		return strings.TrimRight(v, "/")
	}
	v, _, err := options.Option(ctx, option)
	if err != nil {
		return ""
	}
	return strings.TrimRight(v, "/")
}

// bridge reads the bridge installed in the site's mu-plugins: under
// contentDir, else MAILSVC_WP_PATH/wp-content, else wp-content beside
// wp-config.php.
func (d *siteDoctor) bridge(context.Context) (doctor.BridgeInfo, error) {
	dir := d.contentDir
	if dir == "" {
		root := d.rt.consts.String("MAILSVC_WP_PATH")
		if root == "" {
			root = filepath.Dir(d.rt.wpConfigPath)
		}
		dir = filepath.Join(root, "wp-content")
	}
	info := doctor.BridgeInfo{Path: bridge.Path(dir), Want: bridge.Version(bridge.Source)}
	src, found, err := bridge.Installed(dir)
	if err != nil || !found {
		return info, err
	}
	info.Found, info.Version = true, bridge.Version(src)
	info.Current, err = bridge.Current(dir)
	return info, err
}
