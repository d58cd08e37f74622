package delivery

import (
	"context"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// siteOverrides is SiteSettings from fixed connection ids by site, keyed
// default_connection_id or fallback_connection_id.
type siteOverrides map[int64]map[string]any

func (s siteOverrides) SiteOverrides(_ context.Context, site int64) (core.SiteOverrides, error) {
	var out core.SiteOverrides
	for k, v := range s[site] {
		id := v.(int64)
		switch k {
		case "default_connection_id":
			out.DefaultConnectionID = &id
		case "fallback_connection_id":
			out.FallbackConnectionID = &id
		}
	}
	return out, nil
}

// TestSiteMessagesKeepOffOtherSitesConnections checks the second guard
// of the connection rule on a network: stored before the rule, a
// default or fallback that names another site's own connection counts
// as unset (a site's own giving way to the network's), and a message
// pinned to one fails as if the connection did not exist; nothing goes
// through it but the owning site's messages.
func TestSiteMessagesKeepOffOtherSitesConnections(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		network   fakeSettings // connection numbers 1..3
		own       map[string]any
		site      int64
		pinned    int64
		status    string
		sentConn  int64 // connection number, 0 for none
		lastError string
	}{
		{"site 2's own default names site 3's", nil, map[string]any{"default_connection_id": int64(3)}, 2, 0, core.StatusDelivered, 1, ""},
		{"the network's default names site 3's: site 2", fakeSettings{"default_connection_id": int64(3)}, nil, 2, 0, core.StatusFailed, 0, "no default connection"},
		{"the network's default names site 3's: site 3", fakeSettings{"default_connection_id": int64(3)}, nil, 3, 0, core.StatusDelivered, 3, ""},
		{"site 2's own fallback names site 3's", fakeSettings{"fallback_connection_id": int64(2)}, map[string]any{"default_connection_id": int64(1), "fallback_connection_id": int64(3)}, 2, 0, core.StatusDelivered, 2, ""},
		{"site 2's message pinned to site 3's", nil, nil, 2, 3, core.StatusFailed, 0, "does not exist"},
		{"site 3's message pinned to its own", nil, nil, 3, 3, core.StatusDelivered, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scripts := map[int64][]error{}
			if tt.own["fallback_connection_id"] != nil {
				scripts[1] = []error{perm} // the default fails: the fallback's turn
			}
			e := newEnv(t, tt.network, scripts)
			base := e.svc.mustBase(t, e) - 1
			own := map[string]any{}
			for k, v := range tt.own {
				own[k] = base + v.(int64)
			}
			e.svc.o.SiteSettings = siteOverrides{tt.site: own}
			e.svc.o.ConnectionUse = apptest.NewNetwork(t, 3, map[int64]int64{base + 3: 3})
			l := &core.Log{SiteID: tt.site, Message: msg(tt.name)}
			if tt.pinned != 0 {
				pinned := base + tt.pinned
				l.ConnectionID = &pinned
			}
			id := e.enqueue(t, l)
			e.drain(t)
			got, err := e.logs.FindLogByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var sent int64
			if got.Status == core.StatusDelivered && got.SentConnectionID != nil {
				sent = *got.SentConnectionID - base
			}
			if got.Status != tt.status || sent != tt.sentConn || !strings.Contains(got.LastError, tt.lastError) {
				t.Fatalf("status %s through %d (%q); want %s through %d (%q)", got.Status, sent, got.LastError, tt.status, tt.sentConn, tt.lastError)
			}
			if calls, _ := e.tr[3].stats(); calls > 0 && tt.site != 3 {
				t.Fatalf("site %d's message went through site 3's connection", tt.site)
			}
		})
	}
}
