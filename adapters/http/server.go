// Package http serves the spec's REST API under /wp-json/mailsvc/v1 with
// gorilla/mux: routing, WordPress-compatible authentication, the spec's
// error shape, pagination and request limits. It is the one place where
// domain errors become HTTP statuses.
package http

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

// Namespace is the path prefix of every route.
const Namespace = "/wp-json/mailsvc/v1"

// DefaultMaxBodyBytes bounds a request body.
const DefaultMaxBodyBytes = 1 << 20

// Authenticator resolves the user behind a request the way WordPress does.
// It returns (nil, nil) for a request with no credentials, a user on
// success, and an error (code EUNAUTHORIZED) for credentials that fail.
// secure says whether the request arrived over HTTPS.
type Authenticator interface {
	Authenticate(r *http.Request, secure bool) (*core.User, error)
}

// NonceIssuer is implemented by authenticators that can issue WordPress
// REST nonces. After a cookie-authenticated request the server answers
// with a fresh X-WP-Nonce header, as WordPress does.
type NonceIssuer interface {
	SessionToken(r *http.Request) string
	CreateNonce(user *core.User, token string, action string) string
}

// ConnectionService is what the connection routes need.
type ConnectionService interface {
	List(ctx context.Context, offset, limit int) ([]*core.Connection, int, error)
	Get(ctx context.Context, id int64) (*core.Connection, error)
	Create(ctx context.Context, in app.ConnectionInput) (*core.Connection, error)
	Update(ctx context.Context, id int64, in app.ConnectionInput) (*core.Connection, error)
	Delete(ctx context.Context, id int64) error
	DeleteMany(ctx context.Context, ids []int64) (int, error)
}

// SettingsService is what the settings routes need.
type SettingsService interface {
	Get(ctx context.Context) (map[string]any, error)
	Update(ctx context.Context, patch map[string]any) (map[string]any, error)
}

// LogService is what the email log routes need.
type LogService interface {
	List(ctx context.Context, f core.LogFilter) ([]*core.Log, int, error)
	ListPage(ctx context.Context, q app.LogQuery) (*app.LogPage, error)
	Get(ctx context.Context, id int64) (*app.LogDetail, error)
	Stats(ctx context.Context) (core.QueueStats, error)
	Resend(ctx context.Context, ids []int64) (int, error)
	ResendOne(ctx context.Context, id int64) error
	ResendTo(ctx context.Context, ids []int64, r app.ResendRecipients) ([]int64, error)
	ResendOneTo(ctx context.Context, id int64, r app.ResendRecipients) (int64, error)
	Delete(ctx context.Context, id int64) error
	DeleteMany(ctx context.Context, ids []int64) (int, error)
	// ReleaseHeld and DiscardHeld move the messages the flood guard held
	// that match the list's filters (POST /logs/held/release and
	// /logs/held/discard).
	ReleaseHeld(ctx context.Context, q app.LogQuery) (int, error)
	DiscardHeld(ctx context.Context, q app.LogQuery) (int, error)
}

// ConnectionActionService is what the test email and credential check
// routes need.
type ConnectionActionService interface {
	SendTestEmail(ctx context.Context, in app.TestEmailInput) (*app.TestEmailResult, error)
	TestConnection(ctx context.Context, id int64, to string) (*app.TestEmailResult, error)
	VerifyCredentials(ctx context.Context, id int64) (*app.VerifyResult, error)
	VerifyAPICredentials(ctx context.Context, id int64) (*app.VerifyResult, error)
}

// TranscriptService is what the debug log tools routes need: the stored
// SMTP transcripts.
type TranscriptService interface {
	List(ctx context.Context, offset, limit int) ([]core.Transcript, int, error)
	Clear(ctx context.Context) (int, error)
}

