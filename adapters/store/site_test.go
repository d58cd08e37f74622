package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// TestSiteScopedLogs writes logs of three sites of a network and reads
// them under each site's scope: a site sees its own logs only, another
// site's log is not found and cannot be deleted or resent, and without a
// scope every log is there. A log queued without a site is the main
// site's, as every log written before multisite support.
func TestSiteScopedLogs(t *testing.T) {
	for _, dialect := range []string{"mysql", "sqlite"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			dsn := testdb.SQLite(t)
			if dialect == "mysql" {
				dsn = testdb.MySQL(t)
			}
			db, err := store.Open(ctx, dsn, store.DefaultPrefix, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			ids := map[int64][]int64{}
			for i, site := range []int64{0, 2, 2, 3, 1} {
				l := &core.Log{SiteID: site, Message: core.Message{From: core.Address{Email: "a@example.com"},
					To: []core.Address{{Email: fmt.Sprintf("b%d@example.com", i)}}, Subject: "s", Text: "t"}}
				if err := db.Logs().EnqueueLog(ctx, l); err != nil {
					t.Fatal(err)
				}
				if site == 0 {
					site = 1
				}
				if l.SiteID != site {
					t.Fatalf("log %d: site %d, want %d", l.ID, l.SiteID, site)
				}
				ids[site] = append(ids[site], l.ID)
			}
			for site, want := range map[int64]int{0: 5, 1: 2, 2: 2, 3: 1, 4: 0} {
				sctx := core.WithSiteScope(ctx, site)
				logs, total, err := db.Logs().FindLogs(sctx, core.LogFilter{})
				if err != nil || total != want || len(logs) != want {
					t.Fatalf("site %d: %d logs (total %d), %v; want %d", site, len(logs), total, err, want)
				}
				for _, l := range logs {
					if site != 0 && l.SiteID != site {
						t.Fatalf("site %d sees log %d of site %d", site, l.ID, l.SiteID)
					}
				}
				st, err := db.Logs().QueueStats(sctx)
				if err != nil || st.Queued != want {
					t.Fatalf("site %d: stats %+v, %v", site, st, err)
				}
			}
			// A search by a part of an address stays in the scope too.
			if _, err := db.Logs().RunSearchIndex(ctx); err != nil {
				t.Fatal(err)
			}
			for _, term := range []string{"@example.com", "example.com", "b1@"} {
				for site, want := range map[int64]int{0: 5, 1: 2, 2: 2, 3: 1, 4: 0} {
					if term == "b1@" {
						want = map[int64]int{0: 1, 2: 1}[site]
					}
					logs, total, err := db.Logs().FindLogs(core.WithSiteScope(ctx, site), core.LogFilter{Search: term, CountUpTo: 100})
					if err != nil || total != want || len(logs) != want {
						t.Fatalf("search %q in site %d: %d logs (total %d), %v; want %d", term, site, len(logs), total, err, want)
					}
					for _, l := range logs {
						if site != 0 && l.SiteID != site {
							t.Fatalf("search %q in site %d finds log %d of site %d", term, site, l.ID, l.SiteID)
						}
					}
				}
			}
			// A filter cannot widen a scope.
			if logs, _, _ := db.Logs().FindLogs(core.WithSiteScope(ctx, 3), core.LogFilter{SiteID: 2}); len(logs) != 1 || logs[0].SiteID != 3 {
				t.Fatalf("scope 3 with filter 2: %+v", logs)
			}
			site2 := core.WithSiteScope(ctx, 2)
			other := ids[3][0]
			if _, err := db.Logs().FindLogByID(site2, other); core.ErrorCode(err) != core.ENOTFOUND {
				t.Fatalf("site 2 reads site 3's log: %v", err)
			}
			if l, err := db.Logs().FindLogByID(site2, ids[2][0]); err != nil || l.SiteID != 2 {
				t.Fatalf("site 2 reads its log: %+v, %v", l, err)
			}
			if n, err := db.Logs().DeleteLogs(site2, []int64{other}); err != nil || n != 0 {
				t.Fatalf("site 2 deletes site 3's log: %d, %v", n, err)
			}
			if l, err := db.Logs().FindLogByID(ctx, other); err != nil || l.SiteID != 3 {
				t.Fatalf("site 3's log: %+v, %v", l, err)
			}
		})
	}
}

