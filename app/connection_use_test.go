package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// useFixture is a network of three sites with the network's connection
// net, site 2's own two and site 3's own three, all existing and active,
// and missing, an id no connection has.
type useFixture struct {
	conns                    *apptest.ConnectionStore
	use                      core.ConnectionUse
	net, two, three, missing int64
}

func newUseFixture(t *testing.T) useFixture {
	t.Helper()
	conns := apptest.NewConnectionStore()
	var ids []int64
	for _, name := range []string{"network", "site 2", "site 3"} {
		c := &core.Connection{Name: name, Driver: "smtp", IsActive: true}
		if err := conns.CreateConnection(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	return useFixture{conns: conns, use: apptest.NewNetwork(t, 3, map[int64]int64{ids[1]: 2, ids[2]: 3}),
		net: ids[0], two: ids[1], three: ids[2], missing: 999}
}

// storedConnections is EffectiveConnections over a connection store.
type storedConnections struct{ *apptest.ConnectionStore }

func (s storedConnections) Effective(ctx context.Context, id int64) (*core.Connection, error) {
	return s.FindConnectionByID(ctx, id)
}

// TestTestEmailConnectionUse checks POST /test-email on a network: the
// acting site sends through the network's connections and its own;
// another site's is refused with the text of a missing connection, and
// nothing is sent.
func TestTestEmailConnectionUse(t *testing.T) {
	f := newUseFixture(t)
	to := "anyone@elsewhere.example"
	for _, tc := range []struct {
		name     string
		site     int64
		id       int64
		usable   bool
		noActing bool
	}{
		{"site 2, the network's", 2, f.net, true, false},
		{"site 2, its own", 2, f.two, true, false},
		{"site 2, site 3's", 2, f.three, false, false},
		{"site 2, none", 2, f.missing, false, false},
		{"the network, the network's", 0, f.net, true, false},
		{"the network, site 3's", 0, f.three, false, false},
		{"a trusted caller (no acting site)", 0, f.three, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sender := &outcomeSender{status: core.StatusDelivered}
			a := &app.ConnectionActions{Connections: storedConnections{f.conns}, Sender: sender, Hooks: &core.Hooks{}, Use: f.use}
			ctx := context.Background()
			if !tc.noActing {
				ctx = core.WithActingSite(ctx, tc.site)
			}
			id := tc.id
			res, err := a.SendTestEmail(ctx, app.TestEmailInput{To: &to, ConnectionID: &id})
			if tc.usable {
				if err != nil || !res.Success {
					t.Fatalf("%+v, %v", res, err)
				}
				return
			}
			if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)["connection_id"] != fmt.Sprintf("Connection %d does not exist.", id) {
				t.Fatalf("%+v, %v %v", res, err, core.ErrorFields(err))
			}
			if sender.asked || res != nil {
				t.Fatal("sent")
			}
		})
	}
}

// TestNetworkSettingsConnectionUse checks the network's settings (PUT
// /settings on the main site's URL): the default, fallback and summary
// report connections are the network's; a site's own is refused with
// the text of a missing connection.
func TestNetworkSettingsConnectionUse(t *testing.T) {
	f := newUseFixture(t)
	svc := &app.Settings{Store: apptest.NewSettingsStore(), Connections: f.conns, Use: f.use}
	ctx := context.Background()
	for _, key := range []string{"default_connection_id", "fallback_connection_id", core.SummaryReportKey + ".connection_id"} {
		patch := func(id int64) map[string]any {
			if key == core.SummaryReportKey+".connection_id" {
				return map[string]any{core.SummaryReportKey: map[string]any{"connection_id": float64(id)}}
			}
			return map[string]any{key: float64(id)}
		}
		if _, err := svc.Update(ctx, patch(f.net)); err != nil {
			t.Errorf("%s, the network's: %v", key, err)
		}
		for _, id := range []int64{f.two, f.three, f.missing} {
			_, err := svc.Update(ctx, patch(id))
			if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)[key] != fmt.Sprintf("Connection %d does not exist.", id) {
				t.Errorf("%s, connection %d: %v %v", key, id, err, core.ErrorFields(err))
			}
		}
	}
	// A single site (no rule) names any connection.
	single := &app.Settings{Store: apptest.NewSettingsStore(), Connections: f.conns}
	if _, err := single.Update(ctx, map[string]any{"default_connection_id": float64(f.three)}); err != nil {
		t.Errorf("single site: %v", err)
	}
}

// TestResendConnectionUse checks that a log pinned to a connection its
// site may not use (a test email through another site's connection,
// sent before the rule) is not resent, as if the connection did not
// exist; one pinned to its site's own is.
func TestResendConnectionUse(t *testing.T) {
	f := newUseFixture(t)
	ctx := context.Background()
	logs := apptest.NewLogStore()
	svc := &app.Logs{Store: logs, Use: f.use}
	add := func(site, conn int64) int64 {
		t.Helper()
		until := time.Now().Add(time.Minute)
		l := &core.Log{SiteID: site, ConnectionID: &conn, Status: core.StatusSending, LeaseOwner: "test", LeaseUntil: &until, Source: app.SourceTest,
			Message: core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "b@example.com"}}, Subject: "s", Text: "t"}}
		if err := logs.EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		if _, err := logs.RecordOutcomes(ctx, "test", []core.LogOutcome{{LogID: l.ID, Status: core.StatusDelivered}}); err != nil {
			t.Fatal(err)
		}
		return l.ID
	}
	theirs, own := add(2, f.three), add(2, f.two)
	want := fmt.Sprintf("Connection %d does not exist.", f.three)
	if err := svc.ResendOne(ctx, theirs); core.ErrorFields(err)["connection_id"] != want {
		t.Errorf("resend: %v", err)
	}
	if _, err := svc.ResendOneTo(ctx, theirs, app.ResendRecipients{To: []string{"c@example.com"}}); core.ErrorFields(err)["connection_id"] != want {
		t.Errorf("resend to others: %v", err)
	}
	if ids, err := svc.ResendTo(ctx, []int64{theirs, own}, app.ResendRecipients{To: []string{"c@example.com"}}); err != nil || len(ids) != 1 {
		t.Errorf("bulk resend to others: %v, %v; want the own connection's log only", ids, err)
	}
	if err := svc.ResendOne(ctx, own); err != nil {
		t.Errorf("resend through site 2's own: %v", err)
	}
}

// TestAlertMailerConnectionUse checks that an alert email (the
// network's) does not go through a site's own connection, named by a
// channel stored before the rule: a permanent error, nothing sent.
func TestAlertMailerConnectionUse(t *testing.T) {
	f := newUseFixture(t)
	sender := &recordingSender{status: core.StatusDelivered}
	m := &app.AlertMailer{Sender: sender, Connections: oneConnection{from: "alerts@example.com"}, Use: f.use}
	msg := func() *core.Message {
		return &core.Message{To: []core.Address{{Email: "ops@example.com"}}, Subject: "s", Text: "t"}
	}
	err := m.SendAlertEmail(context.Background(), f.three, msg())
	if err == nil || core.IsTemporary(err) || sender.got != nil {
		t.Fatalf("through site 3's connection: %v, sent %v", err, sender.got)
	}
	if err := m.SendAlertEmail(context.Background(), f.net, msg()); err != nil || sender.got == nil {
		t.Fatalf("through the network's: %v", err)
	}
}
