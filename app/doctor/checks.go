package doctor

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// SchemaReader reads the schema version recorded in the database: 0 when
// the service's tables are not there.
type SchemaReader interface {
	SchemaVersion(ctx context.Context) (int, error)
}

// Database checks that the database answers and is migrated to latest
// (the version this build needs). Critical.
func Database(db SchemaReader, latest int) Check {
	return Check{Name: "database", Title: "Database reachable and migrated", Critical: true, Run: func(ctx context.Context) Finding {
		if db == nil {
			return Finding{Verdict: Error, Message: "The database could not be opened.",
				Fix: "Check the database settings: DB_NAME, DB_USER, DB_PASSWORD and DB_HOST in wp-config.php, or MAILSVC_DB; the server must accept connections from this host."}
		}
		v, err := db.SchemaVersion(ctx)
		switch {
		case err != nil:
			return Finding{Verdict: Error, Message: "The database does not answer: " + err.Error(),
				Fix: "Check that the database server runs and that the credentials in wp-config.php (or MAILSVC_DB) are right."}
		case v == 0:
			return Finding{Verdict: Error, Message: "The service's tables are not installed in this database.",
				Fix: "Start the service once (systemctl start mailsvc, or mailsvc serve): it creates its tables."}
		case v < latest:
			return Finding{Verdict: Error, Message: fmt.Sprintf("The schema is at version %d; this build needs %d.", v, latest),
				Fix: "Restart the service with this build: it migrates the tables when it starts."}
		case v > latest:
			return Finding{Verdict: Warning, Message: fmt.Sprintf("The schema is at version %d, newer than this build knows (%d).", v, latest),
				Fix: "Run the same mailsvc version as the service that migrated the database."}
		}
		return okf("Reachable; schema version %d (current).", v)
	}}
}

// BridgeInfo describes the wp_mail() bridge installed in mu-plugins.
type BridgeInfo struct {
	Path  string
	Found bool
	// Version is the installed file's Version header; Want this build's.
	Version, Want string
	// Current is true when the installed loader and every file of its
	// folder are byte for byte this build's.
	Current bool
}

// Bridge checks that the bridge is installed and is this build's.
// Critical: without it wp_mail() does not queue to the service.
func Bridge(read func(ctx context.Context) (BridgeInfo, error)) Check {
	return Check{Name: "bridge", Title: "wp_mail() bridge installed and matching the service", Critical: true, Run: func(ctx context.Context) Finding {
		b, err := read(ctx)
		switch {
		case err != nil:
			return Finding{Verdict: Error, Message: "The bridge could not be read: " + err.Error(),
				Fix: "Give the user that runs mailsvc read access to the site's mu-plugins directory."}
		case !b.Found:
			return Finding{Verdict: Error, Message: "No bridge at " + b.Path + ": WordPress sends mail itself, not through the service.",
				Fix: "Install it: mailsvc wp install --wp-path <the site's directory>."}
		case b.Version != b.Want:
			return Finding{Verdict: Error, Message: fmt.Sprintf("The bridge at %s is version %s; this service ships %s.", b.Path, b.Version, b.Want),
				Fix: "Update it: mailsvc wp install --wp-path <the site's directory>."}
		case !b.Current:
			return Finding{Verdict: Warning, Message: fmt.Sprintf("The bridge at %s says version %s but differs from this build's copy.", b.Path, b.Version),
				Fix: "Reinstall it: mailsvc wp install --wp-path <the site's directory>."}
		}
		return okf("Version %s at %s.", b.Version, b.Path)
	}}
}

// WPConfig reports the wp-config.php read and the table prefix in use;
// problems are the parts of the file that could not be read.
func WPConfig(path, prefix string, problems []string) Check {
	return Check{Name: "wp_config", Title: "wp-config.php read and the table prefix", Run: func(context.Context) Finding {
		if len(problems) > 0 {
			return Finding{Verdict: Warning, Message: fmt.Sprintf("Read %s (table prefix %s), but not all of it: %s.", path, prefix, strings.Join(problems, "; ")),
				Fix: "Use literal values (strings, numbers, getenv()) for the constants mailsvc needs, or set them in the environment instead."}
		}
		return okf("Read %s; table prefix %s.", path, prefix)
	}}
}

// Prober makes unauthenticated GET requests.
type Prober interface {
	// Get fetches url without credentials and returns the status and the
	// "code" member of a JSON error body ("" when there is none).
	Get(ctx context.Context, url string) (status int, code string, err error)
}

// probeRoute is a route of the service that answers 401
// rest_not_logged_in to a request without credentials.
const probeRoute = "/mailsvc/v1/settings"