// TestSiteQuotaReservations reserves a site's quota from many goroutines
// at once (as replicas would): exactly the limit is taken, the other
// sites are not touched, a release gives a place back, and each alert
// level is marked once.
func TestSiteQuotaReservations(t *testing.T) {
	for _, dialect := range []string{"mysql", "sqlite"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			dsn := testdb.SQLite(t)
			if dialect == "mysql" {
				dsn = testdb.MySQL(t)
			}
			db, err := store.Open(ctx, dsn, store.DefaultPrefix, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			var wg sync.WaitGroup
			var mu sync.Mutex
			ok, full := 0, 0
			for range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := db.Sites().ReserveSiteQuota(ctx, 3, "2026-11-27", "2026-11", 5, 100)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						t.Error(err)
						return
					}
					if r.OK {
						ok++
					} else if r.DayFull {
						full++
					}
				}()
			}
			wg.Wait()
			if ok != 5 || full != 15 {
				t.Fatalf("reserved %d, refused %d; want 5 and 15", ok, full)
			}
			r, err := db.Sites().ReserveSiteQuota(ctx, 2, "2026-11-27", "2026-11", 0, 0)
			if err != nil || !r.OK || r.DayUsed != 1 || r.MonthUsed != 1 {
				t.Fatalf("site 2: %+v, %v", r, err)
			}
			// The month's limit refuses too, and counts nothing.
			if r, err := db.Sites().ReserveSiteQuota(ctx, 2, "2026-11-28", "2026-11", 0, 1); err != nil || r.OK || !r.MonthFull || r.DayUsed != 0 {
				t.Fatalf("site 2 month full: %+v, %v", r, err)
			}
			if err := db.Sites().ReleaseSiteQuota(ctx, 3, "2026-11-27", "2026-11"); err != nil {
				t.Fatal(err)
			}
			usage, err := db.Sites().SiteQuotaUsage(ctx, "2026-11-27")
			if err != nil || usage[3] != 4 || usage[2] != 1 {
				t.Fatalf("usage %v, %v", usage, err)
			}
			for i, want := range []bool{true, false, false} {
				first, err := db.Sites().MarkQuotaAlert(ctx, 3, "2026-11-27", 100)
				if err != nil || first != want {
					t.Fatalf("mark %d: %v, %v", i, first, err)
				}
			}
			if first, _ := db.Sites().MarkQuotaAlert(ctx, 3, "2026-11-27", 80); !first {
				t.Fatal("the 80% alert was taken by the 100% one")
			}
		})
	}
}

