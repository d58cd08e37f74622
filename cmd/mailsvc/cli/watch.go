package cli

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/adapters/crypto"
	adminui "github.com/mailsvc/mailsvc/adapters/http/admin"
	"github.com/mailsvc/mailsvc/adapters/notify/netguard"
	"github.com/mailsvc/mailsvc/adapters/notify/telegram"
	oauthclient "github.com/mailsvc/mailsvc/adapters/oauth"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/alerts"
	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/app/health"
	"github.com/mailsvc/mailsvc/app/oauth"
	"github.com/mailsvc/mailsvc/app/report"
	"github.com/mailsvc/mailsvc/app/scheduler"
	"github.com/mailsvc/mailsvc/core"

	// Every built-in alert channel type registers itself.
	_ "github.com/mailsvc/mailsvc/adapters/notify/all"
)

// webhookTimeout bounds one request of an alert channel.
const webhookTimeout = 15 * time.Second

// jobRollupCompact names the scheduler job that folds the shards of old
// roll-up counters (store.CompactRollups).
const jobRollupCompact = "rollup_compact"

// jobSearchIndex names the scheduler job that fills the log search's
// address dictionary in the background (store.SearchIndexService.RunSearchIndex):
// the addresses of the logs taken in since its last run (and of those
// from before the dictionary), the pieces of addresses entered without
// them, and the sweep after a purge.
const jobSearchIndex = "search_index"

// jobHostHookPrune names the scheduler job that deletes host hook outbox
// rows older than store.HostHookRetention (the bridge's cron prunes them
// too; this keeps the table small when PHP never runs).
const jobHostHookPrune = "host_hook_prune"

// siteURLs returns the site's public base URL (MAILSVC_PUBLIC_URL, else
// WordPress's home option) and the admin page OAuth callbacks return to
// (MAILSVC_ADMIN_URL, else WordPress's siteurl + /wp-admin/admin.php?page=mailsvc).
// Standalone, both may stay "": the service then uses the address a
// request came to.
func (rt *runtime) siteURLs(ctx context.Context) (public, admin string, err error) {
	public = rt.consts.String("MAILSVC_PUBLIC_URL")
	admin = rt.consts.String("MAILSVC_ADMIN_URL")
	if rt.standalone() {
		return public, admin, nil
	}
	src, err := wordpress.NewGormSource(rt.db.Gorm(), rt.prefix)
	if err != nil {
		return "", "", err
	}
	if public == "" {
		if home, ok, err := src.Option(ctx, "home"); err != nil {
			return "", "", fmt.Errorf("read the home option: %w", err)
		} else if ok {
			public = strings.TrimRight(home, "/")
		}
	}
	if admin == "" {
		if site, ok, err := src.Option(ctx, "siteurl"); err != nil {
			return "", "", fmt.Errorf("read the siteurl option: %w", err)
		} else if ok {
			admin = strings.TrimRight(site, "/") + "/wp-admin/admin.php?page=mailsvc"
		}
	}
	return public, admin, nil
}

// screenFramers returns the pages allowed to frame the admin screens
// besides the service itself: beside WordPress, wp-admin's Mail page
// (admin, from siteURLs); standalone, none.
func (rt *runtime) screenFramers(admin string) []string {
	if rt.standalone() || admin == "" {
		return nil
	}
	return []string{admin}
}

// screensOptions sets up the admin screens: framed by the site's wp-admin,
// and, beside WordPress, the page under the bridge's screens base when the
// bridge signed it with the key derived from the site's salts (standalone
// there is no bridge and no key: the header is ignored).
func (rt *runtime) screensOptions(admin string, hidden []string, auth *wordpress.Authenticator) adminui.Options {
	opts := adminui.Options{Framers: rt.screenFramers(admin), HiddenTabs: hidden}
	if !rt.standalone() {
		opts.BaseKey = wordpress.ScreensBaseKeyFunc(auth.Salter())
	}
	return opts
}