// answersAsService reports whether a probe got the service's own answer
// to an unauthenticated request, and describes what it got otherwise.
func answersAsService(status int, code string, err error) (bool, string) {
	switch {
	case err != nil:
		return false, err.Error()
	case status == 401 && code == core.EUNAUTHORIZED:
		return true, ""
	case code != "":
		return false, fmt.Sprintf("HTTP %d %s", status, code)
	}
	return false, fmt.Sprintf("HTTP %d", status)
}

// Service checks that the service answers on its own address (base, e.g.
// http://127.0.0.1:8025). Critical.
func Service(p Prober, base string) Check {
	return Check{Name: "service", Title: "Service running", Critical: true, Run: func(ctx context.Context) Finding {
		u := strings.TrimRight(base, "/") + "/wp-json" + probeRoute
		if ok, got := answersAsService(p.Get(ctx, u)); !ok {
			return Finding{Verdict: Error, Message: fmt.Sprintf("The service does not answer at %s (%s); mail waits in the queue.", base, got),
				Fix: "Start it: systemctl start mailsvc (or mailsvc serve), and check that it listens where the bridge sends: MAILSVC_SERVICE_URL of wp-config.php (default http://127.0.0.1:8025) and MAILSVC_ADDR."}
		}
		return okf("Answering at %s.", base)
	}}
}

// RESTThroughSite checks that the site's own URL (home) routes the
// service's REST namespace to it in both URL forms: /wp-json/mailsvc/v1/
// (pretty permalinks) and /?rest_route=/mailsvc/v1/ (plain). An
// unauthenticated request must get the service's 401 rest_not_logged_in.
// Critical.
func RESTThroughSite(p Prober, home string) Check {
	return Check{Name: "rest_through_site", Title: "REST API reachable through the site's URL", Critical: true, Needs: "service", Run: func(ctx context.Context) Finding {
		if home == "" {
			return Finding{Verdict: Error, Message: "The site's URL (the home option) is unknown.",
				Fix: "Check that the home option is set in WordPress (Settings → General)."}
		}
		home = strings.TrimRight(home, "/")
		var failed []string
		for _, u := range []string{home + "/wp-json" + probeRoute, home + "/?rest_route=" + probeRoute} {
			if ok, got := answersAsService(p.Get(ctx, u)); !ok {
				failed = append(failed, fmt.Sprintf("%s answered %s", u, got))
			}
		}
		if len(failed) > 0 {
			return Finding{Verdict: Error, Message: strings.Join(failed, "; ") + "; want 401 rest_not_logged_in from the service.",
				Fix: "Install the bridge (mailsvc wp install), which forwards the mailsvc/v1 routes to the service, or set up the proxy of docs/operations.md; check that the service runs."}
		}
		return okf("Both %s/wp-json/mailsvc/v1/ and %s/?rest_route=/mailsvc/v1/ reach the service.", home, home)
	}}
}

// Screens checks that the admin screens are served (base is the
// service's address). Critical.
func Screens(p Prober, base string) Check {
	return Check{Name: "screens", Title: "Admin screens reachable", Critical: true, Needs: "service", Run: func(ctx context.Context) Finding {
		u := strings.TrimRight(base, "/") + "/admin/"
		status, _, err := p.Get(ctx, u)
		if err != nil || status != 200 {
			got := fmt.Sprintf("HTTP %d", status)
			if err != nil {
				got = err.Error()
			}
			return Finding{Verdict: Error, Message: fmt.Sprintf("%s answered %s.", u, got),
				Fix: "Start the service (systemctl start mailsvc); the screens are served by it at /admin/."}
		}
		return okf("Served at %s.", u)
	}}
}

// HTTPS checks that WordPress accepts application passwords: it does
// over HTTPS, or on any URL when WP_ENVIRONMENT_TYPE is local.
func HTTPS(siteURL, environmentType string) Check {
	return Check{Name: "https", Title: "HTTPS for application passwords", Run: func(context.Context) Finding {
		switch {
		case strings.HasPrefix(strings.ToLower(siteURL), "https://"):
			return okf("The site is served over HTTPS (%s).", siteURL)
		case environmentType == "local":
			return okf("WP_ENVIRONMENT_TYPE is local: WordPress allows application passwords over HTTP.")
		}
		return Finding{Verdict: Warning, Message: fmt.Sprintf("The site's URL %s is not HTTPS: WordPress refuses application passwords over plain HTTP.", siteURL),
			Fix: "Serve the site over HTTPS (and set siteurl and home to https://), or on a development site define WP_ENVIRONMENT_TYPE as 'local'."}
	}}
}

// DatabaseClock reads the database server's clock (UTC).
type DatabaseClock interface {
	DatabaseNow(ctx context.Context) (time.Time, error)
}

// MaxClockSkew is how far the database's clock may be from the
// process's before the clock check warns.
const MaxClockSkew = 5 * time.Second