// Server is the REST API. Set its fields, then call Handler once.
type Server struct {
	Auth        Authenticator
	Connections ConnectionService
	Settings    SettingsService
	// Logs, Actions and Transcripts serve the delivery routes; a nil one
	// leaves its routes unregistered (404).
	Logs        LogService
	Actions     ConnectionActionService
	Transcripts TranscriptService
	// Plugins serves GET /tools/plugins; nil leaves it unregistered.
	Plugins PluginService
	// Doctor serves GET /tools/doctor; nil leaves it unregistered.
	Doctor DoctorService
	// Notifications serves the alert channel routes; OAuth the OAuth
	// flows and the connection token routes. Nil leaves them unregistered.
	Notifications NotificationService
	OAuth         OAuthService
	// Migration serves the migration tools routes; nil leaves them
	// unregistered.
	Migration MigrationService
	// Dashboard serves the dashboard routes; nil leaves them unregistered.
	Dashboard DashboardService
	// SiteFormat serves GET /site/format, the site's date and time
	// format and zone the screens show times in; nil leaves it
	// unregistered (the screens then use WordPress's defaults).
	SiteFormat SiteFormatReader
	// Privacy serves the personal data export and erase routes; nil
	// leaves them unregistered.
	Privacy PrivacyService
	// EmailControls serves GET and PUT /settings/email-controls; nil
	// leaves them unregistered.
	EmailControls EmailControlService
	// Reports serves the summary report routes; nil leaves them
	// unregistered.
	Reports ReportService
	// Capture serves the staging guard routes (/capture); nil leaves
	// them unregistered.
	Capture CaptureService
	// Sites, set on a WordPress multisite network, finds each request's
	// site from its Host and path (/site2/wp-json/...) and limits what a
	// site's administrator sees to that site (docs/multisite.md); nil is
	// a single site. Network serves the network routes (super admins).
	Sites   SiteFinder
	Network NetworkService

	Hooks  *core.Hooks
	Logger *slog.Logger
	// Capability every route requires; "" means core.DefaultCapability.
	// The mail_svc_rest_capability filter may change it per request.
	Capability string
	// TrustedProxies are the peers whose X-Forwarded-Proto is believed.
	TrustedProxies []*net.IPNet
	// MaxBodyBytes bounds request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Modules add route sets from outside the free API (the Pro add-on);
	// without them their paths answer as unknown routes.
	Modules []Module
	// Probes serves /metrics, /healthz and /readyz on the server root;
	// nil leaves them unregistered.
	Probes *Probes
	// Admin serves the admin screens at /admin/ (package admin); nil
	// leaves them unregistered.
	Admin http.Handler

	moduleRoutes []Route
	// router is the root router Handler built (RegisteredRoutes and the
	// discovery routes read it).
	router *mux.Router
}

// Handler returns the http.Handler serving every route.
func (s *Server) Handler() http.Handler {
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.MaxBodyBytes == 0 {
		s.MaxBodyBytes = DefaultMaxBodyBytes
	}
	r := mux.NewRouter()
	r.NotFoundHandler = http.HandlerFunc(s.notFound)
	r.MethodNotAllowedHandler = http.HandlerFunc(s.notFound)
	api := r.PathPrefix(Namespace).Subrouter()
	api.NotFoundHandler = r.NotFoundHandler
	api.MethodNotAllowedHandler = r.NotFoundHandler
	s.router = r
	s.discoveryRoutes(r, api)

	s.private(api, "GET", "/connections", s.listConnections)
	s.private(api, "POST", "/connections", s.createConnection)
	s.private(api, "DELETE", "/connections", s.deleteConnections)
	s.private(api, "GET", "/connections/{id}", s.getConnection)
	s.private(api, "PUT", "/connections/{id}", s.updateConnection)
	s.private(api, "DELETE", "/connections/{id}", s.deleteConnection)
	s.private(api, "GET", "/transports", s.listTransports)
	s.private(api, "GET", "/transports/{driver}", s.getTransport)
	s.private(api, "GET", "/settings", s.getSettings)
	s.private(api, "GET", "/settings/schema", s.getSettingsSchema)
	s.private(api, "PUT", "/settings", s.updateSettings)
	if s.Logs != nil {
		// /logs/queue/stats before /logs/{id}, which would capture it.
		s.private(api, "GET", "/logs/queue/stats", s.logStats)
		s.private(api, "GET", "/logs", s.listLogs)
		s.private(api, "DELETE", "/logs", s.deleteLogs)
		s.private(api, "POST", "/logs/resend", s.resendLogs)
		s.private(api, "POST", "/logs/held/release", s.releaseHeld)
		s.private(api, "POST", "/logs/held/discard", s.discardHeld)
		s.private(api, "GET", "/logs/{id}", s.getLog)
		s.private(api, "DELETE", "/logs/{id}", s.deleteLog)
		s.private(api, "POST", "/logs/{id}/resend", s.resendLog)
	}
	if s.Actions != nil {
		s.private(api, "POST", "/test-email", s.sendTestEmail)
		s.private(api, "POST", "/connections/{id}/test", s.testConnection)
		s.private(api, "POST", "/connections/{id}/verify-credentials", s.verifyCredentials)
		s.private(api, "POST", "/connections/{id}/verify-api-credentials", s.verifyAPICredentials)
	}
	if s.Transcripts != nil {
		s.private(api, "GET", "/tools/debug-logs", s.listDebugLogs)
		s.private(api, "DELETE", "/tools/debug-logs", s.clearDebugLogs)
	}
	if s.Plugins != nil {
		s.private(api, "GET", "/tools/plugins", s.listPlugins)
	}
	if s.Doctor != nil {
		s.private(api, "GET", "/tools/doctor", s.diagnose)
	}
	if s.Notifications != nil {
		s.notificationRoutes(api)
	}
	if s.OAuth != nil {
		s.oauthRoutes(api)
	}
	if s.Migration != nil {
		s.migrationRoutes(api)
	}
	if s.Dashboard != nil {
		s.dashboardRoutes(api)
	}
	if s.SiteFormat != nil {
		s.private(api, "GET", "/site/format", s.siteFormat)
	}
	if s.Privacy != nil {
		s.privacyRoutes(api)
	}
	if s.EmailControls != nil {
		s.emailControlRoutes(api)
	}
	if s.Reports != nil {
		s.reportRoutes(api)
	}
	if s.Capture != nil {
		s.captureRoutes(api)
	}
	if s.Sites != nil && s.Network != nil {
		s.networkRoutes(api)
	}
	s.registerModules(api)
	if s.Probes != nil {
		s.Probes.register(r)
	}
	if s.Admin != nil {
		r.Handle("/admin", s.Admin)
		r.PathPrefix("/admin/").Handler(s.Admin)
	}

	return s.recoverPanics(s.withClientIP(s.logRequests(s.siteRoute(restRoute(r)))))
}

