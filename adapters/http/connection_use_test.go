package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/network"
	"github.com/mailsvc/mailsvc/core"

	api "github.com/mailsvc/mailsvc/adapters/http"
)

// networkAuth authenticates on a network: "Bearer super" is a super
// admin, "Bearer ann" an administrator (manage_options) of the site of
// the URL.
type networkAuth struct{}

func (networkAuth) Authenticate(r *http.Request, _ bool) (*core.User, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer super":
		return &core.User{ID: 1, Login: "super", SuperAdmin: true, Caps: map[string]bool{"manage_options": true}}, nil
	case "Bearer ann":
		return &core.User{ID: 2, Login: "ann", Caps: map[string]bool{"manage_options": true}}, nil
	}
	return nil, core.Errorf(core.EUNAUTHORIZED, "bad credentials")
}

// noQuotas is core.SiteQuotaStore with nothing counted.
type noQuotas struct{}

func (noQuotas) ReserveSiteQuota(context.Context, int64, string, string, int64, int64) (core.QuotaReservation, error) {
	return core.QuotaReservation{OK: true}, nil
}
func (noQuotas) ReleaseSiteQuota(context.Context, int64, string, string) error { return nil }
func (noQuotas) MarkQuotaAlert(context.Context, int64, string, int) (bool, error) {
	return false, nil
}
func (noQuotas) SiteQuotaUsage(context.Context, string) (map[int64]int64, error) {
	return map[int64]int64{}, nil
}

// noSiteLogs counts no logs.
type noSiteLogs struct{}

func (noSiteLogs) SiteLogCounts(context.Context, time.Time) (map[int64]core.SiteLogCount, error) {
	return nil, nil
}

// threeSites lists the stub network's sites.
type threeSites struct{}

func (threeSites) NetworkSites(context.Context) ([]network.Site, error) {
	return []network.Site{{ID: 1, Path: "/"}, {ID: 2, Path: "/site2/"}, {ID: 3, Path: "/site3/"}}, nil
}

// countingSender is an app.ImmediateSender that counts the messages it
// sends, by connection.
type countingSender struct{ sent map[int64]int }

func (s *countingSender) SendNow(_ context.Context, connID int64, msg *core.Message, source string, _ core.OutcomeHostHooks) (*core.Log, error) {
	s.sent[connID]++
	return &core.Log{ID: 1, Status: core.StatusDelivered, ConnectionID: &connID, Message: *msg, Source: source}, nil
}

