package core

import (
	"sort"
	"time"
)

// OutcomeBucketSize is the width of the time buckets in which final
// delivery outcomes are counted: 15 minutes, so that any site time zone
// (all UTC offsets are multiples of 15 minutes) has exact local hours and
// days.
const OutcomeBucketSize = 15 * time.Minute

// OutcomeCountPartial is the Status of the outcome buckets that count
// the delivered messages some recipients of which were refused: a subset
// of the delivered ones, counted beside them.
const OutcomeCountPartial = "partial"

// OutcomeBucket counts the messages that reached one final status
// (StatusDelivered or StatusFailed, or OutcomeCountPartial) through one
// connection in one 15-minute bucket, by the time the outcome was
// recorded.
type OutcomeBucket struct {
	Start        time.Time // UTC start of the bucket
	ConnectionID int64     // the connection that sent (or last tried); 0 when none
	Status       string
	Count        int64
}

// SortOutcomeBuckets orders buckets by start, then connection, then
// status: the order in which the log stores return them.
func SortOutcomeBuckets(buckets []OutcomeBucket) {
	sort.Slice(buckets, func(i, j int) bool {
		a, b := buckets[i], buckets[j]
		if !a.Start.Equal(b.Start) {
			return a.Start.Before(b.Start)
		}
		if a.ConnectionID != b.ConnectionID {
			return a.ConnectionID < b.ConnectionID
		}
		return a.Status < b.Status
	})
}
