package core

import (
	"reflect"
	"testing"
	"time"
)

// TestSortOutcomeBuckets: buckets go by start, then connection, then
// status, whatever order they come in.
func TestSortOutcomeBuckets(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	t1 := t0.Add(OutcomeBucketSize)
	sorted := []OutcomeBucket{
		{Start: t0, ConnectionID: 0, Status: StatusFailed, Count: 1},
		{Start: t0, ConnectionID: 2, Status: StatusDelivered, Count: 2},
		{Start: t0, ConnectionID: 2, Status: StatusFailed, Count: 3},
		{Start: t0, ConnectionID: 2, Status: OutcomeCountPartial, Count: 4},
		{Start: t1, ConnectionID: 1, Status: StatusDelivered, Count: 5},
	}
	tests := []struct {
		name  string
		order []int
	}{
		{"already sorted", []int{0, 1, 2, 3, 4}},
		{"reversed", []int{4, 3, 2, 1, 0}},
		{"start last", []int{4, 0, 3, 1, 2}},
		{"status mixed", []int{3, 1, 2, 0, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]OutcomeBucket, 0, len(tc.order))
			for _, i := range tc.order {
				got = append(got, sorted[i])
			}
			SortOutcomeBuckets(got)
			if !reflect.DeepEqual(got, sorted) {
				t.Fatalf("sorted as %+v, want %+v", got, sorted)
			}
		})
	}
}