// Clock compares the database's clock with the process's (now): leases,
// retries and schedules assume they agree.
func Clock(db DatabaseClock, now func() time.Time) Check {
	return Check{Name: "clock", Title: "Clock", Run: func(ctx context.Context) Finding {
		if db == nil {
			return Finding{Verdict: Warning, Message: "The database's clock could not be read (no database).", Fix: "Fix the database first."}
		}
		before := now()
		dbNow, err := db.DatabaseNow(ctx)
		if err != nil {
			return Finding{Verdict: Warning, Message: "The database's clock could not be read: " + err.Error(), Fix: "Fix the database first."}
		}
		mid := before.Add(now().Sub(before) / 2)
		skew := dbNow.Sub(mid)
		if skew.Abs() > MaxClockSkew {
			return Finding{Verdict: Warning, Message: fmt.Sprintf("The database's clock is %s off this machine's.", skew.Round(time.Second)),
				Fix: "Synchronise both machines' clocks (NTP: systemd-timesyncd or chrony)."}
		}
		return okf("The database's clock agrees with this machine's (%s apart).", skew.Abs().Round(time.Millisecond))
	}}
}

// CronReader reads WP-cron's schedule.
type CronReader interface {
	// NextCronEvent returns the earliest due time in the cron option;
	// false when nothing is scheduled.
	NextCronEvent(ctx context.Context) (time.Time, bool, error)
}

// MaxCronLate is how late WP-cron's earliest event may be before the cron
// check warns.
const MaxCronLate = time.Hour

// Cron checks that WP-cron runs: its earliest event is not far overdue.
// disabled is DISABLE_WP_CRON: then a system cron must run wp-cron.php.
func Cron(r CronReader, disabled bool, now func() time.Time) Check {
	return Check{Name: "wp_cron", Title: "WP-cron running", Run: func(ctx context.Context) Finding {
		next, ok, err := r.NextCronEvent(ctx)
		if err != nil {
			return Finding{Verdict: Warning, Message: "The cron option could not be read: " + err.Error(), Fix: "Fix the database first."}
		}
		late := time.Duration(0)
		if ok {
			late = now().Sub(next)
		}
		switch {
		case late > MaxCronLate && disabled:
			return Finding{Verdict: Warning, Message: fmt.Sprintf("DISABLE_WP_CRON is set and WP-cron's events are %s overdue: no system cron runs them.", late.Round(time.Minute)),
				Fix: "Add a system cron job: */5 * * * * curl -s https://<site>/wp-cron.php (or wp cron event run --due-now)."}
		case late > MaxCronLate:
			return Finding{Verdict: Warning, Message: fmt.Sprintf("WP-cron's events are %s overdue: WordPress runs them on page visits, and none came.", late.Round(time.Minute)),
				Fix: "Define DISABLE_WP_CRON as true and run wp-cron.php from a system cron every few minutes."}
		case disabled:
			return okf("DISABLE_WP_CRON is set and events run on time (a system cron runs them).")
		case !ok:
			return okf("Nothing is scheduled.")
		}
		return okf("Events run on time.")
	}}
}

// QueueReader reads the queue's oldest waiting message.
type QueueReader interface {
	OldestQueuedAt(ctx context.Context) (*time.Time, error)
}

// MaxQueueAge is how long a message may wait in the queue before the
// queue check warns.
const MaxQueueAge = 15 * time.Minute

// Queue reports the age of the oldest queued message.
func Queue(q QueueReader, now func() time.Time) Check {
	return Check{Name: "queue", Title: "Queue", Run: func(ctx context.Context) Finding {
		if q == nil {
			return Finding{Verdict: Warning, Message: "The queue could not be read (no database).", Fix: "Fix the database first."}
		}
		oldest, err := q.OldestQueuedAt(ctx)
		switch {
		case err != nil:
			return Finding{Verdict: Warning, Message: "The queue could not be read: " + err.Error(), Fix: "Fix the database first."}
		case oldest == nil:
			return okf("Empty.")
		}
		age := now().Sub(*oldest)
		if age > MaxQueueAge {
			return Finding{Verdict: Warning, Message: fmt.Sprintf("The oldest queued message has waited %s.", age.Round(time.Minute)),
				Fix: "Check that the service runs and that its connections work (the email log shows each message's last error)."}
		}
		return okf("The oldest queued message has waited %s.", age.Round(time.Second))
	}}
}

// ConnectionLister lists the stored connections.
type ConnectionLister interface {
	FindConnections(ctx context.Context, f core.ConnectionFilter) ([]*core.Connection, int, error)
}

