package network_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/network"
	"github.com/mailsvc/mailsvc/core"
)

// quotaStore is core.SiteQuotaStore in memory.
type quotaStore struct {
	mu     sync.Mutex
	used   map[string]int64
	marked map[string]bool
}

func key(site int64, period string) string { return period + "/" + string(rune('0'+site)) }

func (q *quotaStore) ReserveSiteQuota(_ context.Context, site int64, day, month string, dayLimit, monthLimit int64) (core.QuotaReservation, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	r := core.QuotaReservation{DayPeriod: day, MonthPeriod: month}
	d, m := q.used[key(site, day)], q.used[key(site, month)]
	switch {
	case dayLimit > 0 && d >= dayLimit:
		r.DayFull = true
	case monthLimit > 0 && m >= monthLimit:
		r.MonthFull = true
	default:
		d, m = d+1, m+1
		q.used[key(site, day)], q.used[key(site, month)] = d, m
		r.OK = true
	}
	r.DayUsed, r.MonthUsed = d, m
	return r, nil
}

func (q *quotaStore) ReleaseSiteQuota(_ context.Context, site int64, day, month string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.used[key(site, day)]--
	q.used[key(site, month)]--
	return nil
}

func (q *quotaStore) MarkQuotaAlert(_ context.Context, site int64, period string, percent int) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := key(site, period) + "/" + string(rune('0'+percent/10))
	first := !q.marked[k]
	q.marked[k] = true
	return first, nil
}

func (q *quotaStore) SiteQuotaUsage(context.Context, string) (map[int64]int64, error) {
	return map[int64]int64{}, nil
}

// alerts records what was raised.
type alerts struct {
	mu  sync.Mutex
	got []core.Alert
}

func (a *alerts) Raise(_ context.Context, al core.Alert) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, al)
}

type sites []network.Site

// noLogs counts no logs.
type noLogs struct{}

func (noLogs) SiteLogCounts(context.Context, time.Time) (map[int64]core.SiteLogCount, error) {
	return map[int64]core.SiteLogCount{}, nil
}

func (s sites) NetworkSites(context.Context) ([]network.Site, error) { return s, nil }

// TestAdmitSite checks a site's quota: the network's default and a
// site's own, waiting until the next UTC day or month or failing, and
// the 80 % and 100 % alerts raised once each.
func TestAdmitSite(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 15, 4, 5, 0, time.UTC)
	al := &alerts{}
	svc := &network.Service{Sites: sites{{ID: 1}, {ID: 2}, {ID: 3}}, Settings: apptest.NewSettingsStore(),
		Quotas: &quotaStore{used: map[string]int64{}, marked: map[string]bool{}}, Logs: noLogs{}, Alerts: al, Now: func() time.Time { return now }}
	if _, err := svc.UpdateNetworkSettings(ctx, map[string]any{"quota_day": float64(10), "quota_month": float64(12)}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.UpdateSite(ctx, 3, map[string]any{"quota_day": float64(5)}); err != nil {
		t.Fatal(err)
	}
	admit := func(site int64) core.SiteAdmission {
		t.Helper()
		a, err := svc.AdmitSite(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for i := range 5 {
		if a := admit(3); !a.Allowed {
			t.Fatalf("message %d of site 3 held: %+v", i+1, a)
		}
	}
	a := admit(3)
	if a.Allowed || a.Fail || !a.Until.Equal(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("sixth message of site 3: %+v", a)
	}
	admit(3) // refused again: no second alert
	if len(al.got) != 2 || al.got[0].Event != core.EventSiteQuota || al.got[1].Title != "Site 3 used 100% of its daily quota" {
		t.Fatalf("alerts %+v", al.got)
	}
	// Site 2 follows the network: 10 a day, 12 a month.
	for range 10 {
		admit(2)
	}
	if a := admit(2); a.Allowed {
		t.Fatalf("site 2 past 10 a day: %+v", a)
	}
	now = now.Add(24 * time.Hour)
	admit(2)
	admit(2)
	if a := admit(2); a.Allowed || !a.Until.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("site 2 past 12 a month: %+v", a)
	}
	if _, err := svc.UpdateNetworkSettings(ctx, map[string]any{"over_quota": "fail"}); err != nil {
		t.Fatal(err)
	}
	if a := admit(2); a.Allowed || !a.Fail {
		t.Fatalf("fail over quota: %+v", a)
	}
	if _, err := svc.UpdateNetworkSettings(ctx, map[string]any{"over_quota": "later", "quota_day": float64(-1)}); core.ErrorCode(err) != core.EINVALID || len(core.ErrorFields(err)) != 2 {
		t.Fatalf("bad settings: %v", err)
	}
	if _, err := svc.UpdateSite(ctx, 9, map[string]any{"quota_day": float64(1)}); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("unknown site: %v", err)
	}
}

