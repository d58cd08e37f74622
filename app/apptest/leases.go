package apptest

import (
	"context"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// LeaseStore is an in-memory lease table with the contract of the store's
// AcquireLease and ReleaseLease. Several services sharing one LeaseStore
// behave like replicas sharing one database.
type LeaseStore struct {
	mu     sync.Mutex
	leases map[string]lease
	// Now, when set, replaces the clock (tests move time forward).
	Now func() time.Time
}

type lease struct {
	owner string
	until time.Time
}

// NewLeaseStore returns an empty lease table.
func NewLeaseStore() *LeaseStore { return &LeaseStore{leases: map[string]lease{}} }

func (s *LeaseStore) now() time.Time { return core.NowFrom(s.Now) }

// AcquireLease takes or renews the named lease for owner until now+ttl; it
// returns false while another owner holds an unexpired lease.
func (s *LeaseStore) AcquireLease(_ context.Context, name, owner string, ttl time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.now()
	if l, ok := s.leases[name]; ok && l.owner != owner && !l.until.Before(t) {
		return false, nil
	}
	s.leases[name] = lease{owner: owner, until: t.Add(ttl)}
	return true, nil
}

// ReleaseLease ends the named lease when owner holds it (any holder when
// owner is "") and reports whether an unexpired lease was ended.
func (s *LeaseStore) ReleaseLease(_ context.Context, name, owner string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.leases[name]
	if !ok || l.until.Before(s.now()) || (owner != "" && l.owner != owner) {
		return false, nil
	}
	delete(s.leases, name)
	return true, nil
}
