package store

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// TestRollupSpansCoverTheRangeOnce checks, on ranges with every kind of
// edge, that the spans cover each 15-minute bucket starting in the range
// exactly once, each aligned to its width, with at most one span of days,
// two of hours and four of quarter hours.
func TestRollupSpansCoverTheRangeOnce(t *testing.T) {
	day := time.Date(2024, 2, 28, 0, 0, 0, 0, time.UTC)
	ranges := [][2]time.Time{
		{day, day.Add(30 * 24 * time.Hour)},
		{day.Add(22 * time.Hour), day.Add(30*24*time.Hour + 22*time.Hour)}, // a +02:00 site's days
		{day.Add(5*time.Hour + 45*time.Minute), day.Add(5*time.Hour + 45*time.Minute)},
		{day.Add(5*time.Hour + 45*time.Minute), day.Add(6*time.Hour + 15*time.Minute)},
		{day.Add(7 * time.Minute), day.Add(2*24*time.Hour + 3*time.Minute)},
		{day.Add(time.Hour), day},
	}
	rng := rand.New(rand.NewPCG(5, 8))
	for range 300 {
		from := day.Add(time.Duration(rng.Int64N(int64(5 * 24 * time.Hour))))
		ranges = append(ranges, [2]time.Time{from, from.Add(time.Duration(rng.Int64N(int64(4 * 24 * time.Hour))))})
	}
	q := core.OutcomeBucketSize
	for _, r := range ranges {
		spans := RollupSpans(r[0], r[1])
		covered := map[time.Time]int{}
		count := map[int]int{}
		for _, s := range spans {
			width := time.Duration(s.Minutes) * time.Minute
			if !s.From.Before(s.To) || !s.From.Equal(s.From.Truncate(width)) || !s.To.Equal(s.To.Truncate(width)) {
				t.Fatalf("%v: span %+v empty or not aligned to its width", r, s)
			}
			count[s.Minutes]++
			for b := s.From; b.Before(s.To); b = b.Add(q) {
				covered[b]++
			}
		}
		if count[DayMinutes] > 1 || count[HourMinutes] > 2 || count[QuarterMinutes] > 4 || len(count) > 3 {
			t.Fatalf("%v: spans %+v", r, spans)
		}
		want := 0
		for b := CeilTime(r[0], q); b.Before(r[1]); b = b.Add(q) {
			want++
			if covered[b] != 1 {
				t.Fatalf("%v: bucket %v covered %d times by %+v", r, b, covered[b], spans)
			}
		}
		if len(covered) != want {
			t.Fatalf("%v: spans cover %d buckets, want %d", r, len(covered), want)
		}
	}
}
