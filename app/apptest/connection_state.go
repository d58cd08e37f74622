package apptest

import (
	"context"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.ConnectionStateStore = (*ConnectionStore)(nil)

// UpdateConnectionSettings implements core.ConnectionStateStore: patch is
// merged into the stored settings (nil removes a key) and the OAuth status
// set, in one step.
func (s *ConnectionStore) UpdateConnectionSettings(_ context.Context, id int64, patch core.Settings, oauthStatus string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.rows[id]
	if !ok {
		return core.Errorf(core.ENOTFOUND, "Connection %d does not exist.", id)
	}
	if c.Settings == nil {
		c.Settings = core.Settings{}
	}
	for k, v := range patch {
		if v == nil {
			delete(c.Settings, k)
		} else {
			c.Settings[k] = v
		}
	}
	if oauthStatus != "" {
		c.OAuthStatus = oauthStatus
	}
	return nil
}

// UpdateConnectionHealth implements core.ConnectionStateStore.
func (s *ConnectionStore) UpdateConnectionHealth(_ context.Context, id int64, h core.ConnectionHealth) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.rows[id]
	if !ok {
		return core.Errorf(core.ENOTFOUND, "Connection %d does not exist.", id)
	}
	checked := h.CheckedAt
	c.HealthStatus, c.LastCheckedAt, c.LastError = h.Status, &checked, h.Error
	return nil
}
