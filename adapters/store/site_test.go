package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/core"
)

// TestSiteScopedLogs writes logs of three sites of a network and reads
// them under each site's scope: a site sees its own logs only, another
// site's log is not found and cannot be deleted or resent, and without a
// scope every log is there. A log queued without a site is the main
// site's, as every log written before multisite support.
func TestSiteScopedLogs(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
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
		if _, err := db.SearchIndex().RunSearchIndex(ctx); err != nil {
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

// TestSiteQuotaReservations reserves a site's quota from many goroutines
// at once (as replicas would): exactly the limit is taken, the other
// sites are not touched, a release gives a place back, and each alert
// level is marked once.
func TestSiteQuotaReservations(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
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

// TestLoadSettingsScopes reads the settings of every scope starting with
// a prefix in one query: the prefix is literal (its "_" is no wildcard)
// and other scopes stay out.
func TestLoadSettingsScopes(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
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
