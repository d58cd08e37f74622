package http

import (
	"context"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/network"
	"github.com/mailsvc/mailsvc/core"
)

// SiteFinder finds the site of a WordPress multisite network a request is
// for, from its Host header and path, as WordPress does (ms-load.php).
type SiteFinder interface {
	// SiteForRequest returns the site's id and its path ("/site2/"), or
	// the main site when no site matches.
	SiteForRequest(ctx context.Context, host, path string) (id int64, sitePath string, err error)
	// MainSiteID is the network's main site.
	MainSiteID() int64
}

// NetworkService is what the network routes need (network.Service).
type NetworkService interface {
	ListSites(ctx context.Context) ([]network.SiteView, error)
	UpdateSite(ctx context.Context, id int64, patch map[string]any) (*network.SiteView, error)
	NetworkSettings(ctx context.Context) (network.Settings, error)
	UpdateNetworkSettings(ctx context.Context, patch map[string]any) (network.Settings, error)
	OverridesAllowed(ctx context.Context, id int64) (bool, error)
	SiteOverrides(ctx context.Context, site int64) (core.SiteOverrides, error)
	UpdateSiteOverrides(ctx context.Context, site int64, patch map[string]any) error
	OwnsConnection(ctx context.Context, site, id int64) (bool, error)
	ConnectionSites(ctx context.Context) (map[int64]int64, error)
	AddOwnConnection(ctx context.Context, site, id int64) error
}

// siteRoute finds the network site of a request and serves it as that
// site's: the site's id in the context (core.WithSite) and its path
// removed, so /site2/wp-json/mailsvc/v1/logs is /wp-json/mailsvc/v1/logs
// of site 2. Without a network it changes nothing.
func (s *Server) siteRoute(next http.Handler) http.Handler {
	if s.Sites == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, sitePath, err := s.Sites.SiteForRequest(r.Context(), r.Host, r.URL.Path)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		r2 := r.Clone(core.WithSite(r.Context(), id))
		prefix := strings.TrimSuffix(sitePath, "/")
		if prefix != "" && (strings.HasPrefix(strings.ToLower(r.URL.Path), strings.ToLower(prefix)+"/") || strings.EqualFold(r.URL.Path, prefix)) {
			r2.URL.Path = "/" + strings.TrimPrefix(r.URL.Path[len(prefix):], "/")
			r2.URL.RawPath = ""
		}
		next.ServeHTTP(w, r2)
	})
}

// siteScope is the site a network request's data is limited to: the site
// of its URL, except for a super admin on the main site's URL, who sees
// the whole network or the site the "site" query parameter names.
func (s *Server) siteScope(r *http.Request, user *core.User) (int64, error) {
	site, ok := core.SiteFrom(r.Context())
	if !ok {
		site = s.Sites.MainSiteID()
	}
	if !user.SuperAdmin || site != s.Sites.MainSiteID() {
		return site, nil
	}
	v := r.URL.Query().Get("site")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, core.InvalidField("site", "Must be a site id.")
	}
	return n, nil
}

// actingSite is the site whose connections a network request may use
// where it names one (core.ActingSite, core.ConnectionUse): the site of
// its URL, whoever asks (a super admin on site 3's URL acts for site 3),
// except a super admin on the main site's URL, who acts for the network
// (0: the network's connections only). The "site" query parameter limits
// what is read, not what is used.
func (s *Server) actingSite(r *http.Request, user *core.User) int64 {
	site, ok := core.SiteFrom(r.Context())
	if !ok {
		site = s.Sites.MainSiteID()
	}
	if user.SuperAdmin && site == s.Sites.MainSiteID() {
		return 0
	}
	return site
}

// siteAdminRoutes are what a site's administrator (not a super admin)
// may do on a network: the site's own logs, dashboard, analytics (Pro,
// read only, scoped to the site by the stores) and test email.
// Connections, settings, alert channels and tools are the network's, and
// a site manages them only where the network allows site overrides.
func siteAdminRoute(method, path string) bool {
	p := strings.TrimPrefix(path, Namespace)
	switch {
	case method == http.MethodGet && (p == "/pro/analytics/overview" || p == "/pro/analytics/deliverability" || p == "/pro/analytics/export"):
		return true
	case (p == "" || p == "/" || path == "/wp-json/") && method == http.MethodGet:
		return true // the route index
	case p == "/logs" || strings.HasPrefix(p, "/logs/"):
		return true
	case strings.HasPrefix(p, "/dashboard/") && method == http.MethodGet:
		return true
	case p == "/test-email" || p == "/transports" || strings.HasPrefix(p, "/transports/"):
		return true
	case (p == "/connections" || strings.HasPrefix(p, "/connections/") || p == "/settings") && method == http.MethodGet:
		return true
	}
	return false
}

// networkAccess applies the network's rules to an authenticated request:
// the scope of its data, and what a site's administrator may not do. It
// returns the request's context.
func (s *Server) networkAccess(r *http.Request, user *core.User) (context.Context, error) {
	ctx := r.Context()
	if s.Sites == nil {
		return ctx, nil
	}
	scope, err := s.siteScope(r, user)
	if err != nil {
		return ctx, err
	}
	ctx = core.WithSiteScope(ctx, scope)
	ctx = core.WithActingSite(ctx, s.actingSite(r, user))
	if !user.SuperAdmin {
		// A site's administrator never reads or resends a one-time link
		// (a network user's password reset), whatever log_body keeps.
		ctx = app.WithoutOneTimeLinks(ctx)
	}
	if err := s.otherSiteConnection(ctx, r, user, scope); err != nil {
		return ctx, err
	}
	if user.SuperAdmin || siteAdminRoute(r.Method, r.URL.Path) {
		return ctx, nil
	}
	if s.Network != nil {
		allowed, err := s.Network.OverridesAllowed(ctx, scope)
		if err != nil {
			return ctx, err
		}
		if allowed {
			return ctx, s.overrideAccess(ctx, r, scope)
		}
	}
	return ctx, errNetworkManaged
}

