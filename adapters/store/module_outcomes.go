package store

import (
	"context"
	"database/sql"
	"time"
)

// OutcomeCount is one final outcome (core.StatusDelivered or
// core.StatusFailed) as an outcome counter sees it: what the service's
// own roll-ups (OutcomeBuckets) count, with the message's site and
// source besides.
type OutcomeCount struct {
	// At is when the outcome counts, in UTC: when it was recorded, or
	// for an imported log its DeliveredAt (delivered) or UpdatedAt
	// (failed).
	At time.Time
	// SiteID is the message's site (core.MainSiteID for an imported
	// log, which the import writes as the main site's).
	SiteID int64
	// ConnectionID is the connection that sent it; nil when none.
	ConnectionID *int64
	Source       string
	Status       string
	// Partial is set on a delivered message that some recipients
	// refused: the service's roll-ups count it besides under
	// core.OutcomeCountPartial.
	Partial bool
}

// OutcomeCounter counts final outcomes in a module's own tables (the Pro
// analytics' roll-ups by source and by site). It runs inside the
// transaction that records them (LogService.RecordOutcomesOfOwners, the
// record-and-claim of a group write, and ImportLogs), after the
// service's own roll-ups were written (for an import, before them), so
// what it writes commits with the outcomes or not at all: an error it
// returns rolls the whole transaction back and is returned to the
// caller (a deadlock is retried with the transaction). outcomes holds
// every final outcome the transaction applied, in order, never empty;
// the counter must not keep it. This is the delivery's hot path: a
// counter writes its rows with a few multi-row statements (as
// UpsertCounters does) whatever the number of outcomes.
type OutcomeCounter func(ctx context.Context, db *DB, tx *sql.Tx, outcomes []OutcomeCount) error

// outcomeCounters are the registered counters, in registration order.
var outcomeCounters []OutcomeCounter

// RegisterOutcomeCounter adds a module's outcome counter. Call it from
// an init(), as RegisterMigrations: the list is read without a lock.
// Without any registered counter, recording outcomes does nothing more
// than count them in the service's own roll-ups.
func RegisterOutcomeCounter(c OutcomeCounter) {
	moduleMu.Lock()
	defer moduleMu.Unlock()
	outcomeCounters = append(outcomeCounters, c)
}

// countOutcomes runs the registered outcome counters over outcomes in
// tx; nothing when there are none or no counter.
func countOutcomes(ctx context.Context, db *DB, tx *sql.Tx, outcomes []OutcomeCount) error {
	if len(outcomes) == 0 {
		return nil
	}
	for _, c := range outcomeCounters {
		if err := c(ctx, db, tx, outcomes); err != nil {
			return err
		}
	}
	return nil
}
