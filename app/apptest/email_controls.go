package apptest

import (
	"context"
	"sync"

	"github.com/mailsvc/mailsvc/core"
)

// EmailControlCounter is an in-memory core.EmailControlCounter.
type EmailControlCounter struct {
	mu     sync.Mutex
	counts map[[2]string]int64 // (kind, day) → count
}

// NewEmailControlCounter returns an empty counter.
func NewEmailControlCounter() *EmailControlCounter {
	return &EmailControlCounter{counts: map[[2]string]int64{}}
}

// AddEmailControlCount implements core.EmailControlCounter.
func (c *EmailControlCounter) AddEmailControlCount(_ context.Context, kind, day string, n int64) error {
	if kind == "" || len(day) != len(core.EmailControlDay) {
		return core.Errorf(core.EINVALID, "An email control count needs a kind and a day (YYYY-MM-DD).")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[[2]string{kind, day}] += n
	return nil
}

// EmailControlCounts implements core.EmailControlCounter.
func (c *EmailControlCounter) EmailControlCounts(_ context.Context, from, to string) (map[string]int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int64{}
	for k, n := range c.counts {
		if (from == "" || k[1] >= from) && (to == "" || k[1] <= to) {
			out[k[0]] += n
		}
	}
	return out, nil
}
