package http

import (
	"net/http"

	"github.com/gorilla/mux"
)

// Module is a set of routes from a package outside the free API (the Pro
// add-on), joined to a Server through Server.Modules. The free API never
// imports a module: cmd/ builds it and hands it over.
type Module interface {
	// RegisterRoutes registers the module's routes through rt; it is
	// called once, from Server.Handler.
	RegisterRoutes(rt *Routes)
}

// HandlerFunc is a route handler that returns its error instead of
// writing it: a domain error becomes the spec's error answer, any other
// error a logged 500.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Route is one registered method and path (relative to Namespace, mux
// variables as {name}).
type Route struct {
	Method string `json:"method"`
	Path   string `json:"path"`
}

// Routes is what a Module registers its routes through: the server's
// namespace, with the server's authentication, capability check, error
// shape and body limit.
type Routes struct {
	s   *Server
	api *mux.Router
}

// Private registers a route that needs an authenticated user holding the
// REST capability, as every free route does.
func (rt *Routes) Private(method, path string, h HandlerFunc) {
	rt.s.private(rt.api, method, path, handlerFunc(h))
	rt.s.moduleRoutes = append(rt.s.moduleRoutes, Route{Method: method, Path: path})
}

// Public registers a route that answers without authentication (a
// provider's callback or webhook, which verifies its caller itself).
func (rt *Routes) Public(method, path string, h HandlerFunc) {
	rt.api.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			rt.s.writeError(w, r, err)
		}
	})).Methods(method)
	rt.s.moduleRoutes = append(rt.s.moduleRoutes, Route{Method: method, Path: path})
}

// DecodeJSON reads a JSON object body into dst with the server's rules:
// a malformed body, one over the size limit or a field of the wrong JSON
// type is a 400 bad_request; an empty body decodes as {}.
func (rt *Routes) DecodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	return rt.s.decodeJSON(w, r, dst)
}

// WriteJSON writes v as a JSON answer with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// ModuleRoutes returns the routes the Server's modules registered, in
// order; it is filled by Handler.
func (s *Server) ModuleRoutes() []Route {
	return append([]Route(nil), s.moduleRoutes...)
}

// registerModules lets each module register its routes.
func (s *Server) registerModules(api *mux.Router) {
	s.moduleRoutes = nil
	rt := &Routes{s: s, api: api}
	for _, m := range s.Modules {
		m.RegisterRoutes(rt)
	}
}
