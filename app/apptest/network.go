package apptest

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/app/network"
)

// siteList is network.SiteLister over fixed sites.
type siteList []network.Site

// NetworkSites implements network.SiteLister.
func (s siteList) NetworkSites(context.Context) ([]network.Site, error) { return s, nil }

// NewNetwork returns a network's service (network.Service, the one
// core.ConnectionUse rule) over in-memory settings, with sites 1 to
// sites and the connections owners gives marked as their sites' own
// (connection id: site id). Sites may override the network's settings.
func NewNetwork(t testing.TB, sites int64, owners map[int64]int64) *network.Service {
	t.Helper()
	list := siteList{}
	for id := int64(1); id <= sites; id++ {
		list = append(list, network.Site{ID: id, Domain: "example.org", Path: "/"})
	}
	svc := &network.Service{Sites: list, Settings: NewSettingsStore()}
	ctx := context.Background()
	if _, err := svc.UpdateNetworkSettings(ctx, map[string]any{"allow_site_overrides": true}); err != nil {
		t.Fatal(err)
	}
	for id, site := range owners {
		if err := svc.AddOwnConnection(ctx, site, id); err != nil {
			t.Fatal(err)
		}
	}
	return svc
}