// TestOtherSitesConnectionIsMissing checks, on a network of three sites
// that may override, that the routes naming a connection to use answer
// another site's own connection exactly as one that does not exist (422,
// the same body), whatever the path: the test email, a site's own
// default and fallback, the network's, and those a super admin sets for
// a site; and that nothing is sent through it.
func TestOtherSitesConnectionIsMissing(t *testing.T) {
	ctx := context.Background()
	conns := apptest.NewConnectionStore()
	var ids []int64
	for _, name := range []string{"network", "site 2", "site 3"} {
		c := &core.Connection{Name: name, Driver: "httptestmail", IsActive: true, Settings: core.Settings{"host": "mx.example.com", "from_email": "a@example.com"}}
		if err := conns.CreateConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	net, two, three, missing := ids[0], ids[1], ids[2], int64(999)
	netSvc := &network.Service{Connections: conns, Sites: threeSites{}, Settings: apptest.NewSettingsStore(), Quotas: noQuotas{}, Logs: noSiteLogs{}}
	if _, err := netSvc.UpdateNetworkSettings(ctx, map[string]any{"allow_site_overrides": true}); err != nil {
		t.Fatal(err)
	}
	for site, id := range map[int64]int64{2: two, 3: three} {
		if _, err := netSvc.UpdateSite(ctx, site, map[string]any{"overrides_allowed": true}); err != nil {
			t.Fatal(err)
		}
		if err := netSvc.AddOwnConnection(ctx, site, id); err != nil {
			t.Fatal(err)
		}
	}
	connApp := &app.Connections{Store: conns, Cipher: apptest.Cipher{Key: "k"}, Hooks: &core.Hooks{}}
	sender := &countingSender{sent: map[int64]int{}}
	s := &api.Server{
		Auth:        networkAuth{},
		Connections: connApp,
		Settings:    &app.Settings{Store: apptest.NewSettingsStore(), Connections: conns, Use: netSvc},
		Actions:     &app.ConnectionActions{Connections: connApp, Sender: sender, Hooks: &core.Hooks{}, Use: netSvc},
		Logs:        &app.Logs{Store: apptest.NewLogStore()},
		Hooks:       &core.Hooks{},
		Sites:       stubSites{},
		Network:     netSvc,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)

	// answer is the status and body of a request naming connection id,
	// "Connection <id> " written "Connection N ".
	answer := func(method, path, token, body string, id int64) (int, string) {
		t.Helper()
		r := do(t, ts, method, path, token, strings.NewReader(fmt.Sprintf(body, id)))
		return r.Status, strings.ReplaceAll(string(r.Body), fmt.Sprintf("Connection %d ", id), "Connection N ")
	}
	testEmail := `{"connection_id":%d,"to":"anyone@elsewhere.example","subject":"as site 3"}`
	for _, tc := range []struct {
		name, method, path, token, body string
		usable                          []int64
	}{
		{"site 2's test email", "POST", "/site2" + api.Namespace + "/test-email", "ann", testEmail, []int64{net, two}},
		{"site 2's default", "PUT", "/site2" + api.Namespace + "/settings", "ann", `{"default_connection_id":%d}`, []int64{net, two}},
		{"site 2's fallback", "PUT", "/site2" + api.Namespace + "/settings", "ann", `{"fallback_connection_id":%d}`, []int64{net, two}},
		{"site 2's default by a super admin on its URL", "PUT", "/site2" + api.Namespace + "/settings", "super", `{"default_connection_id":%d}`, []int64{net, two}},
		{"site 2's default by a super admin", "PUT", api.Namespace + "/network/sites/2", "super", `{"default_connection_id":%d}`, []int64{net, two}},
		{"site 2's fallback by a super admin", "PUT", api.Namespace + "/network/sites/2", "super", `{"fallback_connection_id":%d}`, []int64{net, two}},
		{"the network's default", "PUT", api.Namespace + "/settings", "super", `{"default_connection_id":%d}`, []int64{net}},
		{"the network's summary report", "PUT", api.Namespace + "/settings", "super", `{"summary_report":{"connection_id":%d}}`, []int64{net}},
		{"a super admin's test email for the network", "POST", api.Namespace + "/test-email", "super", testEmail, []int64{net}},
		{"a super admin's test email on site 3's URL", "POST", "/site3" + api.Namespace + "/test-email", "super", testEmail, []int64{net, three}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus, want := answer(tc.method, tc.path, tc.token, tc.body, missing)
			if wantStatus != 422 || !strings.Contains(want, "Connection N does not exist.") {
				t.Fatalf("naming no connection: %d %s", wantStatus, want)
			}
			for _, id := range []int64{net, two, three} {
				status, got := answer(tc.method, tc.path, tc.token, tc.body, id)
				usable := id == tc.usable[0] || len(tc.usable) > 1 && id == tc.usable[1]
				switch {
				case usable && status != 200:
					t.Errorf("connection %d: %d %s", id, status, got)
				case !usable && (status != 422 || got != want):
					t.Errorf("connection %d: %d %s; want the missing connection's %s", id, status, got, want)
				}
			}
		})
	}
	if sender.sent[two] != 1 || sender.sent[three] != 1 || sender.sent[net] != 3 {
		t.Fatalf("sent %v: site 2's own once (by site 2), site 3's own once (on its URL), the network's thrice", sender.sent)
	}
}
