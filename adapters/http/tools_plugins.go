package http

import (
	"context"
	"net/http"
)

// Plugin is one active plugin of the site as GET /tools/plugins shows it.
type Plugin struct {
	File    string `json:"file"`
	Slug    string `json:"slug"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// PluginService lists the site's active plugins; standalone, it returns
// an empty list.
type PluginService interface {
	ActivePlugins(ctx context.Context) ([]Plugin, error)
}

func (s *Server) listPlugins(w http.ResponseWriter, r *http.Request) error {
	list, err := s.Plugins.ActivePlugins(r.Context())
	if err != nil {
		return err
	}
	if list == nil {
		list = []Plugin{}
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}