// alertChannels builds the alert channel service and its dispatcher.
// mailer sends the email channel's messages.
func (rt *runtime) alertChannels(cipher *crypto.Cipher, mailer core.AlertMailer, site string, log *slog.Logger) (*alerts.Channels, *alerts.Dispatcher) {
	allowPrivate := rt.consts.Bool("MAILSVC_ALLOW_PRIVATE_WEBHOOKS")
	telegramAPI := rt.consts.String("MAILSVC_TELEGRAM_API_URL")
	guarded := netguard.NewClient(allowPrivate, webhookTimeout)
	channels := &alerts.Channels{
		Store:    rt.db.Notifications(),
		Cipher:   cipher,
		CheckURL: func(u string) error { return netguard.CheckURL(u, allowPrivate) },
		Env: core.NotifierEnv{HTTPClient: guarded, Mailer: mailer, TelegramAPI: telegramAPI,
			TwilioAPI: rt.consts.String("MAILSVC_TWILIO_API_URL")},
		DetectChats: func(ctx context.Context, botToken string) ([]alerts.Chat, error) {
			// The Bot API's address is the operator's, not a user's: no guard.
			found, err := telegram.DetectChats(ctx, nil, telegramAPI, botToken)
			if err != nil {
				return nil, err
			}
			out := make([]alerts.Chat, len(found))
			for i, c := range found {
				out[i] = alerts.Chat{ID: c.ID, Type: c.Type, Title: c.Title, Username: c.Username}
			}
			return out, nil
		},
		Site:   site,
		Logger: log,
	}
	dispatcher := &alerts.Dispatcher{
		Channels:   channels,
		Leases:     rt.db.Leases(),
		History:    rt.db.AlertHistory(),
		Thresholds: thresholdStore{rt.db.Logs(), rt.db.Notifications()},
		Logger:     log,
		FoldWindow: time.Duration(rt.consts.Int("MAILSVC_ALERT_FOLD_MINUTES", 30)) * time.Minute,
	}
	if dispatcher.FoldWindow == 0 {
		dispatcher.FoldWindow = time.Nanosecond // 0 minutes: fold nothing
	}
	return channels, dispatcher
}

// oauthService builds the OAuth flows and token service.
func (rt *runtime) oauthService(conns *app.Connections, settings *app.Settings, cipher *crypto.Cipher, hooks *core.Hooks,
	alerter core.Alerter, env core.DriverEnv, public, admin string, log *slog.Logger) (*oauth.Service, error) {
	svc := &oauth.Service{
		Connections:       conns,
		State:             rt.db.Connections(),
		Cipher:            cipher,
		Client:            &oauthclient.Client{HTTPClient: env.HTTPClient},
		States:            rt.db.OAuth(),
		History:           rt.db.OAuth(),
		Alerts:            alerter,
		Leases:            rt.db.Leases(),
		Settings:          settings,
		Hooks:             hooks,
		Env:               env,
		Logger:            log,
		PublicURL:         public,
		AdminURL:          admin,
		RelayURL:          rt.consts.String("MAILSVC_OAUTH_RELAY_URL"),
		UseLocalRedirects: rt.consts.Bool("MAILSVC_USE_LOCAL_OAUTH_REDIRECTS"),
		RedirectURIs: map[string]string{
			core.ProviderGoogle:    rt.consts.String("MAILSVC_GOOGLE_OAUTH_REDIRECT_URI"),
			core.ProviderMicrosoft: rt.consts.String("MAILSVC_MICROSOFT_OAUTH_REDIRECT_URI"),
			core.ProviderZoho:      rt.consts.String("MAILSVC_ZOHO_OAUTH_REDIRECT_URI"),
		},
	}
	if !rt.standalone() {
		src, err := wordpress.NewGormSource(rt.db.Gorm(), rt.prefix)
		if err != nil {
			return nil, err
		}
		svc.RedirectOverride = (&wordpress.OAuthRedirects{Options: src}).RedirectURI
	}
	return svc, nil
}

