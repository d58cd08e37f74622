package http

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/app/fleet"
	"github.com/mailsvc/mailsvc/core"
)

// SiteHeader carries the site key by which a site's bridge names the
// site a forwarded request is for, when one service serves a fleet
// (wordpress.SiteKey): only the site's own salts give it
// (docs/security.md).
const SiteHeader = "X-Mailsvc-Site"

// FleetRoute is the operator's view, under Namespace.
const FleetRoute = "/fleet/sites"

// FleetSite is one site of a fleet as the router sees it.
type FleetSite interface {
	// Key is the site key its bridge sends in SiteHeader ("" while it
	// is not known yet).
	Key() string
	// ServesHost reports whether host (a request's Host, lower-cased,
	// with its port if any) is the host of the site's home or admin URL.
	ServesHost(host string) bool
	// Handler returns the site's handler, or nil and why the site is
	// not served now.
	Handler() (http.Handler, string)
}

// FleetView reads the operator's view of every site.
type FleetView interface {
	View(ctx context.Context) []fleet.SiteView
}

// Fleet routes the requests of one process serving several WordPress
// sites to the site each is for, and serves what belongs to the process:
// the probes, /metrics with every site's series, and the operator's view.
type Fleet struct {
	Sites []FleetSite
	// Token is MAILSVC_FLEET_TOKEN, which GET FleetRoute requires as a
	// bearer token; without one the route does not exist (404).
	Token string
	View  FleetView
	// Probes serves /metrics, /healthz and /readyz of the process.
	Probes *Probes
}

// FleetRoutes returns the operations the fleet's router serves itself,
// beside each site's routes and the probes: the operator's view.
func FleetRoutes() []RegisteredRoute {
	return []RegisteredRoute{{Path: Namespace + FleetRoute, Methods: []string{http.MethodGet}}}
}

// Handler returns the fleet's root handler.
func (f *Fleet) Handler() http.Handler {
	r := mux.NewRouter()
	if f.Probes != nil {
		f.Probes.register(r)
	}
	r.HandleFunc(Namespace+FleetRoute, f.fleetSites)
	r.NotFoundHandler = http.HandlerFunc(f.route)
	r.MethodNotAllowedHandler = http.HandlerFunc(f.route)
	return r
}

// route hands a request to its site: the one whose key the request's
// SiteHeader carries (an unknown key is 401), else, for a direct caller,
// the one whose home URL has the request's Host. Credentials are then
// checked by that site alone, against its own users and salts.
func (f *Fleet) route(w http.ResponseWriter, r *http.Request) {
	site, err := f.site(r)
	if err != nil {
		writeFleetError(w, err)
		return
	}
	h, problem := site.Handler()
	if h == nil {
		writeFleetError(w, core.Errorf(core.EUNAVAILABLE, "This site's mail service is not available: %s", problem))
		return
	}
	h.ServeHTTP(w, r)
}

// site finds the site r is for.
func (f *Fleet) site(r *http.Request) (FleetSite, error) {
	if keys := r.Header.Values(SiteHeader); len(keys) > 0 {
		if len(keys) == 1 {
			for _, s := range f.Sites {
				if k := s.Key(); k != "" && subtle.ConstantTimeCompare([]byte(k), []byte(strings.TrimSpace(keys[0]))) == 1 {
					return s, nil
				}
			}
		}
		return nil, core.Errorf(core.EUNAUTHORIZED, "The site key of this request names no site of this service.")
	}
	host := strings.ToLower(r.Host)
	for _, s := range f.Sites {
		if s.ServesHost(host) {
			return s, nil
		}
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		for _, s := range f.Sites {
			if s.ServesHost(h) {
				return s, nil
			}
		}
	}
	return nil, core.Errorf(core.ENOROUTE, "No site of this service has the host %s.", r.Host)
}

// fleetSites serves GET FleetRoute: every site's queue, failures,
// deliveries, connections' health and held mail, for the operator's
// bearer token only. It does not exist without a token, nor for a
// request that came through a site's bridge (it carries SiteHeader).
func (f *Fleet) fleetSites(w http.ResponseWriter, r *http.Request) {
	if f.Token == "" || len(r.Header.Values(SiteHeader)) > 0 {
		writeFleetError(w, core.Errorf(core.ENOROUTE, "No route was found matching the URL and request method."))
		return
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(f.Token)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mailsvc fleet"`)
		writeFleetError(w, core.Errorf(core.EUNAUTHORIZED, "The fleet's bearer token (MAILSVC_FLEET_TOKEN) is required."))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeFleetError(w, core.Errorf(core.ENOROUTE, "No route was found matching the URL and request method."))
		return
	}
	writeJSON(w, http.StatusOK, f.View.View(r.Context()))
}

// writeFleetError writes a domain error of the router in the spec's
// error shape.
func writeFleetError(w http.ResponseWriter, err error) {
	code := core.ErrorCode(err)
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, errorBody{Code: code, Message: core.ErrorMessage(err), Data: errorData{Status: status}})
}
