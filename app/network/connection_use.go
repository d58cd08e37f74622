package network

import (
	"context"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// cachedOwners is ConnectionSites as read at a time.
type cachedOwners struct {
	at     time.Time
	owners map[int64]int64
}

var _ core.ConnectionUse = (*Service)(nil)

// ConnectionUsable reports whether site may use connection id: to send
// through it, or to name it as a default, fallback, alert, routing or
// test connection. The network's connections (those no site created
// for itself) are every site's; a site's own connection
// (AddOwnConnection) is that site's only. Site 0 is the network itself:
// the network's connections only. The owners are read at most
// settingsTTL ago, so the delivery workers may ask for every message.
func (s *Service) ConnectionUsable(ctx context.Context, site, id int64) (bool, error) {
	owners, err := s.connectionOwners(ctx)
	if err != nil {
		return false, err
	}
	owner, owned := owners[id]
	return !owned || owner == site && site != 0, nil
}

// connectionOwners returns ConnectionSites, read at most settingsTTL ago.
func (s *Service) connectionOwners(ctx context.Context) (map[int64]int64, error) {
	now := time.Now()
	s.mu.Lock()
	c := s.owners
	s.mu.Unlock()
	if c != nil && now.Sub(c.at) <= settingsTTL {
		return c.owners, nil
	}
	owners, err := s.ConnectionSites(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.owners = &cachedOwners{at: now, owners: owners}
	s.mu.Unlock()
	return owners, nil
}
