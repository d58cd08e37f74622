package cli

import (
	"context"
	"log/slog"

	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/app/network"
	"github.com/mailsvc/mailsvc/core"
)

// network returns the WordPress multisite network wp-config.php defines
// (MULTISITE and the *_CURRENT_SITE constants), nil for a single site or
// standalone.
func (rt *runtime) network() (*wordpress.Network, error) {
	if rt.wp == nil {
		return nil, nil
	}
	ms, ok := rt.wp.Multisite()
	if !ok {
		return nil, nil
	}
	return wordpress.NewNetwork(rt.db.Gorm(), rt.prefix, wordpress.NetworkConfig{
		SubdomainInstall: ms.SubdomainInstall, Domain: ms.Domain, Path: ms.Path,
		NetworkID: ms.NetworkID, MainSiteID: ms.MainSiteID,
	})
}

// networkSites lists a network's sites for network.Service.
type networkSites struct{ n *wordpress.Network }

// NetworkSites implements network.SiteLister.
func (s networkSites) NetworkSites(ctx context.Context) ([]network.Site, error) {
	sites, err := s.n.Sites(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]network.Site, 0, len(sites))
	for _, site := range sites {
		if site.Deleted {
			continue
		}
		out = append(out, network.Site{ID: site.ID, Domain: site.Domain, Path: site.Path})
	}
	return out, nil
}

// networkService returns the network's service over the database, its
// alerts raised through alerts.
func (rt *runtime) networkService(n *wordpress.Network, alerts core.Alerter, log *slog.Logger) *network.Service {
	return &network.Service{Connections: rt.db.Connections(), Sites: networkSites{n}, Settings: rt.db.Settings(), Quotas: rt.db.Sites(), Logs: rt.db.Sites(), Alerts: alerts,
		NetworkName: n.Config().Domain, Logger: log}
}
