package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/core"
)

// TestRecordOutcomesAndClaimCountsSources runs the service store's
// storetest.RecordOutcomesAndClaim (two workers' outcomes recorded and
// their next messages claimed in one transaction, the roll-ups by
// connection counting what applied, a mismatched call changing nothing)
// with the Pro outcome counter linked, and checks that the roll-ups by
// source count what applied too.
func TestRecordOutcomesAndClaimCountsSources(t *testing.T) {
	eachDialect(t, func(t *testing.T, db *prostore.DB) {
		ctx := context.Background()
		delivered, failed := storetest.RecordOutcomesAndClaim(t, db.DB)
		from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		sources, err := db.SourceBuckets(ctx, from, to)
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
