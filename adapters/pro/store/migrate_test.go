package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/pro/routing"
	"github.com/mailsvc/mailsvc/app/pro/suppression"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// TestUpgradeKeepsProTables upgrades a database as earlier builds left it
// (the Pro tables made by the service's own migrations 5, 6, 8, 9, 11 and
// 24, no Pro schema
// history recorded) to this build: the Pro history applies over the
// tables already there, keeps their rows, records its versions, and a
// second start changes nothing.
func TestUpgradeKeepsProTables(t *testing.T) {
	for _, tc := range []struct {
		name string
		dsn  func(testing.TB) string
	}{
		{"sqlite", testdb.SQLite},
		{"mysql", testdb.MySQL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := &suite{dsn: tc.dsn(t)}
			prefix := s.prefix()
			db := s.open(t, prefix)
			rule := &routing.RoutingRule{Name: "Invoices", ConnectionID: 7, Priority: 1, IsActive: true,
				Conditions: []routing.RoutingCondition{{Field: "subject", Operator: "contains", Value: "invoice"}}}
			if err := db.CreateRoutingRule(ctx, rule); err != nil {
				t.Fatal(err)
			}
			if ok, err := db.ReserveSend(ctx, 7, "2026-01-02", 0); err != nil || !ok {
				t.Fatalf("ReserveSend: %v %v", ok, err)
			}
			if _, err := db.AddSuppressions(ctx, []suppression.Suppression{{Email: "ann@example.com", Reason: suppression.SuppressBounce}}); err != nil {
				t.Fatal(err)
			}
			// The database as an earlier build left it: no Pro history.
			if _, err := db.SQL().ExecContext(ctx, db.Expand("DROP TABLE {prefix}mailsvc_pro_migrations")); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				again := s.open(t, prefix)
				rules, err := again.FindRoutingRules(ctx)
				if err != nil || len(rules) != 1 || rules[0].Name != "Invoices" || len(rules[0].Conditions) != 1 {
					t.Fatalf("rules after the upgrade: %v %+v", err, rules)
				}
				counts, err := again.SendCounts(ctx, "2026-01-02")
				if err != nil || counts[7] != 1 {
					t.Fatalf("send counts after the upgrade: %v %v", err, counts)
				}
				if s, err := again.FindSuppression(ctx, 0, "ann@example.com"); err != nil || s.Reason != suppression.SuppressBounce {
					t.Fatalf("suppression after the upgrade: %v %+v", err, s)
				}
				var versions []int
				if err := again.Gorm().WithContext(ctx).Table(again.TableName("pro_migrations")).
					Order("version").Pluck("version", &versions).Error; err != nil || !slices.Equal(versions, []int{1, 2, 3}) {
					t.Fatalf("recorded Pro versions: %v %v", err, versions)
				}
			}
			// The service's own history still records versions 5 and 6, now
			// without the Pro tables.
			v, err := db.DB.AppliedVersions(ctx)
			if err != nil || len(v) != store.LatestVersion() {
				t.Fatalf("the service's versions: %v %v (latest %d)", err, v, store.LatestVersion())
			}
		})
	}
}
