package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/mailsvc/mailsvc/adapters/debuglog"
	api "github.com/mailsvc/mailsvc/adapters/http"
	adminui "github.com/mailsvc/mailsvc/adapters/http/admin"
	"github.com/mailsvc/mailsvc/adapters/metrics"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/app/health"
	"github.com/mailsvc/mailsvc/app/network"
	"github.com/mailsvc/mailsvc/core"
)

// siteService is one site's service, built by buildSite over the site's
// runtime: its REST API and screens, its delivery service and workers,
// its scheduler, its alerts, and its SMTP listener when the site's
// configuration asks for one. Nothing of it is shared with another site.
type siteService struct {
	rt *runtime
	// handler serves the site's REST API, screens and probes.
	handler http.Handler
	// metrics is the site's registry (labelled by site in a fleet).
	metrics *metrics.Registry
	// public is the site's home URL, admin its screens' address in
	// wp-admin ("" when unknown).
	public, admin string
	// dashboard reads what needs the site owner's attention, for the
	// operator's view.
	dashboard *dashboard.Service
	// closers stop what the site runs, in the order they were started;
	// stop runs them backwards.
	closers []func()
}

// stop stops the site's listener, workers and jobs (the batches in hand
// are finished) and releases what it holds; the database is closed by
// its owner.
func (s *siteService) stop() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// siteBuild is how buildSite makes the parts a process shares between
// its sites.
type siteBuild struct {
	// serviceAddr is the address the process listens on, for the doctor.
	serviceAddr string
	// newMetrics makes the site's metrics registry: metrics.New for a
	// site served alone, a fleet's labelled registry otherwise.
	newMetrics func(metrics.QueueReader, *slog.Logger) *metrics.Registry
	// operatorEmail and operatorWebhook are MAILSVC_FLEET_ALERT_EMAIL and
	// MAILSVC_FLEET_ALERT_WEBHOOK: where every alert of the site goes as
	// well, to the fleet's operator ("" none).
	operatorEmail, operatorWebhook string
}

// operatorChannels returns the fleet operator's alert channels, for
// every event: an email channel to email through the site's default
// connection (its fallback connection when the alert is about the
// default one; none when the site has no other), and a JSON webhook to
// webhook. Either may be "".
func operatorChannels(email, webhook string, settings *app.Settings) func(context.Context, core.Alert) []*core.NotificationChannel {
	return func(ctx context.Context, a core.Alert) []*core.NotificationChannel {
		var out []*core.NotificationChannel
		if webhook != "" {
			out = append(out, &core.NotificationChannel{Name: "fleet operator", Type: "webhook", IsActive: true, Settings: core.Settings{"url": webhook}})
		}
		if email == "" {
			return out
		}
		g, err := settings.General(ctx)
		if err != nil {
			return out
		}
		conn := g.DefaultConnectionID
		if conn == a.ConnectionID {
			conn = g.FallbackConnectionID
		}
		if conn != 0 && conn != a.ConnectionID {
			out = append(out, &core.NotificationChannel{Name: "fleet operator", Type: "email", IsActive: true,
				Settings: core.Settings{"to": email, "connection_id": conn}})
		}
		return out
	}
}

