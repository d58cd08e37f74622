package http

import (
	"net/http"
	"regexp"
	"strings"

	"github.com/gorilla/mux"
)

// NamespaceName is the REST namespace as WordPress names it (no leading
// slash, no /wp-json).
const NamespaceName = "mailsvc/v1"

// restRoot is the path of WordPress's REST index.
const restRoot = "/wp-json"

// RegisteredRoute is one path of the router with every method registered
// on it.
type RegisteredRoute struct {
	// Path is the mux path template from the server root, variables as
	// {name} or {name:pattern}.
	Path string `json:"path"`
	// Methods are in registration order.
	Methods []string `json:"methods"`
}

// discoveryRoutes registers WordPress's route discovery: GET /wp-json/
// (the REST index naming the namespace) and GET /wp-json/mailsvc/v1 (the
// namespace index). Both need authentication and the REST capability, as
// every free route does: the spec's free part registers no public route.
func (s *Server) discoveryRoutes(root, api *mux.Router) {
	root.Handle(restRoot+"/", s.authenticated(s.restIndex)).Methods(http.MethodGet)
	// "" is the namespace path itself: /wp-json/mailsvc/v1.
	api.Handle("", s.authenticated(s.namespaceIndex)).Methods(http.MethodGet)
}

// RegisteredRoutes returns every path the router serves with a method,
// in registration order, with the methods of each path merged (the REST
// routes, the modules' routes, discovery and the probes). It is filled by
// Handler.
func (s *Server) RegisteredRoutes() []RegisteredRoute {
	if s.router == nil {
		return nil
	}
	var out []RegisteredRoute
	index := map[string]int{}
	_ = s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		methods, err := route.GetMethods()
		if err != nil {
			// A subrouter or a route without a method matcher.
			return nil
		}
		path, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		i, ok := index[path]
		if !ok {
			i = len(out)
			index[path] = i
			out = append(out, RegisteredRoute{Path: path})
		}
		out[i].Methods = append(out[i].Methods, methods...)
		return nil
	})
	return out
}

// routeData is one route of a WordPress index, as
// WP_REST_Server::get_data_for_route describes it.
type routeData struct {
	Namespace string         `json:"namespace"`
	Methods   []string       `json:"methods"`
	Endpoints []endpointData `json:"endpoints"`
	Links     map[string]any `json:"_links,omitempty"`
}

// endpointData is one method of a route with its arguments.
type endpointData struct {
	Methods []string           `json:"methods"`
	Args    map[string]argData `json:"args"`
}

// argData describes one argument in WordPress's schema keywords.
type argData struct {
	Type     string   `json:"type,omitempty"`
	Enum     []string `json:"enum,omitempty"`
	Pattern  string   `json:"pattern,omitempty"`
	Default  any      `json:"default,omitempty"`
	Required bool     `json:"required"`
}

// link is one entry of a WordPress _links relation.
type link struct {
	Href string `json:"href"`
}

// namespaceIndex answers GET /wp-json/mailsvc/v1 with the namespace's
// routes, as WP_REST_Server::get_namespace_index does.
func (s *Server) namespaceIndex(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]any{
		"namespace": NamespaceName,
		"routes":    s.routeIndex(r),
		"_links":    map[string]any{"up": []link{{Href: s.baseURL(r) + restRoot + "/"}}},
	})
	return nil
}

// restIndex answers GET /wp-json/ with the fields of WordPress's REST
// index: the site, the namespaces (only mailsvc/v1) and every route.
func (s *Server) restIndex(w http.ResponseWriter, r *http.Request) error {
	base := s.baseURL(r)
	routes := s.routeIndex(r)
	routes["/"] = routeData{
		Namespace: "",
		Methods:   []string{http.MethodGet},
		Endpoints: []endpointData{{
			Methods: []string{http.MethodGet},
			Args:    map[string]argData{"context": {Default: "view"}},
		}},
		Links: selfLink(base + restRoot + "/"),
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"name":            "mailsvc",
		"description":     "",
		"url":             base,
		"home":            base,
		"gmt_offset":      0,
		"timezone_string": "",
		"namespaces":      []string{NamespaceName},
		"authentication":  map[string]any{},
		"routes":          routes,
		"_links":          map[string]any{"help": []link{{Href: "https://developer.wordpress.org/rest-api/"}}},
	})
	return nil
}

// routeIndex describes every registered route of the namespace, keyed by
// its WordPress route ("/mailsvc/v1/connections/(?P<id>[^/]+)").
func (s *Server) routeIndex(r *http.Request) map[string]routeData {
	base := s.baseURL(r)
	out := map[string]routeData{}
	for _, rr := range s.RegisteredRoutes() {
		if rr.Path != Namespace && !strings.HasPrefix(rr.Path, Namespace+"/") {
			continue
		}
		rel := "/" + NamespaceName + strings.TrimPrefix(rr.Path, Namespace)
		key, args := wordpressRoute(rel)
		d := routeData{Namespace: NamespaceName, Methods: rr.Methods}
		for _, m := range rr.Methods {
			ep := endpointData{Methods: []string{m}, Args: map[string]argData{}}
			for name, a := range args {
				ep.Args[name] = a
			}
			if rr.Path == Namespace {
				ep.Args["namespace"] = argData{Default: NamespaceName}
				ep.Args["context"] = argData{Default: "view"}
			}
			d.Endpoints = append(d.Endpoints, ep)
		}
		if len(args) == 0 {
			d.Links = selfLink(base + restRoot + rel)
		}
		out[key] = d
	}
	return out
}

// selfLink is the _links of a route without variables.
func selfLink(href string) map[string]any {
	return map[string]any{"self": []link{{Href: href}}}
}

// muxVariable matches a mux path variable: {name} or {name:pattern}.
var muxVariable = regexp.MustCompile(`\{(\w+)(?::([^{}]*))?\}`)

// alternation matches a pattern that lists literal values (a|b|c).
var alternation = regexp.MustCompile(`^\w+(\|\w+)*$`)

// wordpressRoute turns a mux path template into WordPress's route form,
// each variable a named group ((?P<id>[^/]+)), and describes the
// variables as required arguments: an id is an integer, a list of
// literal values an enum, anything else a string.
func wordpressRoute(tpl string) (string, map[string]argData) {
	args := map[string]argData{}
	route := muxVariable.ReplaceAllStringFunc(tpl, func(v string) string {
		m := muxVariable.FindStringSubmatch(v)
		name, pattern := m[1], m[2]
		a := argData{Type: "string", Required: true}
		switch {
		case pattern != "" && alternation.MatchString(pattern):
			a.Enum = strings.Split(pattern, "|")
		case pattern != "":
			a.Pattern = "^" + pattern + "$"
		case name == "id":
			a.Type = "integer"
		}
		args[name] = a
		if pattern == "" {
			pattern = "[^/]+"
		}
		return "(?P<" + name + ">" + pattern + ")"
	})
	return route, args
}
