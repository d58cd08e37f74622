package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app/pro/routing"
	"github.com/mailsvc/mailsvc/app/pro/suppression"
	"github.com/mailsvc/mailsvc/core"
)

// TestUpgradeKeepsProTables upgrades a database as earlier builds left it
// (the Pro tables made by the service's own migrations 5, 6, 8, 9, 11 and
// 24, no Pro schema
// history recorded) to this build: the Pro history applies over the
// tables already there, keeps their rows, records its versions, and a
// second start changes nothing.
func TestUpgradeKeepsProTables(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dialect, dsn string) {
		ctx := context.Background()
		s := newSuite(dsn)
		prefix := s.prefix()
		db := s.open(t, prefix)
		rule := &routing.RoutingRule{Name: "Invoices", ConnectionID: 7, Priority: 1, IsActive: true,
			Conditions: []routing.RoutingCondition{{Field: "subject", Operator: "contains", Value: "invoice"}}}
		if err := db.Routing().CreateRoutingRule(ctx, rule); err != nil {
			t.Fatal(err)
		}
		if ok, err := db.Routing().ReserveSend(ctx, 7, "2026-01-02", 0); err != nil || !ok {
			t.Fatalf("ReserveSend: %v %v", ok, err)
		}
		if _, err := db.Suppressions().AddSuppressions(ctx, []suppression.Suppression{{Email: "ann@example.com", Reason: suppression.SuppressBounce}}); err != nil {
			t.Fatal(err)
		}
		// The database as an earlier build left it: no Pro history.
		if _, err := db.SQL().ExecContext(ctx, db.Expand("DROP TABLE {prefix}mailsvc_pro_migrations")); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			again := s.open(t, prefix)
			rules, err := again.Routing().FindRoutingRules(ctx)
			if err != nil || len(rules) != 1 || rules[0].Name != "Invoices" || len(rules[0].Conditions) != 1 {
				t.Fatalf("rules after the upgrade: %v %+v", err, rules)
			}
			counts, err := again.Routing().SendCounts(ctx, "2026-01-02")
			if err != nil || counts[7] != 1 {
				t.Fatalf("send counts after the upgrade: %v %v", err, counts)
			}
			if s, err := again.Suppressions().FindSuppression(ctx, 0, "ann@example.com"); err != nil || s.Reason != suppression.SuppressBounce {
				t.Fatalf("suppression after the upgrade: %v %+v", err, s)
			}
			var versions []int
			if err := again.Gorm().WithContext(ctx).Table(again.TableName("pro_migrations")).
				Order("version").Pluck("version", &versions).Error; err != nil || !slices.Equal(versions, []int{1, 2, 3, 4}) {
				t.Fatalf("recorded Pro versions: %v %v", err, versions)
			}
		}
		// The service's own history still records versions 5 and 6, now
		// without the Pro tables.
		v, err := db.DB.Schema().AppliedVersions(ctx)
		if err != nil || len(v) != store.LatestVersion() {
			t.Fatalf("the service's versions: %v %v (latest %d)", err, v, store.LatestVersion())
		}
	})
}

// rollupSnapshot reads the roll-ups by source and by site, summed over
// their shards, as "table width start key status = messages" lines in
// order.
func rollupSnapshot(t *testing.T, db *proDB) []string {
	t.Helper()
	var out []string
	for _, q := range []struct{ table, cols string }{
		{"source_buckets", "15, bucket_start, source, '', status"},
		{"source_rollups", "width_minutes, bucket_start, source, '', status"},
		{"site_rollups", "width_minutes, bucket_start, source, CAST(site_id AS CHAR), status"},
	} {
		rows, err := db.SQL().Query(`SELECT ` + q.cols + `, SUM(messages) FROM ` + db.TableName(q.table) +
			` GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`)
		if err != nil {
			t.Fatalf("read %s: %v", q.table, err)
		}
		for rows.Next() {
			var width int
			var start time.Time
			var source, site, status string
			var n int64
			if err := rows.Scan(&width, &start, &source, &site, &status, &n); err != nil {
				t.Fatalf("read %s: %v", q.table, err)
			}
			out = append(out, fmt.Sprintf("%s %d %s %s %s %s = %d", q.table, width, start.UTC().Format(time.RFC3339), source, site, status, n))
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("read %s: %v", q.table, err)
		}
		rows.Close()
	}
	return out
}