// buildSite builds the service of the site rt was booted for and starts
// its workers, jobs and SMTP listener. On error, whatever it started is
// stopped again.
func buildSite(ctx context.Context, rt *runtime, b siteBuild) (_ *siteService, err error) {
	log := rt.log
	site := &siteService{rt: rt}
	defer func() {
		if err != nil {
			site.stop()
		}
	}()
	if b.newMetrics == nil {
		b.newMetrics = func(q metrics.QueueReader, l *slog.Logger) *metrics.Registry { return metrics.New(q, l) }
	}
	auth, err := rt.authenticator(ctx)
	if err != nil {
		return nil, err
	}
	cipher, err := rt.cipher()
	if err != nil {
		return nil, err
	}
	hooks := &core.Hooks{}
	if err := rt.applySiteFilters(hooks, log); err != nil {
		return nil, err
	}
	conns := &app.Connections{
		Store:                rt.db.Connections(),
		Cipher:               cipher,
		Pins:                 rt.consts.Pins,
		Hooks:                hooks,
		Settings:             rt.db.Settings(),
		SensitiveKeys:        SplitList(rt.consts.String("MAILSVC_SENSITIVE_KEYS")),
		AllowCustomEndpoints: rt.consts.Bool(core.AllowCustomEndpointsConstant),
	}
	reportUndecryptable(ctx, log, conns)
	settings := &app.Settings{Store: rt.db.Settings(), Connections: rt.db.Connections()}

	// Debug logging (MAIL_SVC_DEBUG_*): channels write under the log root;
	// SMTP transcripts are stored there for the tools routes.
	debugOpts := debuglog.OptionsFrom(rt.consts, rt.dataDir, conns.ExtraSensitiveKeys)
	debugLog := debuglog.New(debugOpts)
	site.closers = append(site.closers, func() { debugLog.Close() })
	debugLog.RegisterMailer(hooks)
	hostHooks, hookRunner, err := rt.hostHooks(log)
	if err != nil {
		return nil, err
	}
	if hostHooks != nil {
		debugLog.RegisterHostMailer(hooks, hostHooks)
	}
	queryLog, err := debugLog.InstallQueries(rt.db.Gorm())
	if err != nil {
		return nil, err
	}
	site.closers = append(site.closers, func() { queryLog.Flush() })
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
		return nil, err
	}
	site.public, site.admin = public, admin
	oauthSvc, err := rt.oauthService(conns, settings, cipher, hooks, nil, driverEnv, public, admin, log)
	if err != nil {
		return nil, err
	}
	driverEnv.Tokens, deliveryEnv.Tokens = oauthSvc, oauthSvc
	oauthSvc.Env = driverEnv
	redaction, err := rt.logRedaction(hooks, log)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	if f, err := captureGuard.Record(ctx); err != nil {
		log.Warn("staging guard: cannot record the live site's fingerprint", "err", err)
	} else if st, err := captureGuard.State(ctx); err == nil && st.Capturing() {
		log.Warn("staging guard: mail is captured, not sent", "reason", st.Reason, "message", st.Message, "live", f.Address())
	}
	deliveryOpts.Capture = captureGuard
	metricsReg := b.newMetrics(queueMetrics{rt.db.Logs(), rt.db.Capture()}, log)
	site.metrics = metricsReg
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
	if b.operatorEmail != "" || b.operatorWebhook != "" {
		dispatcher.Extra = operatorChannels(b.operatorEmail, b.operatorWebhook, settings)
	}
	deliveryOpts.Alerts, oauthSvc.Alerts = dispatcher, dispatcher
	// The flood guard: a source sending far more than usual is held.
	floodGuard(rt.db, deliveryOpts, settings, dispatcher, channels.Site, log)
	// A multisite network: one queue for every site, per-site quotas.
	wpNetwork, err := rt.network()
	if err != nil {
		return nil, err
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
	// In a fleet every site has its own workers and its own cap on sends
	// in flight (docs/fleet.md): a burst at one site never takes another
	// site's share.
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
		return nil, err
	}
	deliverySvc := delivery.New(*deliveryOpts)
	captureGuard.Wake = deliverySvc.Wake
	alertMailer.Sender = deliverySvc
	reports := rt.summaryReports(conns, settings, deliverySvc, public)
	// The scheduler runs the modules' jobs (moduleEnv.Jobs) beside the
	// built-in ones.
	runner, err := rt.scheduler(settings, conns, oauthSvc, deliverySvc, dispatcher, reports, driverEnv, public, log, moduleEnv.Jobs)
	if err != nil {
		return nil, err
	}
	// The workers and the scheduled purge stop (finishing the batches in
	// hand) before the database closes.
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
	site.closers = append(site.closers, func() {
		stopWork()
		<-workDone
		<-healthDone
		<-jobsDone
		<-alertsDone
		<-hooksDone
	})
	// The SMTP submission listener (MAILSVC_SMTP_LISTEN) stops before the
	// workers and the database.
	submission, err := startSubmission(rt, auth, deliverySvc, hooks, log)
	if err != nil {
		return nil, err
	}
	if submission != nil {
		site.closers = append(site.closers, func() { stopSubmission(submission, log) })
	}

	proxies, err := parseCIDRs(rt.consts.String("MAILSVC_TRUSTED_PROXIES"))
	if err != nil {
		return nil, fmt.Errorf("MAILSVC_TRUSTED_PROXIES: %w", err)
	}
	plugins, err := rt.plugins()
	if err != nil {
		return nil, err
	}
	migrationSvc, err := rt.migrationEngine(conns, settings, redaction)
	if err != nil {
		return nil, err
	}
	dash := rt.dashboard(conns, settings, deliverySvc, driverEnv, hooks)
	dash.Capture = captureGuard
	dash.Retrying, dash.SendHealth = rt.db.Logs(), sendHealth
	dash.Use = connUse
	site.dashboard = dash
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
	srv.Doctor = &siteDoctor{rt: rt, db: rt.db, contentDir: (&siteFlags{}).resolveContentDir(rt.wp), service: serviceURL(rt, b.serviceAddr)}
	site.handler = debugLog.Middleware(srv.Handler())
	return site, nil
}
