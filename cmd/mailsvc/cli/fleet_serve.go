package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/adapters/metrics"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/app/fleet"
	"github.com/mailsvc/mailsvc/core"
)

// fleetSiteEnvironment are the constants that name one database, one
// table prefix, one key or one listener: set in the environment they
// would be the same for every site of a fleet, so a fleet refuses them
// there (each site's wp-config.php may define them).
var fleetSiteEnvironment = []string{"MAILSVC_DB", "MAILSVC_TABLE_PREFIX", "MAIL_SVC_ENCRYPTION_KEY", "MAILSVC_SMTP_LISTEN", "MAILSVC_PUBLIC_URL",
	"MAILSVC_ADMIN_URL", "MAIL_SVC_DEBUG_LOG_DIR"}

// fleetDataDir gives a site of a fleet a data directory of its own, for
// what its tools routes list (debug logs, SMTP transcripts): the
// MAILSVC_DATA_DIR its wp-config.php defines, else a folder under the
// process's, named after the site's wp-config.php path.
func fleetDataDir(rt *runtime) {
	if _, src, ok := rt.consts.Lookup("MAILSVC_DATA_DIR"); ok && src == core.SourceWPConfig {
		return
	}
	sum := sha256.Sum256([]byte(rt.wpConfigPath))
	rt.dataDir = filepath.Join(rt.dataDir, "sites", hex.EncodeToString(sum[:6]))
}

// fleetRetryMax is the longest wait between two attempts to bring a site
// whose database does not answer into service.
const fleetRetryMax = 30 * time.Second

// fleetPingEvery is how often a served site's database is pinged: while
// it does not answer, the site's routes answer 503.
const fleetPingEvery = 2 * time.Second

// fleetSites returns the wp-config.php paths of a fleet: the --site
// flags, else MAILSVC_SITES; glob patterns are expanded (sorted), and a
// path given twice is served once. None means no fleet.
func fleetSites(flags []string) ([]string, error) {
	entries := flags
	if len(entries) == 0 {
		entries = SplitList(os.Getenv("MAILSVC_SITES"))
	}
	var out []string
	for _, e := range entries {
		matches := []string{e}
		if strings.ContainsAny(e, "*?[") {
			m, err := filepath.Glob(e)
			if err != nil {
				return nil, fmt.Errorf("site pattern %q: %w", e, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("site pattern %q matches no wp-config.php", e)
			}
			matches = m
		}
		for _, m := range matches {
			abs, err := filepath.Abs(m)
			if err != nil {
				return nil, fmt.Errorf("site %q: %w", m, err)
			}
			if !slices.Contains(out, abs) {
				out = append(out, abs)
			}
		}
	}
	return out, nil
}

// fleetMember is one site of a fleet: its configuration, how requests
// for it are told apart (its key, its hosts), and its service while it
// is served. It implements api.FleetSite.
type fleetMember struct {
	path string
	log  *slog.Logger

	mu      sync.RWMutex
	key     string
	hosts   []string
	svc     *siteService
	db      *store.DB
	problem string
	// cause is the error behind problem, for the operator's view only:
	// a site's routes answer problem alone, to callers who may be anyone.
	cause string
	// dbDown is set while a served site's database does not answer.
	dbDown bool
}

// Key implements api.FleetSite.
func (m *fleetMember) Key() string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.key
}

// ServesHost implements api.FleetSite.
func (m *fleetMember) ServesHost(host string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Contains(m.hosts, host)
}

// Handler implements api.FleetSite.
func (m *fleetMember) Handler() (http.Handler, string) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.svc == nil || m.dbDown {
		return nil, m.problem
	}
	return m.svc.handler, ""
}

// name is how the operator's view and the logs name the site: its home
// URL's host and path, else its wp-config.php.
func (m *fleetMember) name() string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.svc != nil {
		return siteName(m.svc.public, m.path)
	}
	return m.path
}

// view is the site as the operator's view reads it now.
func (m *fleetMember) view() fleet.Site {
	name := m.name()
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := fleet.Site{Name: name, WPConfig: m.path, Problem: m.problem}
	if m.cause != "" {
		s.Problem += " Cause: " + m.cause
	}
	if m.svc == nil {
		if s.Problem == "" {
			s.Problem = "The site is starting."
		}
		return s
	}
	s.HomeURL = m.svc.public
	if m.dbDown {
		return s
	}
	s.Problem = ""
	s.Attention, s.Queue, s.Outcomes, s.Connections = m.svc.dashboard, m.db.Logs(), m.db.Logs(), m.db.Connections()
	return s
}