// TestUpgradeKeepsAnalyticsRollups upgrades databases as earlier builds
// left them to the Pro migration 4 (the roll-ups by source and by site):
// (a) migrated by a build whose own migrations 8, 11 and 24 made the
// tables, which hold counts: the migration changes nothing; (b) a
// database that stood between the service's migrations 8 and 11, with
// 15-minute roll-ups by source but no hour and day ones nor roll-ups by
// site: the migration makes them, building the hour and day roll-ups by
// source from the 15-minute ones as the service's migration 11 did. A
// second start changes nothing either way.
func TestUpgradeKeepsAnalyticsRollups(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dialect, dsn string) {
		ctx := context.Background()
		s := newSuite(dsn)
		for _, stage := range []string{"tables made by the service's migrations", "between the service's migrations 8 and 11"} {
			prefix := s.prefix()
			db := s.open(t, prefix)
			// Outcomes of two sites, recorded now, and imported
			// history over three days.
			for i, site := range []int64{1, 2, 2, 3} {
				l := &core.Log{SiteID: site, Source: fmt.Sprint("plugin-", i%2), Message: storetest.Message(i)}
				if err := db.Logs().EnqueueLog(ctx, l); err != nil {
					t.Fatal(err)
				}
				if got := storetest.Claim(t, db.Logs(), "w", 10, time.Minute); len(got) != 1 {
					t.Fatalf("claimed %d logs, want 1", len(got))
				}
				conn := int64(1 + i%2)
				status := []string{core.StatusDelivered, core.StatusFailed}[i%2]
				if n, err := db.Logs().RecordOutcomes(ctx, "w", []core.LogOutcome{{LogID: l.ID, Status: status, Attempts: 1,
					PhaseAttempts: 1, SentConnectionID: &conn}}); err != nil || n != 1 {
					t.Fatalf("RecordOutcomes = %d, %v", n, err)
				}
			}
			day := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
			var logs []*core.Log
			for i := range 60 {
				at := day.Add(time.Duration(i) * 71 * time.Minute)
				logs = append(logs, &core.Log{Status: []string{core.StatusDelivered, core.StatusFailed}[i%3/2], Source: fmt.Sprint("import-", i%4),
					Message: storetest.Message(100 + i), CreatedAt: at, UpdatedAt: at})
			}
			if err := db.Logs().ImportLogs(ctx, logs); err != nil {
				t.Fatal(err)
			}
			want := rollupSnapshot(t, db)
			wantTotals, err := db.Analytics().SourceTotals(ctx, day.Add(5*time.Hour+45*time.Minute), day.Add(2*24*time.Hour+7*time.Hour))
			if err != nil || len(wantTotals) == 0 {
				t.Fatalf("SourceTotals: %+v, %v", wantTotals, err)
			}
			if stage == "between the service's migrations 8 and 11" {
				// Only the 15-minute roll-ups by source were there.
				for _, table := range []string{"source_rollups", "site_rollups"} {
					if _, err := db.SQL().ExecContext(ctx, "DROP TABLE "+db.TableName(table)); err != nil {
						t.Fatal(err)
					}
				}
				var kept []string
				for _, line := range want {
					if !strings.HasPrefix(line, "site_rollups ") {
						kept = append(kept, line)
					}
				}
				want = kept
			}
			if _, err := db.SQL().ExecContext(ctx, db.Expand("DELETE FROM {prefix}mailsvc_pro_migrations WHERE version = 4")); err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				again := s.open(t, prefix)
				if got := rollupSnapshot(t, again); !slices.Equal(got, want) {
					t.Fatalf("%s, start %d: roll-ups after the upgrade\n%s\nwant\n%s", stage, i+1, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				got, err := again.Analytics().SourceTotals(ctx, day.Add(5*time.Hour+45*time.Minute), day.Add(2*24*time.Hour+7*time.Hour))
				if err != nil || !slices.Equal(got, wantTotals) {
					t.Fatalf("%s, start %d: SourceTotals %+v, %v; want %+v", stage, i+1, got, err, wantTotals)
				}
			}
		}
	})
}