// Connections reports each connection's last health check.
func Connections(l ConnectionLister) Check {
	return Check{Name: "connections", Title: "Connections' last health", Run: func(ctx context.Context) Finding {
		if l == nil {
			return Finding{Verdict: Warning, Message: "The connections could not be read (no database).", Fix: "Fix the database first."}
		}
		list, _, err := l.FindConnections(ctx, core.ConnectionFilter{})
		if err != nil {
			return Finding{Verdict: Warning, Message: "The connections could not be read: " + err.Error(), Fix: "Fix the database first."}
		}
		if len(list) == 0 {
			return Finding{Verdict: Warning, Message: "No connection is set up: mail cannot be sent.",
				Fix: "Add one on the Connections screen, or with the Dashboard's \"Set up sending\"."}
		}
		var bad, seen []string
		for _, c := range list {
			status := c.HealthStatus
			if status == "" {
				status = core.HealthUnknown
			}
			line := fmt.Sprintf("%s (#%d): %s", c.Name, c.ID, status)
			if c.LastError != "" && (status == core.HealthDown || status == core.HealthDegraded) {
				line += " — " + c.LastError
			}
			seen = append(seen, line)
			if status == core.HealthDown || status == core.HealthDegraded {
				bad = append(bad, line)
			}
		}
		if len(bad) > 0 {
			return Finding{Verdict: Warning, Message: strings.Join(bad, "; ") + ".",
				Fix: "Open the connection, fix its settings or credentials and run \"Verify\"; the health check runs again on its schedule."}
		}
		return okf("%s.", strings.Join(seen, "; "))
	}}
}

// SiteURLs checks that MAILSVC_PUBLIC_URL and MAILSVC_ADMIN_URL, when set,
// name the same host as the site's home and siteurl options: OAuth
// callbacks and the links in alerts use them.
func SiteURLs(publicURL, adminURL, home, siteURL string) Check {
	return Check{Name: "site_urls", Title: "MAILSVC_PUBLIC_URL and MAILSVC_ADMIN_URL agree with the site", Run: func(context.Context) Finding {
		var off []string
		if publicURL != "" && home != "" && hostOf(publicURL) != hostOf(home) {
			off = append(off, fmt.Sprintf("MAILSVC_PUBLIC_URL %s is not on the site's home %s", publicURL, home))
		}
		if adminURL != "" && siteURL != "" && hostOf(adminURL) != hostOf(siteURL) {
			off = append(off, fmt.Sprintf("MAILSVC_ADMIN_URL %s is not on the site's siteurl %s", adminURL, siteURL))
		}
		if len(off) > 0 {
			return Finding{Verdict: Warning, Message: strings.Join(off, "; ") + ".",
				Fix: "Remove MAILSVC_PUBLIC_URL and MAILSVC_ADMIN_URL (the service then uses home and siteurl), or make them name the site's own host."}
		}
		if publicURL == "" && adminURL == "" {
			return okf("Not set: the site's home and siteurl are used.")
		}
		return okf("They name the site's host.")
	}}
}

// hostOf returns a URL's lower-cased host name with port, "" when it has none.
func hostOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

// Capture reports the staging guard's state (docs/staging.md): a warning
// while mail is captured, with the way out.
func Capture(state func(ctx context.Context) (core.CaptureState, error)) Check {
	return Check{Name: "capture", Title: "Staging guard", Run: func(ctx context.Context) Finding {
		if state == nil {
			return Finding{Verdict: Warning, Message: "The staging guard's state could not be read (no database).", Fix: "Fix the database first."}
		}
		st, err := state(ctx)
		switch {
		case err != nil:
			return Finding{Verdict: Warning, Message: "The staging guard's state could not be read: " + err.Error(), Fix: "Fix the database first."}
		case st.Capturing():
			f := Finding{Verdict: Warning, Message: fmt.Sprintf("%s %d messages are held.", st.Message, st.Captured)}
			switch st.Reason {
			case core.CaptureReasonCopy:
				f.Fix = "If this is the live site now, choose \"This is the live site now\" on the screens (POST /capture/adopt), then release the held messages; on a staging copy, leave it: mail stays held (capture_allow_list lets the team's own addresses through)."
			case core.CaptureReasonEnvironment:
				f.Fix = "Set MAILSVC_ENVIRONMENT=production if this is the live site; otherwise mail stays held (capture_allow_list lets the team's own addresses through)."
			default:
				f.Fix = "Turn simulation_enabled off in the settings to send mail; release the held messages to send them."
			}
			return f
		case st.Live == nil:
			return okf("Mail is sent. No live site is recorded yet: the service records this one when it next starts.")
		}
		f := okf("Mail is sent: this is the live site %s (%s).", st.Live.Address(), st.Environment)
		if st.Captured > 0 {
			// Adopting releases nothing: what was held stays held until
			// someone releases or deletes it, or retention purges it.
			held := fmt.Sprintf("%d messages captured earlier are", st.Captured)
			if st.Captured == 1 {
				held = "1 message captured earlier is"
			}
			f.Message += " " + held + " still held: release them on the screens (email logs, status captured) or delete them; retention purges them after log_retention_days."
		}
		return f
	}}
}