// countingSettings counts the per-scope reads of a settings store and,
// with bulk set, reads the sites' settings in one call (ScopesLoader).
type countingSettings struct {
	*apptest.SettingsStore
	mu          sync.Mutex
	reads, bulk int
}

func (c *countingSettings) LoadSettings(ctx context.Context, scope string) (map[string]any, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.SettingsStore.LoadSettings(ctx, scope)
}

// bulkSettings is countingSettings that reads every site's settings at
// once.
type bulkSettings struct{ *countingSettings }

func (b bulkSettings) LoadSettingsScopes(ctx context.Context, prefix string) (map[string]map[string]any, error) {
	b.mu.Lock()
	b.bulk++
	b.mu.Unlock()
	out := map[string]map[string]any{}
	for id := range 10 {
		scope := prefix + string(rune('0'+id))
		m, err := b.SettingsStore.LoadSettings(ctx, scope)
		if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			out[scope] = m
		}
	}
	return out, nil
}

// TestListSitesReadsSettingsOnce lists three sites with their own
// settings: with a store that reads every site's settings at once, the
// list makes no read per site, and answers as the read per site does.
func TestListSitesReadsSettingsOnce(t *testing.T) {
	ctx := context.Background()
	shared := apptest.NewSettingsStore()
	counting := &countingSettings{SettingsStore: shared}
	newSvc := func(st core.SettingsStore) *network.Service {
		return &network.Service{Sites: sites{{ID: 1}, {ID: 2}, {ID: 3}}, Settings: st,
			Quotas: &quotaStore{used: map[string]int64{}, marked: map[string]bool{}}, Logs: noLogs{}, Alerts: &alerts{}}
	}
	perSite := newSvc(counting)
	if _, err := perSite.UpdateSite(ctx, 2, map[string]any{"quota_day": float64(7), "overrides_allowed": true}); err != nil {
		t.Fatal(err)
	}
	if _, err := perSite.UpdateSite(ctx, 3, map[string]any{"quota_month": float64(90)}); err != nil {
		t.Fatal(err)
	}
	if err := perSite.AddOwnConnection(ctx, 2, 11); err != nil {
		t.Fatal(err)
	}
	counting.reads = 0
	want, err := perSite.ListSites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counting.reads < 3 {
		t.Fatalf("per site: %d reads", counting.reads)
	}
	bulk := bulkSettings{&countingSettings{SettingsStore: shared}}
	got, err := newSvc(bulk).ListSites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bulk.bulk != 1 || bulk.reads > 1 {
		t.Fatalf("bulk: %d bulk reads, %d scope reads", bulk.bulk, bulk.reads)
	}
	if fmt.Sprintf("%+v", jsonOf(t, got)) != fmt.Sprintf("%+v", jsonOf(t, want)) {
		t.Fatalf("bulk list %s, per site %s", jsonOf(t, got), jsonOf(t, want))
	}
	if !strings.Contains(jsonOf(t, got), `"quota_day":7`) || !strings.Contains(jsonOf(t, got), `"quota_month":90`) {
		t.Fatalf("sites' own settings missing: %s", jsonOf(t, got))
	}
	owners, err := newSvc(bulk).ConnectionSites(ctx)
	if err != nil || len(owners) != 1 || owners[11] != 2 {
		t.Fatalf("connection sites %v, %v", owners, err)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
