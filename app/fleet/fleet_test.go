package fleet_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/app/fleet"
	"github.com/mailsvc/mailsvc/core"
)

// reader is one site's counts, or err for every read.
type reader struct {
	attention dashboard.Attention
	queue     core.QueueStats
	buckets   []core.OutcomeBucket
	conns     int
	err       error
	from, to  time.Time
}

func (r *reader) Attention(context.Context) (*dashboard.Attention, error) {
	a := r.attention
	return &a, r.err
}
func (r *reader) PendingCounts(context.Context) (core.QueueStats, error) { return r.queue, r.err }
func (r *reader) OutcomeBuckets(_ context.Context, from, to time.Time) ([]core.OutcomeBucket, error) {
	r.from, r.to = from, to
	return r.buckets, r.err
}
func (r *reader) FindConnections(context.Context, core.ConnectionFilter) ([]*core.Connection, int, error) {
	return nil, r.conns, r.err
}

func site(name string, r *reader) fleet.Site {
	return fleet.Site{Name: name, HomeURL: "http://" + name, WPConfig: "/var/www/" + name + "/wp-config.php",
		Attention: r, Queue: r, Outcomes: r, Connections: r}
}

func TestView(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	failing := []dashboard.FailingConnection{{ID: 2, Name: "backup", LastError: "535 auth"}}
	busy := &reader{
		attention: dashboard.Attention{Retrying: 4, Failed24h: 3, Held: 2, FailingConnections: failing},
		queue:     core.QueueStats{Queued: 9, Sending: 1},
		buckets: []core.OutcomeBucket{
			{Status: core.StatusDelivered, Count: 5}, {Status: core.StatusFailed, Count: 3}, {Status: core.StatusDelivered, ConnectionID: 2, Count: 7},
		},
		conns: 2,
	}
	broken := &reader{err: errors.New("connection refused")}
	down := fleet.Site{Name: "c.test", WPConfig: "/var/www/c/wp-config.php", Problem: "The site's database is not available."}
	starting := fleet.Site{Name: "d.test"}
	svc := &fleet.Service{Sites: func() []fleet.Site {
		return []fleet.Site{site("a.test", busy), site("b.test", broken), down, starting}
	}, Now: func() time.Time { return now }}
	got := svc.View(context.Background())
	none := []dashboard.FailingConnection{}
	want := []fleet.SiteView{
		{Name: "a.test", HomeURL: "http://a.test", WPConfig: "/var/www/a.test/wp-config.php", Status: fleet.StatusServing,
			Queue: fleet.QueueView{Queued: 9, Sending: 1, Retrying: 4}, Delivered24h: 12, Failed24h: 3, Held: 2,
			Connections: fleet.ConnectionsView{Total: 2, Failing: failing}},
		{Name: "b.test", HomeURL: "http://b.test", WPConfig: "/var/www/b.test/wp-config.php", Status: fleet.StatusServing,
			Problem: "attention: connection refused", Connections: fleet.ConnectionsView{Failing: none}},
		{Name: "c.test", WPConfig: "/var/www/c/wp-config.php", Status: fleet.StatusDown, Problem: "The site's database is not available.",
			Connections: fleet.ConnectionsView{Failing: none}},
		{Name: "d.test", Status: fleet.StatusDown, Problem: "The site is starting.", Connections: fleet.ConnectionsView{Failing: none}},
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("site %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d sites, want %d", len(got), len(want))
	}
	if !busy.from.Equal(now.Add(-fleet.Window)) || !busy.to.Equal(now) {
		t.Errorf("deliveries counted over [%s, %s), want the last 24 hours to %s", busy.from, busy.to, now)
	}
}
