package http

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

// connectionBody is the JSON body of POST and PUT /connections.
type connectionBody struct {
	Name     *string        `json:"name"`
	Driver   *string        `json:"driver"`
	IsActive *bool          `json:"is_active"`
	Settings map[string]any `json:"settings"`
}

func (b connectionBody) input() app.ConnectionInput {
	return app.ConnectionInput{Name: b.Name, Driver: b.Driver, IsActive: b.IsActive, Settings: b.Settings}
}

// idsBody is the JSON body of bulk routes.
type idsBody struct {
	IDs []int64 `json:"ids"`
}

func (s *Server) listConnections(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r)
	if err != nil {
		return err
	}
	site, owners, err := s.connectionSiteFilter(r.Context(), UserFrom(r.Context()))
	if err != nil {
		return err
	}
	if site > 0 && len(owners) > 0 {
		// A site's administrator: the network's connections and the
		// site's own, never another site's.
		all, _, err := s.Connections.List(r.Context(), 0, 0)
		if err != nil {
			return err
		}
		visible := make([]*core.Connection, 0, len(all))
		for _, c := range all {
			if owner, ok := owners[c.ID]; !ok || owner == site {
				visible = append(visible, c)
			}
		}
		from, to := min(p.Offset(), len(visible)), min(p.Offset()+p.PerPage, len(visible))
		writeList(w, visible[from:to], len(visible), p)
		return nil
	}
	conns, total, err := s.Connections.List(r.Context(), p.Offset(), p.PerPage)
	if err != nil {
		return err
	}
	writeList(w, conns, total, p)
	return nil
}

func (s *Server) getConnection(w http.ResponseWriter, r *http.Request) error {
	return respondID(w, r, s.Connections.Get)
}

func (s *Server) createConnection(w http.ResponseWriter, r *http.Request) error {
	return RespondCreated(s.decodeJSON, w, r, func(ctx context.Context, body connectionBody) (*core.Connection, error) {
		c, err := s.Connections.Create(ctx, body.input())
		if err != nil {
			return nil, err
		}
		if site := s.siteSettingsRequest(r); site > 0 && !UserFrom(ctx).SuperAdmin {
			// A site that may override: the connection is the site's.
			if err := s.Network.AddOwnConnection(ctx, site, c.ID); err != nil {
				return nil, err
			}
		}
		return c, nil
	})
}

func (s *Server) updateConnection(w http.ResponseWriter, r *http.Request) error {
	return respondIDBody(s.decodeJSON, w, r, func(ctx context.Context, id int64, body connectionBody) (*core.Connection, error) {
		return s.Connections.Update(ctx, id, body.input())
	})
}

func (s *Server) deleteConnection(w http.ResponseWriter, r *http.Request) error {
	return deleteByID(w, r, s.Connections.Delete)
}

func (s *Server) deleteConnections(w http.ResponseWriter, r *http.Request) error {
	return deleteIDs(s.decodeJSON, w, r, s.Connections.DeleteMany)
}

func (s *Server) listTransports(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, core.Drivers())
	return nil
}

func (s *Server) getTransport(w http.ResponseWriter, r *http.Request) error {
	slug := mux.Vars(r)["driver"]
	d, ok := core.LookupDriver(slug)
	if !ok {
		return core.Errorf(core.ENOTFOUND, "No transport named %q.", slug)
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// getSettingsSchema answers how the Settings screen shows the free
// settings: the groups in order and every key with its type, default,
// bounds, group, label, unit and help.
func (s *Server) getSettingsSchema(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]any{"groups": core.SettingGroups, "settings": core.FreeSettings})
	return nil
}

func (s *Server) getSettings(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Settings.Get(r.Context())
	if err != nil {
		return err
	}
	if site := s.siteSettingsRequest(r); site > 0 {
		if v, err = s.withSiteSettings(r.Context(), site, v); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) updateSettings(w http.ResponseWriter, r *http.Request) error {
	var patch map[string]any
	if err := s.decodeJSON(w, r, &patch); err != nil {
		return err
	}
	if site := s.siteSettingsRequest(r); site > 0 {
		// On a site's URL: the site's own connections and sender; the
		// rest is the network's.
		if err := s.Network.UpdateSiteOverrides(r.Context(), site, patch); err != nil {
			return err
		}
		return s.getSettings(w, r)
	}
	v, err := s.Settings.Update(r.Context(), patch)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}