// TestSiteEventAnalytics records the outcomes and provider events of
// three sites of a network and reads the provider event roll-ups under
// each site's scope: each site counts its own events. Compacting the
// roll-ups changes nothing. (The outcome totals and the export by site
// are the Pro store's: adapters/pro/store, TestSiteAnalytics.)
func TestSiteEventAnalytics(t *testing.T) {
	for _, dialect := range []string{"mysql", "sqlite"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			dsn := testdb.SQLite(t)
			if dialect == "mysql" {
				dsn = testdb.MySQL(t)
			}
			db, err := store.Open(ctx, dsn, store.DefaultPrefix, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			from := time.Now().Add(-time.Hour)
			// site: delivered, failed.
			plan := map[int64][2]int{1: {2, 1}, 2: {3, 0}, 3: {1, 2}}
			logs := map[int64][]*core.Log{}
			i := 0
			for site, n := range plan {
				for range n[0] + n[1] {
					i++
					l := &core.Log{SiteID: site, Source: fmt.Sprintf("plugin-%d", site), Message: core.Message{From: core.Address{Email: "a@example.com"},
						To: []core.Address{{Email: fmt.Sprintf("b%d@example.com", i)}}, Subject: "s", Text: "t"}}
					if err := db.Logs().EnqueueLog(ctx, l); err != nil {
						t.Fatal(err)
					}
					logs[site] = append(logs[site], l)
				}
			}
			if got, err := db.Logs().ClaimLogs(ctx, "w1", 20, time.Minute); err != nil || len(got) != i {
				t.Fatalf("claimed %d, %v", len(got), err)
			}
			conn := int64(7)
			var outs []core.LogOutcome
			for site, n := range plan {
				for j, l := range logs[site] {
					status := core.StatusDelivered
					if j >= n[0] {
						status = core.StatusFailed
					}
					outs = append(outs, core.LogOutcome{LogID: l.ID, Status: status, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn})
				}
			}
			if n, err := db.Logs().RecordOutcomes(ctx, "w1", outs); err != nil || n != i {
				t.Fatalf("RecordOutcomes = %d, %v", n, err)
			}
			// Provider events: site 2's first message opened twice, site
			// 1's once, site 3's first bounced.
			for _, e := range []struct {
				log   *core.Log
				event string
			}{{logs[2][0], core.EventOpened}, {logs[2][0], core.EventOpened}, {logs[1][0], core.EventOpened}, {logs[3][0], core.EventBounced}} {
				if _, err := db.RecordLogEvent(ctx, &core.LogEvent{LogID: e.log.ID, Provider: "sendgrid", Event: e.event, At: time.Now()}, "", ""); err != nil {
					t.Fatal(err)
				}
			}
			to := time.Now().Add(time.Hour)
			check := func(when string) {
				t.Helper()
				for site := range plan {
					sctx := core.WithSiteScope(ctx, site)
					ec, err := db.EventCounts(sctx, from, to)
					if err != nil {
						t.Fatalf("%s: site %d EventCounts: %v", when, site, err)
					}
					events := map[string][2]int64{}
					for _, c := range ec {
						events[c.Event] = [2]int64{c.Events, c.Messages}
					}
					want := map[int64]map[string][2]int64{
						1: {core.EventOpened: {1, 1}},
						2: {core.EventOpened: {2, 1}},
						3: {core.EventBounced: {1, 1}},
					}[site]
					if fmt.Sprint(events) != fmt.Sprint(want) {
						t.Errorf("%s: site %d events %v, want %v", when, site, events, want)
					}
					tallies, err := db.LogEventTallies(sctx, from, to, []string{core.EventOpened, core.EventBounced})
					if err != nil {
						t.Fatalf("%s: site %d LogEventTallies: %v", when, site, err)
					}
					for _, tl := range tallies {
						if tl.Messages != 1 || tl.Source != fmt.Sprintf("plugin-%d", site) {
							t.Errorf("%s: site %d tally %+v", when, site, tl)
						}
					}
				}
			}
			check("recorded")
			if _, err := db.CompactRollups(ctx); err != nil {
				t.Fatal(err)
			}
			check("compacted")
		})
	}
}

// TestLoadSettingsScopes reads the settings of every scope starting with
// a prefix in one query: the prefix is literal (its "_" is no wildcard)
// and other scopes stay out.
func TestLoadSettingsScopes(t *testing.T) {
	for _, dialect := range []string{"mysql", "sqlite"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			dsn := testdb.SQLite(t)
			if dialect == "mysql" {
				dsn = testdb.MySQL(t)
			}
			db, err := store.Open(ctx, dsn, store.DefaultPrefix, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			for scope, v := range map[string]map[string]any{
				"network_site:2": {"quota_day": 5, "own_connections": []int64{4}},
				"network_site:3": {"overrides_allowed": true},
				"network":        {"quota_day": 9},
				"networkXsite:4": {"quota_day": 1},
			} {
				if err := db.Settings().SaveSettings(ctx, scope, v); err != nil {
					t.Fatal(err)
				}
			}
			got, err := db.Settings().LoadSettingsScopes(ctx, "network_site:")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got["network_site:2"]["quota_day"] != int64(5) || got["network_site:3"]["overrides_allowed"] != true ||
				fmt.Sprint(got["network_site:2"]["own_connections"]) != "[4]" {
				t.Fatalf("scopes %v", got)
			}
		})
	}
}
