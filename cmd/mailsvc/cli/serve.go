package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/adapters/debuglog"
	api "github.com/mailsvc/mailsvc/adapters/http"
	adminui "github.com/mailsvc/mailsvc/adapters/http/admin"
	"github.com/mailsvc/mailsvc/adapters/metrics"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/app/health"
	"github.com/mailsvc/mailsvc/app/network"
	"github.com/mailsvc/mailsvc/core"
)

func serveCommand() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the REST API under /wp-json/mailsvc/v1",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), addr, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "listen address HOST:PORT (default $MAILSVC_ADDR or 127.0.0.1:8025)")
	return cmd
}

// newLogger returns the commands' logger, at MAILSVC_LOG_LEVEL (info
// when unset or not a level).
func newLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(os.Getenv("MAILSVC_LOG_LEVEL"))}))
}

// logLevel reads a MAILSVC_LOG_LEVEL value: debug, info, warn or error.
func logLevel(v string) slog.Level {
	var l slog.Level
	if v == "" || l.UnmarshalText([]byte(strings.TrimSpace(v))) != nil {
		return slog.LevelInfo
	}
	return l
}

// serve boots the service and serves until ctx is cancelled (SIGINT or
// SIGTERM), or until its tables are dropped under it (tablesGoneGuard),
// then shuts down gracefully.
func serve(ctx context.Context, addr string, out io.Writer) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	guard := newTablesGoneGuard(newLogger().Handler(), stop)
	log := slog.New(guard)
	rt, err := boot(ctx, log)
	if err != nil {
		return err
	}
	defer rt.db.Close()
	guard.confirmWith(func() bool {
		// A database dropped whole is an outage, not an uninstall.
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		exists, err := rt.db.Installation().DatabaseExists(cctx)
		return err == nil && exists
	})
	if addr == "" {
		addr = rt.consts.String("MAILSVC_ADDR")
	}
	auth, err := rt.authenticator(ctx)
	if err != nil {
		return err
	}
	cipher, err := rt.cipher()
	if err != nil {
		return err
	}
	hooks := &core.Hooks{}
	if err := rt.applySiteFilters(hooks, log); err != nil {
		return err
	}
	conns := &app.Connections{
		Store:                rt.db.Connections(),
		Cipher:               cipher,
		Pins:                 rt.consts.Pins,
		Hooks:                hooks,
		Settings:             rt.db.Settings(),
		SensitiveKeys:        splitList(rt.consts.String("MAILSVC_SENSITIVE_KEYS")),
		AllowCustomEndpoints: rt.consts.Bool(core.AllowCustomEndpointsConstant),
	}
	reportUndecryptable(ctx, log, conns)
	settings := &app.Settings{Store: rt.db.Settings(), Connections: rt.db.Connections()}

	// Debug logging (MAIL_SVC_DEBUG_*): channels write under the log root;
	// SMTP transcripts are stored there for the tools routes.
	debugOpts := debuglog.OptionsFrom(rt.consts, rt.dataDir, conns.ExtraSensitiveKeys)
	debugLog := debuglog.New(debugOpts)
	defer debugLog.Close()
	debugLog.RegisterMailer(hooks)
	hostHooks, hookRunner, err := rt.hostHooks(log)
	if err != nil {
		return err
	}
	if hostHooks != nil {
		debugLog.RegisterHostMailer(hooks, hostHooks)
	}
	queryLog, err := debugLog.InstallQueries(rt.db.Gorm())
	if err != nil {
		return err
	}
	defer queryLog.Flush()
	transcripts := debuglog.NewTranscripts(debugOpts.Root, 0, 0, debuglog.Redactor{Visibility: debugOpts.Visibility}, log)
	driverEnv := core.DriverEnv{HTTPClient: debugLog.HTTPClient(nil), Logger: log, Transcript: transcripts}
	// Credential checks always keep their SMTP transcript; deliveries keep
	// one only while the mailer debug channel is on, so the delivery path
	// writes no file per message.
	deliveryEnv := driverEnv
	if !debugOpts.Mailer {
		deliveryEnv.Transcript = nil
	}
	// OAuth: the flows, and the access tokens of OAuth connections that
	// every transport asks for (driverEnv.Tokens).
	public, admin, err := rt.siteURLs(ctx)
	if err != nil {
		return err
	}
	oauthSvc, err := rt.oauthService(conns, settings, cipher, hooks, nil, driverEnv, public, admin, log)
	if err != nil {
		return err
	}
	driverEnv.Tokens, deliveryEnv.Tokens = oauthSvc, oauthSvc
	oauthSvc.Env = driverEnv
	redaction, err := rt.logRedaction(hooks, log)
	if err != nil {
		return err
	}
	// The delivery service is built (delivery.New) once the add-ons have
	// joined: until then its options are gathered here.
	deliveryOpts := &delivery.Options{Logs: rt.db.Logs(), Connections: conns, Settings: settings, Hooks: hooks, Env: deliveryEnv, Logger: log,
		Redaction: redaction}
	// Concurrent enqueues (SMTP sessions, API calls) share one commit;
	// the workers' outcomes and next claims share one per group.
	deliveryOpts.Logs = store.NewGroupCommit(rt.db.Logs())
	deliveryOpts.Batches = rt.db.Logs()
	// The staging guard: the live site's fingerprint is recorded the
	// first time the service starts (a new install, or the first start
	// after an upgrade), before the workers run.
	// Its Wake is set once the delivery service is built.
	captureGuard, err := rt.captureGuard(rt.db, settings, nil, log)
	if err != nil {
		return err
	}
	if f, err := captureGuard.Record(ctx); err != nil {
		log.Warn("staging guard: cannot record the live site's fingerprint", "err", err)
	} else if st, err := captureGuard.State(ctx); err == nil && st.Capturing() {
		log.Warn("staging guard: mail is captured, not sent", "reason", st.Reason, "message", st.Message, "live", f.Address())
	}
	deliveryOpts.Capture = captureGuard
	metricsReg := metrics.New(queueMetrics{rt.db.Logs(), rt.db.Capture()}, log)
	deliveryOpts.Metrics = metricsReg
	if list, _, err := conns.List(ctx, 0, 0); err == nil {
		// Their series exist at 0 from the first scrape.
		for _, c := range list {
			metricsReg.AddConnection(c.ID, c.Driver)
		}
	}
	// Alerts: channels, and the dispatcher every part raises alerts through.
	// The mailer's Sender is set once the delivery service is built.
	alertMailer := &app.AlertMailer{Connections: conns}
	channels, dispatcher := rt.alertChannels(cipher, alertMailer, public, log)
	deliveryOpts.Alerts, oauthSvc.Alerts = dispatcher, dispatcher
	// The flood guard: a source sending far more than usual is held.
	floodGuard(rt.db, deliveryOpts, settings, dispatcher, channels.Site, log)
	// A multisite network: one queue for every site, per-site quotas.
	wpNetwork, err := rt.network()
	if err != nil {
		return err
	}
	var networkSvc *network.Service
	// connUse is which connections a site may use: nil (every one) on
	// a single site.
	var connUse core.ConnectionUse
	if wpNetwork != nil {
		networkSvc = rt.networkService(wpNetwork, dispatcher, log)
		deliveryOpts.SiteQuotas, deliveryOpts.SiteSettings = networkSvc, networkSvc
		connUse = networkSvc
	}
	deliveryOpts.ConnectionUse, settings.Use, channels.Use, alertMailer.Use = connUse, connUse, connUse, connUse
	deliveryOpts.Workers = int(rt.consts.Int("MAILSVC_WORKERS", delivery.DefaultWorkers))
	deliveryOpts.BatchSize = int(rt.consts.Int("MAILSVC_BATCH_SIZE", delivery.DefaultBatchSize))
	deliveryOpts.Lease = time.Duration(rt.consts.Int("MAILSVC_QUEUE_LEASE", int64(delivery.DefaultLease/time.Second))) * time.Second
	deliveryOpts.MaxInFlight = int(rt.consts.Int("MAILSVC_MAX_IN_FLIGHT", delivery.DefaultMaxInFlight))
	deliveryOpts.Replicas = rt.db.Leases()
	// Uncertain attempts through drivers without a lookup are resolved
	// by the provider events the Pro webhook receiver recorded: the Pro
	// module sets deliveryOpts.Events when it joins.
	deliveryOpts.LevelStore = rt.db.Settings()
	// Each connection's health from its real sends, beside the check's.
	sendHealth := &health.SendHealth{Store: rt.db.Settings(), SensitiveKeys: conns.ExtraSensitiveKeys, Logger: log}
	deliveryOpts.SendHealth = sendHealth
	// Add-ons (Pro) join before the delivery service is built: they may
	// set its options (delivery hooks), and give the routes they add.
	privacy := &app.Privacy{Store: rt.db.Privacy(), Transcripts: transcripts}
	moduleEnv := &ServeEnv{Constants: rt.consts, DB: rt.db, Cipher: cipher, Hooks: hooks, HostHooks: hostHooks, Privacy: privacy,
		Connections: conns, Delivery: deliveryOpts, OAuth: oauthSvc, HTTPClient: driverEnv.HTTPClient, SiteURL: public, Version: Version, Logger: log,
		ConnectionUse: connUse}
	extraRoutes, err := serveModules(ctx, moduleEnv)
	if err != nil {
		return err
	}
	deliverySvc := delivery.New(*deliveryOpts)
	captureGuard.Wake = deliverySvc.Wake
	alertMailer.Sender = deliverySvc
	reports := rt.summaryReports(conns, settings, deliverySvc, public)
	// The scheduler runs the modules' jobs (moduleEnv.Jobs) beside the
	// built-in ones.
	runner, err := rt.scheduler(settings, conns, oauthSvc, deliverySvc, dispatcher, reports, driverEnv, public, log, moduleEnv.Jobs)
	if err != nil {
		return err
	}
	// The workers and the scheduled purge stop (finishing the batches in
	// hand) before the database closes: this defer runs before rt.db.Close.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	workDone := make(chan struct{})
	go func() { defer close(workDone); deliverySvc.Run(workCtx) }()
	healthDone := make(chan struct{})
	go func() { defer close(healthDone); sendHealth.Run(workCtx) }()
	jobsDone := make(chan struct{})
	go func() { defer close(jobsDone); runner.Run(workCtx) }()
	alertsDone := make(chan struct{})
	go func() { defer close(alertsDone); _ = dispatcher.Run(workCtx) }()
	hooksDone := make(chan struct{})
	go func() {
		defer close(hooksDone)
		if hookRunner != nil {
			hookRunner.Run(workCtx)
		}
	}()
	defer func() {
		stopWork()
		<-workDone
		<-healthDone
		<-jobsDone
		<-alertsDone
		<-hooksDone
	}()
	// The SMTP submission listener (MAILSVC_SMTP_LISTEN) stops before the
	// workers and the database: this defer runs first.
	submission, err := startSubmission(rt, auth, deliverySvc, hooks, log)
	if err != nil {
		return err
	}
	if submission != nil {
		defer stopSubmission(submission, log)
	}

	proxies, err := parseCIDRs(rt.consts.String("MAILSVC_TRUSTED_PROXIES"))
	if err != nil {
		return fmt.Errorf("MAILSVC_TRUSTED_PROXIES: %w", err)
	}
	plugins, err := rt.plugins()
	if err != nil {
		return err
	}
	migrationSvc, err := rt.migrationEngine(conns, settings, redaction)
	if err != nil {
		return err
	}
	dash := rt.dashboard(conns, settings, deliverySvc, driverEnv, hooks)
	dash.Capture = captureGuard
	dash.Retrying, dash.SendHealth = rt.db.Logs(), sendHealth
	dash.Use = connUse
	srv := &api.Server{
		Auth:        auth,
		Connections: conns,
		Settings:    settings,
		Logs: &app.Logs{Store: rt.db.Logs(), Requeue: deliverySvc, Enqueuer: deliverySvc, Settings: settings, Redaction: redaction, Use: connUse,
			Held: rt.db.Flood(), HeldWake: deliverySvc.Wake},
		Actions: &app.ConnectionActions{Connections: conns, Settings: settings, Sender: deliverySvc, Env: driverEnv, Hooks: hooks, HostHooks: hostHooks, Site: rt.site(), Use: connUse,
			APIDebug: func() bool { return debuglog.APIDebugResponseEnabled(rt.consts, hooks) }},
		Transcripts:    transcripts,
		Hooks:          hooks,
		Logger:         log,
		Capability:     rt.consts.String("MAILSVC_REST_CAPABILITY"),
		TrustedProxies: proxies,
		Plugins:        plugins,
		Notifications:  channels,
		OAuth:          oauthSvc,
		Modules:        extraRoutes,
		Dashboard:      dash,
		SiteFormat:     rt.site(),
		Privacy:        privacy,
		EmailControls:  &app.EmailControls{Store: rt.db.Settings(), Counts: rt.db.EmailControls()},
		Reports:        reports,
		Capture:        captureGuard,
		Probes:         rt.probes(metricsReg),
		Admin:          adminui.NewHandler(rt.screensOptions(admin, moduleEnv.HiddenTabs, auth)),
		Migration:      migrationSvc,
	}
	if wpNetwork != nil {
		srv.Sites, srv.Network = wpNetwork, networkSvc
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	certFile, keyFile := rt.consts.String("MAILSVC_TLS_CERT"), rt.consts.String("MAILSVC_TLS_KEY")
	scheme := "http"
	if certFile != "" {
		scheme = "https"
	}
	base := fmt.Sprintf("%s://%s%s", scheme, ln.Addr(), api.Namespace)
	srv.Doctor = &siteDoctor{rt: rt, db: rt.db, contentDir: (&siteFlags{}).resolveContentDir(rt.wp), service: serviceURL(rt, ln.Addr().String())}
	if rt.standalone() {
		if err := rt.firstRunAdmin(ctx, out, base); err != nil {
			ln.Close()
			return err
		}
	}
	fmt.Fprintf(out, "mailsvc is serving %s\n", base)
	fmt.Fprintln(out, screensBanner(rt.standalone(), admin, fmt.Sprintf("%s://%s%s", scheme, ln.Addr(), adminui.Prefix)))
	if rt.standalone() {
		fmt.Fprintln(out, "Add a login with: mailsvc users add NAME --role administrator")
	}
	hs := &http.Server{
		Handler:           debugLog.Middleware(srv.Handler()),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() {
		if certFile != "" {
			errc <- hs.ServeTLS(ln, certFile, keyFile)
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	log.Info("mailsvc serving", "version", Version, "api", base, "standalone", rt.standalone(), "database", rt.db.Dialect())
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// screensBanner is the line of the banner that says where the screens
// are: beside WordPress its owner opens them in wp-admin → Mail (admin,
// the page's address), standalone at the service's own screens.
func screensBanner(standalone bool, admin, screens string) string {
	if standalone || admin == "" {
		return "The screens are at " + screens
	}
	return "Open wp-admin → Mail (" + admin + ")"
}

// reportUndecryptable logs, at boot, every connection whose stored settings
// cannot be used: secrets that cannot be decrypted with the current key,
// or an endpoint off the provider's hosts (core.Connection.SettingsError).
func reportUndecryptable(ctx context.Context, log *slog.Logger, conns *app.Connections) {
	list, _, err := conns.List(ctx, 0, 0)
	if err != nil {
		log.Error("could not check stored connections", "err", err)
		return
	}
	for _, c := range list {
		if c.SettingsError != "" {
			log.Warn("connection settings unusable", "connection_id", c.ID, "name", c.Name, "problem", c.SettingsError)
		}
	}
}

// splitList splits a comma-separated configuration value.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseCIDRs parses a comma-separated list of IP addresses and CIDRs.
func parseCIDRs(s string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, p := range splitList(s) {
		if !strings.Contains(p, "/") {
			if ip := net.ParseIP(p); ip != nil && ip.To4() != nil {
				p += "/32"
			} else {
				p += "/128"
			}
		}
		_, n, err := net.ParseCIDR(p)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR", p)
		}
		out = append(out, n)
	}
	return out, nil
}
