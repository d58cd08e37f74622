package dashboard

import (
	"context"
	"sort"
	"time"

	"github.com/mailsvc/mailsvc/app/period"
	"github.com/mailsvc/mailsvc/core"
)

// Chart bucket sizes.
const (
	BucketHour = "hour"
	BucketDay  = "day"
)

// ChartQuery is a chart request as the query string gives it: the range
// (see RangeQuery; default the last 30 days) and the bucket, "hour" or
// "day" (default "day").
type ChartQuery struct {
	RangeQuery
	Bucket string
}

// ChartPoint is one bucket of the chart. Label is the local date
// (YYYY-MM-DD) of a day bucket, or the local time (RFC 3339 with the
// offset, so that the repeated hour of a DST change stays distinct) of an
// hour bucket.
type ChartPoint struct {
	Label string    `json:"label"`
	Start time.Time `json:"start"`
	Counts
	Total int64 `json:"total"`
}

// Chart is GET /dashboard/chart.
type Chart struct {
	TimeZone string `json:"timezone"`
	Bucket   string `json:"bucket"`
	Period
	// Points covers the whole range, empty buckets included, oldest first.
	Points []ChartPoint `json:"points"`
	Totals Counts       `json:"totals"`
}

// Chart returns the delivered and failed volume per local hour or day
// over a range, every bucket present (zero when nothing happened). The
// range is widened to whole buckets; a range of hours may cover at most
// MaxHourlyDays days.
func (s *Service) Chart(ctx context.Context, q ChartQuery) (*Chart, error) {
	loc, err := s.location(ctx)
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	bucket := q.Bucket
	if bucket == "" {
		bucket = BucketDay
	}
	if bucket != BucketHour && bucket != BucketDay {
		fields["bucket"] = "Must be hour or day."
	}
	rng, rangeFields := q.RangeQuery.resolve(s.now(), loc, DefaultDays)
	for k, v := range rangeFields {
		fields[k] = v
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	starts := bucketStarts(rng, loc, bucket)
	end := starts[len(starts)-1]
	starts = starts[:len(starts)-1]
	if bucket == BucketHour && len(starts) > MaxHourlyDays*24+1 {
		return nil, core.InvalidField("bucket", "Hourly buckets cover at most 31 days: choose day, or a shorter range.")
	}
	buckets, err := s.outcomes(ctx, starts[0], end)
	if err != nil {
		return nil, err
	}
	out := &Chart{TimeZone: loc.String(), Bucket: bucket, Period: Period{From: starts[0], To: end}, Points: make([]ChartPoint, len(starts))}
	for i, st := range starts {
		out.Points[i] = ChartPoint{Start: st, Label: label(st, bucket)}
	}
	for _, b := range buckets {
		i := sort.Search(len(starts), func(i int) bool { return starts[i].After(b.Start) }) - 1
		if i < 0 || !b.Start.Before(end) {
			continue
		}
		out.Points[i].add(b)
		out.Totals.add(b)
	}
	for i := range out.Points {
		out.Points[i].Total = out.Points[i].Delivered + out.Points[i].Failed
	}
	return out, nil
}

// bucketStarts returns the local starts of the buckets covering rng,
// followed by the end of the last one. Days run from local midnight to
// local midnight (23 or 25 hours on a DST change); hours are real hours,
// so a DST change day has 23 or 25 of them.
func bucketStarts(rng Period, loc *time.Location, bucket string) []time.Time {
	var out []time.Time
	if bucket == BucketDay {
		t := period.Midnight(rng.From, loc, 0)
		for {
			out = append(out, t)
			if !t.Before(rng.To) {
				return out
			}
			t = period.Midnight(t, loc, 1)
		}
	}
	f := rng.From.In(loc)
	t := time.Date(f.Year(), f.Month(), f.Day(), f.Hour(), 0, 0, 0, loc)
	if t.After(f) { // the hour's start fell in a DST gap
		t = t.Add(-time.Hour)
	}
	for {
		out = append(out, t)
		if !t.Before(rng.To) || len(out) > MaxHourlyDays*24+2 {
			return out
		}
		t = t.Add(time.Hour)
	}
}

func label(t time.Time, bucket string) string {
	if bucket == BucketDay {
		return t.Format(time.DateOnly)
	}
	return t.Format(time.RFC3339)
}
