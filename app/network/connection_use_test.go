package network_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/network"
	"github.com/mailsvc/mailsvc/core"
)

// ownedConnections returns a network of three sites that may override,
// with the network's connection net, site 2's own two and site 3's own
// three, all existing.
func ownedConnections(t *testing.T) (svc *network.Service, net, two, three int64) {
	t.Helper()
	ctx := context.Background()
	conns := apptest.NewConnectionStore()
	var ids []int64
	for _, name := range []string{"network", "site 2", "site 3"} {
		c := &core.Connection{Name: name, Driver: "smtp", IsActive: true}
		if err := conns.CreateConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	svc = &network.Service{Connections: conns, Sites: sites{{ID: 1}, {ID: 2}, {ID: 3}}, Settings: apptest.NewSettingsStore(),
		Quotas: &quotaStore{used: map[string]int64{}, marked: map[string]bool{}}, Logs: noLogs{}, Alerts: &alerts{}}
	if _, err := svc.UpdateNetworkSettings(ctx, map[string]any{"allow_site_overrides": true}); err != nil {
		t.Fatal(err)
	}
	for site := int64(2); site <= 3; site++ {
		if _, err := svc.UpdateSite(ctx, site, map[string]any{"overrides_allowed": true}); err != nil {
			t.Fatal(err)
		}
		if err := svc.AddOwnConnection(ctx, site, ids[site-1]); err != nil {
			t.Fatal(err)
		}
	}
	return svc, ids[0], ids[1], ids[2]
}

// TestConnectionUsable checks the rule: a site uses the network's
// connections and its own, never another site's; the network (site 0)
// only its own.
func TestConnectionUsable(t *testing.T) {
	svc, net, two, three := ownedConnections(t)
	for _, tc := range []struct {
		site, id int64
		want     bool
	}{
		{0, net, true}, {0, two, false}, {0, three, false},
		{1, net, true}, {1, two, false},
		{2, net, true}, {2, two, true}, {2, three, false},
		{3, three, true}, {3, two, false},
		{2, 999, true}, // existence is the caller's check
	} {
		got, err := svc.ConnectionUsable(context.Background(), tc.site, tc.id)
		if err != nil || got != tc.want {
			t.Errorf("site %d, connection %d: %v, %v; want %v", tc.site, tc.id, got, err, tc.want)
		}
	}
}

// TestSiteConnectionsAreTheSites checks a site's own default and
// fallback connections, set by the site (UpdateSiteOverrides) or by a
// super admin (UpdateSite): the network's or the site's own; another
// site's is refused with the text of a connection that does not exist.
func TestSiteConnectionsAreTheSites(t *testing.T) {
	ctx := context.Background()
	svc, net, two, three := ownedConnections(t)
	setters := map[string]func(site int64, patch map[string]any) error{
		"PUT /settings on the site's URL": func(site int64, patch map[string]any) error {
			return svc.UpdateSiteOverrides(ctx, site, patch)
		},
		"PUT /network/sites/{id}": func(site int64, patch map[string]any) error {
			_, err := svc.UpdateSite(ctx, site, patch)
			return err
		},
	}
	for name, set := range setters {
		for _, key := range []string{"default_connection_id", "fallback_connection_id"} {
			t.Run(name+" "+key, func(t *testing.T) {
				for _, ok := range []struct{ site, id int64 }{{2, net}, {2, two}, {3, three}} {
					if err := set(ok.site, map[string]any{key: float64(ok.id)}); err != nil {
						t.Errorf("site %d, connection %d: %v", ok.site, ok.id, err)
					}
				}
				for _, bad := range []struct{ site, id int64 }{{2, three}, {3, two}, {2, 999}} {
					err := set(bad.site, map[string]any{key: float64(bad.id)})
					if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)[key] != fmt.Sprintf("Connection %d does not exist.", bad.id) {
						t.Errorf("site %d, connection %d: %v %v", bad.site, bad.id, err, core.ErrorFields(err))
					}
				}
			})
		}
	}
	st, err := svc.SiteSettings(ctx, 2)
	if err != nil || st.DefaultConnectionID == nil || *st.DefaultConnectionID != two {
		t.Fatalf("site 2 keeps its own default: %+v, %v", st, err)
	}
}
