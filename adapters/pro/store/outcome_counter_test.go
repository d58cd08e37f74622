package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
	"github.com/mailsvc/mailsvc/core"
)

// TestRecordOutcomesAndClaimCountsSources runs the service store's
// storetest.RecordOutcomesAndClaim (two workers' outcomes recorded and
// their next messages claimed in one transaction, the roll-ups by
// connection counting what applied, a mismatched call changing nothing)
// with the Pro outcome counter linked, and checks that the roll-ups by
// source count what applied too.
func TestRecordOutcomesAndClaimCountsSources(t *testing.T) {
	eachDialect(t, func(t *testing.T, db *proDB) {
		ctx := context.Background()
		delivered, failed := storetest.RecordOutcomesAndClaim(t, db.DB)
		from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		sources, err := db.Analytics().SourceBuckets(ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		bySource := map[string]int64{}
		for _, sb := range sources {
			bySource[sb.Source+"/"+sb.Status] += sb.Count
		}
		want := map[string]int64{}
		for _, l := range delivered {
			want[l.Source+"/"+core.StatusDelivered]++
		}
		for _, l := range failed {
			want[l.Source+"/"+core.StatusFailed]++
		}
		if fmt.Sprint(bySource) != fmt.Sprint(want) {
			t.Errorf("roll-ups by source %v, want %v", bySource, want)
		}
	})
}

// TestSiteAnalytics records the outcomes of three sites of a network and
// reads the Pro analytics' roll-ups under each site's scope: each site
// counts its own messages (the main site as the network's less the other
// sites'), the sites add up to the network, and the export lists a
// site's logs only. Compacting the roll-ups changes nothing. (The
// provider events by site: the contract suite, testSiteEventRollups.)
func TestSiteAnalytics(t *testing.T) {
	eachDialect(t, func(t *testing.T, db *proDB) {
		ctx := context.Background()
		from := time.Now().Add(-time.Hour)
		plan, conn := sitePlan, int64(7)
		recordSitePlan(t, db, conn)
		to := time.Now().Add(time.Hour)
		check := func(when string) {
			t.Helper()
			var sumD, sumF int64
			for site, n := range plan {
				sctx := core.WithSiteScope(ctx, site)
				ot, err := db.Analytics().OutcomeTotals(sctx, from, to)
				if err != nil {
					t.Fatalf("%s: site %d OutcomeTotals: %v", when, site, err)
				}
				got := map[string]int64{}
				for _, b := range ot {
					if b.ConnectionID != conn {
						t.Errorf("%s: site %d connection %d", when, site, b.ConnectionID)
					}
					got[b.Status] += b.Count
				}
				if got[core.StatusDelivered] != int64(n[0]) || got[core.StatusFailed] != int64(n[1]) {
					t.Errorf("%s: site %d outcomes %v, want %v", when, site, got, n)
				}
				sumD, sumF = sumD+got[core.StatusDelivered], sumF+got[core.StatusFailed]
				st, err := db.Analytics().SourceTotals(sctx, from, to)
				if err != nil {
					t.Fatalf("%s: site %d SourceTotals: %v", when, site, err)
				}
				for _, b := range st {
					if b.Source != fmt.Sprintf("plugin-%d", site) {
						t.Errorf("%s: site %d counts source %q", when, site, b.Source)
					}
				}
				exp, err := db.Analytics().ExportLogs(sctx, analytics.LogExportPage{From: from, To: to})
				if err != nil || len(exp) != n[0]+n[1] {
					t.Fatalf("%s: site %d exports %d logs, %v", when, site, len(exp), err)
				}
			}
			ot, err := db.Analytics().OutcomeTotals(ctx, from, to)
			if err != nil {
				t.Fatal(err)
			}
			var netD, netF int64
			for _, b := range ot {
				if b.Status == core.StatusDelivered {
					netD += b.Count
				} else if b.Status == core.StatusFailed {
					netF += b.Count
				}
			}
			if netD != sumD || netF != sumF {
				t.Errorf("%s: network %d/%d, sites add up to %d/%d", when, netD, netF, sumD, sumF)
			}
			if ot, err := db.Analytics().OutcomeTotals(core.WithSiteScope(ctx, 9), from, to); err != nil || len(ot) != 0 {
				t.Errorf("%s: a site without mail: %+v, %v", when, ot, err)
			}
		}
		check("recorded")
		if _, err := db.Rollups().CompactRollups(ctx); err != nil {
			t.Fatal(err)
		}
		check("compacted")
	})
}