// handlerFunc is a route handler that returns its error instead of writing it.
type handlerFunc = HandlerFunc

// private registers a route that needs an authenticated user holding the
// REST capability.
func (s *Server) private(r *mux.Router, method, path string, h handlerFunc) {
	r.Handle(path, s.authenticated(h)).Methods(method)
}

// authenticated wraps h with authentication and the capability check.
func (s *Server) authenticated(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, err := s.Auth.Authenticate(r, s.secure(r))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if user == nil {
			s.writeError(w, r, core.Errorf(core.EUNAUTHORIZED, "You are not currently logged in."))
			return
		}
		if !user.Can(s.capability(r)) {
			s.writeError(w, r, core.Errorf(core.EFORBIDDEN, "Sorry, you are not allowed to do that."))
			return
		}
		ctx, err := s.networkAccess(r, user)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if ni, ok := s.Auth.(NonceIssuer); ok && user.Via == "cookie" {
			w.Header().Set("X-WP-Nonce", ni.CreateNonce(user, ni.SessionToken(r), "wp_rest"))
		}
		if err := h(w, r.WithContext(withUser(ctx, user))); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// capability returns the capability a request needs.
func (s *Server) capability(r *http.Request) string {
	c := s.Capability
	if c == "" {
		c = core.DefaultCapability
	}
	// The request's context carries its network site, whose own filters
	// decide (wordpress.PublishedFilters).
	if v, ok := s.Hooks.ApplyFilters(core.HookRESTCapability, c, r.URL.Path, r.Context()).(string); ok && v != "" {
		c = v
	}
	return c
}

// secure reports whether r arrived over HTTPS: TLS on this listener, or
// X-Forwarded-Proto: https from a trusted proxy.
func (s *Server) secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	return strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") && s.trusted(peerHost(r))
}

// peerHost is the address of r's peer, without its port.
func peerHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// trusted reports whether host is one of TrustedProxies.
func (s *Server) trusted(host string) bool {
	ip := net.ParseIP(host)
	for _, n := range s.TrustedProxies {
		if ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// withClientIP puts the client's address in the request's context
// (core.WithClientIP): the peer, or, from a trusted proxy, the last
// address of X-Forwarded-For that is not itself a trusted proxy (the
// bridge and nginx each append the address they were called from).
// WordPress's application password filters and last_ip see it.
func (s *Server) withClientIP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip := peerHost(r)
		if s.trusted(ip) {
			hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
			for i := len(hops) - 1; i >= 0; i-- {
				hop := strings.TrimSpace(hops[i])
				if net.ParseIP(hop) == nil {
					break
				}
				ip = hop
				if !s.trusted(hop) {
					break
				}
			}
		}
		next.ServeHTTP(w, r.WithContext(core.WithClientIP(r.Context(), ip)))
	})
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, core.Errorf(core.ENOROUTE, "No route was found matching the URL and request method."))
}

// restRoute serves WordPress's plain-permalink form /?rest_route=/mailsvc/v1/...
// as the same route under /wp-json.
func restRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rr := r.URL.Query().Get("rest_route"); rr != "" && (r.URL.Path == "/" || r.URL.Path == "/index.php") {
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/wp-json/" + strings.TrimPrefix(rr, "/")
			r2.URL.RawPath = ""
			next.ServeHTTP(w, r2)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type userKey struct{}

func withUser(ctx context.Context, u *core.User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the authenticated user of a request's context, or nil.
func UserFrom(ctx context.Context) *core.User {
	u, _ := ctx.Value(userKey{}).(*core.User)
	return u
}
