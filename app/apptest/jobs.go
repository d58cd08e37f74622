package apptest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.JobStore = (*JobStore)(nil)

// JobStore is an in-memory core.JobStore. Its clock decides eligibility,
// as the database's does for the real store; tests that step through
// intervals without waiting set it with SetClock.
type JobStore struct {
	mu   sync.Mutex
	now  func() time.Time
	rows map[string]*core.JobRun
	wins map[string]int
}

// NewJobStore returns an empty store on the real clock.
func NewJobStore() *JobStore {
	return &JobStore{now: time.Now, rows: map[string]*core.JobRun{}, wins: map[string]int{}}
}

// SetClock makes now the store's clock.
func (s *JobStore) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// ClaimJobRun implements core.JobStore.
func (s *JobStore) ClaimJobRun(_ context.Context, name, owner string, interval time.Duration) (bool, error) {
	if name == "" || owner == "" {
		return false, errors.New("claim job run: name and owner are required")
	}
	if interval <= 0 {
		return false, fmt.Errorf("claim job run %s: interval %v is not positive", name, interval)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.now().UTC()
	if r, ok := s.rows[name]; ok && r.LastRunAt.After(t.Add(-interval)) {
		return false, nil
	}
	s.rows[name] = &core.JobRun{Name: name, Owner: owner, LastRunAt: t}
	s.wins[name]++
	return true, nil
}

// FinishJobRun implements core.JobStore.
func (s *JobStore) FinishJobRun(_ context.Context, name, owner, errMsg string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.rows[name]; ok && r.Owner == owner {
		t := s.now().UTC()
		r.FinishedAt, r.LastError = &t, errMsg
	}
	return nil
}

// FindJobRuns implements core.JobStore.
func (s *JobStore) FindJobRuns(context.Context) ([]core.JobRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]core.JobRun, 0, len(s.rows))
	for _, r := range s.rows {
		c := *r
		if r.FinishedAt != nil {
			t := *r.FinishedAt
			c.FinishedAt = &t
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// PruneJobRuns deletes the records named prefix… whose last run started
// before before (store.JobService.PruneJobRuns).
func (s *JobStore) PruneJobRuns(_ context.Context, prefix string, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for name, r := range s.rows {
		if strings.HasPrefix(name, prefix) && r.LastRunAt.Before(before) {
			delete(s.rows, name)
			n++
		}
	}
	return n, nil
}

// Claims returns how many claims of job name have won so far.
func (s *JobStore) Claims(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wins[name]
}