// connectionSiteFilter returns, for a site's administrator on a network
// (not a super admin), the site whose connections they see besides the
// network's, and which site created each connection (ConnectionSites);
// site 0 when every connection is visible.
func (s *Server) connectionSiteFilter(ctx context.Context, user *core.User) (site int64, owners map[int64]int64, err error) {
	if s.Sites == nil || s.Network == nil || user == nil || user.SuperAdmin {
		return 0, nil, nil
	}
	site = core.SiteScope(ctx)
	if site == 0 {
		return 0, nil, nil
	}
	owners, err = s.Network.ConnectionSites(ctx)
	if err != nil {
		return 0, nil, err
	}
	return site, owners, nil
}

// otherSiteConnection answers a site's administrator who names a
// connection another site created (/connections/{id}...) as if it did
// not exist: 404, whatever the method.
func (s *Server) otherSiteConnection(ctx context.Context, r *http.Request, user *core.User, scope int64) error {
	p := strings.TrimPrefix(r.URL.Path, Namespace)
	if !strings.HasPrefix(p, "/connections/") || user.SuperAdmin || scope == 0 {
		return nil
	}
	idPart, _, _ := strings.Cut(strings.TrimPrefix(p, "/connections/"), "/")
	id, err := strconv.ParseInt(idPart, 10, 64)
	if err != nil {
		return nil
	}
	site, owners, err := s.connectionSiteFilter(ctx, user)
	if err != nil || site == 0 {
		return err
	}
	if owner, ok := owners[id]; ok && owner != site {
		return core.Errorf(core.ENOTFOUND, "Connection %d not found.", id)
	}
	return nil
}

// errNetworkManaged answers a site administrator who asks to change what
// the network manages.
var errNetworkManaged = core.Errorf(core.EFORBIDDEN, "The network's connections and settings are managed by its network administrators.")

// overrideAccess is what a site that may override lets its
// administrator do beyond siteAdminRoute: create connections, change and
// use the ones the site created, and set the site's own connections and
// sender (PUT /settings, checked there). The network's
// connections, alert channels and tools stay the network's.
func (s *Server) overrideAccess(ctx context.Context, r *http.Request, site int64) error {
	p := strings.TrimPrefix(r.URL.Path, Namespace)
	switch {
	case p == "/settings" || (p == "/connections" && r.Method == http.MethodPost):
		return nil
	case strings.HasPrefix(p, "/connections/"):
		rest := strings.TrimPrefix(p, "/connections/")
		idPart, _, _ := strings.Cut(rest, "/")
		id, err := strconv.ParseInt(idPart, 10, 64)
		if err != nil {
			return errNetworkManaged
		}
		own, err := s.Network.OwnsConnection(ctx, site, id)
		if err != nil {
			return err
		}
		if own {
			return nil
		}
	}
	return errNetworkManaged
}

// siteSettingsRequest reports the site whose own settings a request to
// the settings routes reads or writes: a site's URL on a network (0
// otherwise: the network's settings).
func (s *Server) siteSettingsRequest(r *http.Request) int64 {
	if s.Sites == nil || s.Network == nil {
		return 0
	}
	site, ok := core.SiteFrom(r.Context())
	if !ok || site == s.Sites.MainSiteID() && UserFrom(r.Context()).SuperAdmin {
		return 0
	}
	return site
}

// withSiteSettings overlays the settings a site set for itself on the
// network's settings v.
func (s *Server) withSiteSettings(ctx context.Context, site int64, v map[string]any) (map[string]any, error) {
	own, err := s.Network.SiteOverrides(ctx, site)
	if err != nil {
		return nil, err
	}
	maps.Copy(v, own.Values())
	return v, nil
}

// networkRoutes registers the network routes: super admins only, on the
// main site's URL.
func (s *Server) networkRoutes(api *mux.Router) {
	s.networkRoute(api, "GET", "/network/sites", s.listNetworkSites)
	s.networkRoute(api, "PUT", "/network/sites/{id}", s.updateNetworkSite)
	s.networkRoute(api, "GET", "/network/settings", s.getNetworkSettings)
	s.networkRoute(api, "PUT", "/network/settings", s.updateNetworkSettings)
}

// networkRoute registers a route for super admins on the main site.
func (s *Server) networkRoute(api *mux.Router, method, path string, h handlerFunc) {
	s.private(api, method, path, func(w http.ResponseWriter, r *http.Request) error {
		if site, ok := core.SiteFrom(r.Context()); ok && site != s.Sites.MainSiteID() {
			return core.Errorf(core.ENOROUTE, "No route was found matching the URL and request method.")
		}
		if !UserFrom(r.Context()).SuperAdmin {
			return core.Errorf(core.EFORBIDDEN, "Only the network's super admins may do that.")
		}
		return h(w, r)
	})
}

func (s *Server) listNetworkSites(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, s.Network.ListSites)
}

func (s *Server) updateNetworkSite(w http.ResponseWriter, r *http.Request) error {
	return respondIDBody(s.decodeJSON, w, r, s.Network.UpdateSite)
}

func (s *Server) getNetworkSettings(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, s.Network.NetworkSettings)
}

func (s *Server) updateNetworkSettings(w http.ResponseWriter, r *http.Request) error {
	return RespondBody(s.decodeJSON, w, r, s.Network.UpdateNetworkSettings)
}