// setProblem records why the site is not served, and the error behind
// it (nil when there is none to tell).
func (m *fleetMember) setProblem(p string, cause error) {
	m.mu.Lock()
	m.problem, m.cause = p, ""
	if cause != nil {
		m.cause = cause.Error()
	}
	m.mu.Unlock()
}

// siteKey computes the site's key from wp_salt('auth') (the salts of
// wp-config.php, else the ones WordPress stored in the options table of
// db, when db is not nil).
func siteKey(ctx context.Context, rt *runtime, db *store.DB) (string, error) {
	var options wordpress.OptionReader
	if db != nil {
		src, err := wordpress.NewGormSource(db.Gorm(), rt.prefix)
		if err != nil {
			return "", err
		}
		options = src
	}
	salt, err := wordpress.NewSalter(rt.saltConstants(), nil, options).Salt(ctx, "auth")
	if err != nil {
		return "", err
	}
	return wordpress.SiteKey(salt), nil
}

// urlHosts returns the lower-cased hosts (with their ports) of the
// given URLs.
func urlHosts(urls ...string) []string {
	var out []string
	for _, s := range urls {
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			if h := strings.ToLower(u.Host); !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	return out
}

// run serves the site until ctx is cancelled: it boots the site (opens
// and migrates its database) and builds its service, retrying with a
// growing wait while the database does not answer, then watches the
// database, and stops the site's service when done. The site's tables
// dropped under it (an uninstall) stop the site for good.
func (m *fleetMember) run(ctx context.Context, build siteBuild) {
	wait := time.Second
	for ctx.Err() == nil {
		gone, err := m.serveOnce(ctx, build)
		if gone {
			m.setProblem("The service's tables were removed from the site's database (uninstalled); restart the service to install them again.", nil)
			m.log.Warn("fleet: the site's tables are gone; it is no longer served")
			return
		}
		if err == nil {
			return
		}
		m.setProblem("The site's database is not available; the service retries by itself.", err)
		m.log.Warn("fleet: the site cannot be served now; retrying", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, fleetRetryMax)
	}
}

// serveOnce boots and serves the site once, until ctx is cancelled (nil)
// or its tables are gone (gone).
func (m *fleetMember) serveOnce(ctx context.Context, build siteBuild) (gone bool, err error) {
	siteCtx, stop := context.WithCancel(ctx)
	defer stop()
	guard := newTablesGoneGuard(m.log.Handler(), stop)
	rt, err := bootWith(siteCtx, slog.New(guard), m.path, store.Open)
	if err != nil {
		return false, err
	}
	defer rt.db.Close()
	fleetDataDir(rt)
	guard.confirmWith(func() bool {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		exists, err := rt.db.Installation().DatabaseExists(cctx)
		return err == nil && exists
	})
	key, err := siteKey(siteCtx, rt, rt.db)
	if err != nil {
		return false, fmt.Errorf("site key: %w", err)
	}
	svc, err := buildSite(siteCtx, rt, build)
	if err != nil {
		return false, err
	}
	defer svc.stop()
	m.mu.Lock()
	m.key, m.svc, m.db, m.problem, m.cause, m.dbDown = key, svc, rt.db, "", "", false
	m.hosts = urlHosts(svc.public, strings.TrimSuffix(svc.admin, "/wp-admin/admin.php?page=mailsvc"))
	m.mu.Unlock()
	m.log.Info("fleet: site served", "home", svc.public)
	defer func() {
		m.mu.Lock()
		m.svc, m.db = nil, nil
		m.mu.Unlock()
	}()
	tick := time.NewTicker(fleetPingEvery)
	defer tick.Stop()
	for {
		select {
		case <-siteCtx.Done():
			return guard.Gone(), nil
		case <-tick.C:
		}
		pctx, cancel := context.WithTimeout(siteCtx, fleetPingEvery)
		perr := rt.db.Ping(pctx)
		cancel()
		m.mu.Lock()
		was := m.dbDown
		m.dbDown = perr != nil
		if perr != nil {
			m.problem, m.cause = "The site's database is not available; the service retries by itself.", perr.Error()
		} else {
			m.problem, m.cause = "", ""
		}
		m.mu.Unlock()
		if perr != nil && !was {
			m.log.Warn("fleet: the site's database does not answer; its routes answer 503 until it does", "err", perr)
		} else if perr == nil && was {
			m.log.Info("fleet: the site's database answers again")
		}
	}
}

// fleetReadiness is ready when every site is served.
type fleetReadiness struct{ members []*fleetMember }

// Ready implements api.ReadinessChecker.
func (r fleetReadiness) Ready(context.Context) error {
	var down []string
	for _, m := range r.members {
		if h, _ := m.Handler(); h == nil {
			down = append(down, m.path)
		}
	}
	if len(down) > 0 {
		return fmt.Errorf("sites not served: %s", strings.Join(down, ", "))
	}
	return nil
}

// loadFleet reads every site's configuration, refusing what would make
// the sites share a database, a key or a listener, and two sites with
// the same salts (they would have the same site key).
func loadFleet(ctx context.Context, paths []string, log *slog.Logger) ([]*fleetMember, error) {
	for _, name := range fleetSiteEnvironment {
		if os.Getenv(name) != "" {
			return nil, fmt.Errorf("%s is set in the environment, which every site of a fleet shares: define it in each site's wp-config.php instead", name)
		}
	}
	if os.Getenv("MAILSVC_WP_CONFIG") != "" {
		log.Warn("fleet: MAILSVC_WP_CONFIG is ignored: the sites are the --site flags or MAILSVC_SITES")
	}
	members := make([]*fleetMember, 0, len(paths))
	keys := map[string]string{}
	for _, p := range paths {
		mlog := log.With("site", p)
		rt, err := readConfig(mlog, p)
		if err != nil {
			return nil, err
		}
		if rt.wp == nil {
			return nil, fmt.Errorf("site %s: not a wp-config.php", p)
		}
		m := &fleetMember{path: p, log: mlog, problem: "The site is starting."}
		// The key is known at once when the salts are constants of
		// wp-config.php; else once the site's database answers.
		if key, err := siteKey(ctx, rt, nil); err == nil {
			if other, dup := keys[key]; dup {
				return nil, fmt.Errorf("sites %s and %s have the same salts: give each site its own keys and salts (https://api.wordpress.org/secret-key/1.1/salt/)", other, p)
			}
			keys[key], m.key = p, key
		}
		if v, ok := rt.wp.Defines["WP_HOME"]; ok {
			m.hosts = urlHosts(v.String())
		}
		members = append(members, m)
	}
	return members, nil
}

// serveFleet serves several independent WordPress sites from one
// process (docs/fleet.md): each site gets its own service (buildSite)
// over its own database, behind one listener whose router finds the
// site of each request (api.Fleet). A site whose database does not
// answer is retried by itself while the others serve.
func serveFleet(ctx context.Context, addr string, paths []string, out io.Writer) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	log := newLogger()
	members, err := loadFleet(ctx, paths, log)
	if err != nil {
		return err
	}
	consts, warnings := core.NewConstants(nil, os.LookupEnv)
	for _, w := range warnings {
		log.Warn("configuration", "problem", w)
	}
	if addr == "" {
		addr = consts.String("MAILSVC_ADDR")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	reg := metrics.NewFleet()
	// The sites stop once the listener has shut down (the requests in
	// progress are answered first), as a single site's service does.
	sitesCtx, stopSites := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	defer func() {
		stopSites()
		wg.Wait()
	}()
	for _, m := range members {
		build := siteBuild{serviceAddr: ln.Addr().String(), operatorEmail: consts.String("MAILSVC_FLEET_ALERT_EMAIL"),
			operatorWebhook: consts.String("MAILSVC_FLEET_ALERT_WEBHOOK"),
			newMetrics: func(q metrics.QueueReader, l *slog.Logger) *metrics.Registry {
				return reg.Site(m.path, q, l)
			}}
		wg.Add(1)
		go func() { defer wg.Done(); m.run(sitesCtx, build) }()
	}
	sites := make([]api.FleetSite, len(members))
	for i, m := range members {
		sites[i] = m
	}
	view := &fleet.Service{Sites: func() []fleet.Site {
		out := make([]fleet.Site, len(members))
		for i, m := range members {
			out[i] = m.view()
		}
		return out
	}}
	router := &api.Fleet{Sites: sites, Token: consts.String("MAILSVC_FLEET_TOKEN"), View: view,
		Probes: &api.Probes{Metrics: reg.Handler(), MetricsToken: consts.String("MAILSVC_METRICS_TOKEN"), Ready: fleetReadiness{members}, Health: true}}
	certFile, keyFile := consts.String("MAILSVC_TLS_CERT"), consts.String("MAILSVC_TLS_KEY")
	scheme := "http"
	if certFile != "" {
		scheme = "https"
	}
	base := fmt.Sprintf("%s://%s%s", scheme, ln.Addr(), api.Namespace)
	fmt.Fprintf(out, "mailsvc is serving %s for %d sites\n", base, len(members))
	for _, m := range members {
		fmt.Fprintf(out, "  %s\n", m.path)
	}
	log.Info("mailsvc serving a fleet", "version", Version, "api", base, "sites", len(members))
	return serveHTTP(ctx, ln, router.Handler(), certFile, keyFile, log)
}