// scheduler builds the job runner of `mailsvc serve`: OAuth refresh,
// health checks, the retention purge, the queue-stalled watch and the
// roll-up compaction, then the jobs the modules added (ServeEnv.Jobs),
// each run once per interval across every replica of the database. A
// module's job without a name, an interval or a run, or named as another
// job, is an error.
func (rt *runtime) scheduler(settings *app.Settings, conns *app.Connections, oauthSvc *oauth.Service, deliverySvc *delivery.Service,
	alerter core.Alerter, reports *report.Service, env core.DriverEnv, site string, log *slog.Logger, moduleJobs []scheduler.Job) (*scheduler.Runner, error) {
	minute := time.Duration(rt.consts.Int("MAILSVC_SCHEDULER_MINUTE", 60)) * time.Second
	checker := &health.Checker{
		Connections:   conns,
		State:         rt.db.Connections(),
		Env:           env,
		Alerts:        alerter,
		Logger:        log,
		SlowThreshold: time.Duration(rt.consts.Int("MAILSVC_HEALTH_SLOW_MS", 5000)) * time.Millisecond,
		SensitiveKeys: conns.ExtraSensitiveKeys,
		Site:          site,
	}
	watch := &health.QueueWatch{
		Logs:   rt.db.Logs(),
		Alerts: alerter,
		After:  time.Duration(rt.consts.Int("MAILSVC_QUEUE_STALLED_MINUTES", 15)) * minute,
		Site:   site,
	}
	refreshEvery := scheduler.FromSettings(settings, scheduler.OAuthRefreshInterval)
	runner := &scheduler.Runner{
		Store:  rt.db.Jobs(),
		Logger: log,
		Minute: minute,
		Tick:   min(scheduler.DefaultTick, minute/4),
		Jobs: []scheduler.Job{
			{Name: scheduler.JobOAuthRefresh, Every: refreshEvery, Run: func(ctx context.Context) error {
				interval, _, err := refreshEvery(ctx)
				if err != nil {
					return err
				}
				_, err = oauthSvc.RefreshDue(ctx, interval*minute/time.Minute)
				return err
			}},
			{Name: scheduler.JobHealthCheck, Every: scheduler.FromSettings(settings, scheduler.HealthCheckInterval), Run: checker.CheckAll},
			{Name: scheduler.JobLogPurge, Every: scheduler.Fixed(time.Hour), Run: func(ctx context.Context) error {
				// The alert history (the summary report's "alerts raised")
				// keeps a year and a day.
				if _, err := rt.db.AlertHistory().PruneAlerts(ctx, time.Now().AddDate(-1, 0, -1)); err != nil {
					log.Warn("prune the alert history", "err", err)
				}
				// The failure marks the alert thresholds count keep the
				// longest threshold window.
				if _, err := rt.db.Logs().PruneFailureMarks(ctx, time.Now().Add(-store.FailureMarkRetention)); err != nil {
					log.Warn("prune the failure marks", "err", err)
				}
				// The summary report keeps a record per period sent; 400
				// days of them.
				if _, err := reports.PruneRecords(ctx); err != nil {
					log.Warn("prune the summary report records", "err", err)
				}
				_, err := deliverySvc.Purge(ctx)
				return err
			}},
			{Name: scheduler.JobQueueStalled, Every: scheduler.Fixed(time.Minute), Run: func(ctx context.Context) error {
				_, err := watch.Check(ctx)
				return err
			}},
			{Name: jobHostHookPrune, Every: scheduler.Fixed(time.Hour), Run: func(ctx context.Context) error {
				_, err := rt.db.HostHooks().PruneHostHooks(ctx, time.Now().Add(-store.HostHookRetention))
				return err
			}},
			// The summary report: every minute, a run queues the report of
			// a period that has ended, once across the replicas.
			{Name: report.JobName, Every: reports.Every, Run: func(ctx context.Context) error {
				_, err := reports.RunScheduled(ctx)
				return err
			}},
			{Name: jobSearchIndex, Every: scheduler.Fixed(time.Minute), Run: func(ctx context.Context) error {
				n, err := rt.db.SearchIndex().RunSearchIndex(ctx)
				if n > 0 {
					log.Debug("filled the log search's address index", "rows", n)
				}
				return err
			}},
			{Name: jobRollupCompact, Every: scheduler.Fixed(15 * time.Minute), Run: func(ctx context.Context) error {
				done, err := rt.db.Rollups().CompactRollups(ctx)
				if done.RowsRemoved > 0 {
					log.Debug("compacted roll-up counters", "keys", done.Keys, "rows_removed", done.RowsRemoved)
				}
				return err
			}},
		},
	}
	jobs, err := withModuleJobs(runner.Jobs, moduleJobs)
	if err != nil {
		return nil, err
	}
	runner.Jobs = jobs
	return runner, nil
}

// withModuleJobs returns the built-in jobs followed by the modules' jobs,
// checking that each module job is complete and has a name of its own
// (the name is its row in the job store).
func withModuleJobs(builtin, added []scheduler.Job) ([]scheduler.Job, error) {
	out := slices.Clone(builtin)
	for _, j := range added {
		if j.Name == "" || j.Every == nil || j.Run == nil {
			return nil, fmt.Errorf("a module's scheduled job %q needs a Name, Every and Run", j.Name)
		}
		if slices.ContainsFunc(out, func(o scheduler.Job) bool { return o.Name == j.Name }) {
			return nil, fmt.Errorf("a module's scheduled job is named %q, as another job is", j.Name)
		}
		out = append(out, j)
	}
	return out, nil
}
