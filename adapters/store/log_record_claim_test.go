package store_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
)

// TestRecordOutcomesAndClaim records two workers' outcomes and claims
// their next messages in one transaction: the outcomes apply as
// RecordOutcomesOfOwners applies them (an outcome for a log the owner
// does not hold is skipped), each owner gets its own disjoint share of
// the due logs under its lease (a log the outcomes made due at once
// included), the roll-ups by connection count what applied, and a
// mismatched call changes nothing. (The roll-ups by source:
// adapters/pro/store, TestRecordOutcomesAndClaimCountsSources.)
func TestRecordOutcomesAndClaim(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, db *store.DB) {
		storetest.RecordOutcomesAndClaim(t, db)
	})
}
