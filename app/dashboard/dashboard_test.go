package dashboard_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/core"
)

// outcomes is an in-memory dashboard.OutcomeCounter following the port's
// contract (Start in [from, to), ordered by Start); it counts its calls.
type outcomes struct {
	mu      sync.Mutex
	buckets []core.OutcomeBucket
	calls   int
}

// add counts n outcomes of status through conn at t (floored to its
// 15-minute bucket, as the roll-up does).
func (o *outcomes) add(t time.Time, conn int64, status string, n int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	start := t.UTC().Truncate(core.OutcomeBucketSize)
	for i := range o.buckets {
		b := &o.buckets[i]
		if b.Start.Equal(start) && b.ConnectionID == conn && b.Status == status {
			b.Count += n
			return
		}
	}
	o.buckets = append(o.buckets, core.OutcomeBucket{Start: start, ConnectionID: conn, Status: status, Count: n})
}

func (o *outcomes) OutcomeBuckets(_ context.Context, from, to time.Time) ([]core.OutcomeBucket, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls++
	var out []core.OutcomeBucket
	for _, b := range o.buckets {
		if !b.Start.Before(from) && b.Start.Before(to) {
			out = append(out, b)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Start.Before(out[j-1].Start); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// site is a dashboard.Site with a fixed zone and admin address.
type site struct {
	loc   *time.Location
	admin string
}

func (s site) TimeZone(context.Context) (*time.Location, error) { return s.loc, nil }
func (s site) AdminEmail(context.Context) (string, error)       { return s.admin, nil }

// queue is a dashboard.QueueCounter with fixed counts.
type queue core.QueueStats

func (q queue) PendingCounts(context.Context) (core.QueueStats, error) {
	return core.QueueStats(q), nil
}

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fields returns the per-field messages of a validation error, nil for
// any other error.
func fields(err error) map[string]string {
	if core.ErrorCode(err) != core.EINVALID {
		return nil
	}
	return core.ErrorFields(err)
}

var _ dashboard.OutcomeCounter = (*outcomes)(nil)
