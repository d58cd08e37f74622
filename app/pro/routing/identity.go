package routing

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Caching of the verified identities of SES connections.
const (
	// DefaultIdentityTTL is how long an SES connection's verified
	// identities are reused before they are asked again.
	DefaultIdentityTTL = 5 * time.Minute
	// identityRetry is how long a failed lookup waits before the next.
	identityRetry = 30 * time.Second
	// identityTimeout bounds a lookup made in the background.
	identityTimeout = 30 * time.Second
	// sesDriver is the driver whose verified identities count as senders.
	sesDriver = "ses"
)

// VerifiedIdentities returns the identities of SES connection id that
// are verified for sending: addresses, and domains (any address at them,
// or at a subdomain of them, may send). app/pro/sesid.Service.ValidSenders
// gives them.
type VerifiedIdentities func(ctx context.Context, id int64) (addresses, domains []string, err error)

// identitySet is one connection's verified identities, lower-cased. It is
// not changed once made, so snapshots share it.
type identitySet struct {
	addresses, domains map[string]bool
}

func newIdentitySet(addresses, domains []string) *identitySet {
	v := &identitySet{addresses: map[string]bool{}, domains: map[string]bool{}}
	for _, a := range addresses {
		v.addresses[strings.ToLower(strings.TrimSpace(a))] = true
	}
	for _, d := range domains {
		v.domains[strings.ToLower(strings.TrimSpace(d))] = true
	}
	return v
}

// covers reports whether sender is a verified address, or an address at
// a verified domain or one of its subdomains.
func (v *identitySet) covers(sender string) bool {
	if v == nil {
		return false
	}
	sender = strings.ToLower(sender)
	if v.addresses[sender] {
		return true
	}
	at := strings.LastIndexByte(sender, '@')
	if at < 0 {
		return false
	}
	for d := sender[at+1:]; d != ""; {
		if v.domains[d] {
			return true
		}
		_, parent, ok := strings.Cut(d, ".")
		if !ok || !strings.Contains(parent, ".") {
			return false // never a bare top-level domain
		}
		d = parent
	}
	return false
}

// identityEntry is the cache of one connection's identities.
type identityEntry struct {
	set       *identitySet // last good answer; nil before the first
	fetchedAt time.Time
	failedAt  time.Time // last failed lookup
	busy      bool      // a lookup runs
}

// identityCache holds the identities of every SES connection asked.
type identityCache struct {
	mu      sync.Mutex
	entries map[int64]*identityEntry
}

// fromEmail returns the lower-cased from_email setting of c.
func fromEmail(c *core.Connection) string {
	from, _ := c.Settings["from_email"].(string)
	return strings.ToLower(strings.TrimSpace(from))
}

// identityCandidate reports whether c's verified identities say what it
// sends as: an SES connection without from_email (which, when set,
// replaces every message's From).
func identityCandidate(c *core.Connection) bool {
	return c.Driver == sesDriver && fromEmail(c) == ""
}

func (s *Service) identityTTL() time.Duration {
	if s.IdentityTTL > 0 {
		return s.IdentityTTL
	}
	return DefaultIdentityTTL
}

// entry returns connection id's cache entry, made empty on first use.
// The caller holds c.mu.
func (c *identityCache) entry(id int64) *identityEntry {
	if c.entries == nil {
		c.entries = map[int64]*identityEntry{}
	}
	e := c.entries[id]
	if e == nil {
		e = &identityEntry{}
		c.entries[id] = e
	}
	return e
}

// claim reports whether connection id's identities should be asked now
// and, if so, marks a lookup as running; first is true when nothing was
// ever asked of it.
func (s *Service) claim(id int64, now time.Time) (due, first bool) {
	s.ids.mu.Lock()
	defer s.ids.mu.Unlock()
	e := s.ids.entry(id)
	stale := e.set == nil || now.Sub(e.fetchedAt) >= s.identityTTL()
	if e.busy || !stale || (!e.failedAt.IsZero() && now.Sub(e.failedAt) < identityRetry) {
		return false, false
	}
	e.busy = true
	return true, e.set == nil && e.failedAt.IsZero()
}

// lookup asks connection id's identities and caches the answer; on a
// failure the last good answer stays. It reports whether it got one.
func (s *Service) lookup(ctx context.Context, id int64) bool {
	addresses, domains, err := s.Identities(ctx, id)
	s.ids.mu.Lock()
	defer s.ids.mu.Unlock()
	e := s.ids.entry(id)
	e.busy = false
	if err != nil {
		e.failedAt = time.Now()
		s.logger().Warn("sender groups: cannot read the verified identities of an SES connection", "connection", id, "error", err)
		return false
	}
	e.set, e.fetchedAt, e.failedAt = newIdentitySet(addresses, domains), time.Now(), time.Time{}
	return true
}

// cached returns connection id's last good identities, or nil.
func (s *Service) cached(id int64) *identitySet {
	s.ids.mu.Lock()
	defer s.ids.mu.Unlock()
	if e := s.ids.entries[id]; e != nil {
		return e.set
	}
	return nil
}

// verifiedSets returns the verified identities of the SES connections
// among conns that send as whatever the message's From is. Answers older
// than IdentityTTL are asked again: now when wait is set (the routes),
// else in the background while the cached answer serves (delivery),
// except for a connection never asked yet, which is asked now so that
// the first message after a start sees its group whole.
func (s *Service) verifiedSets(ctx context.Context, conns []*core.Connection, wait bool) map[int64]*identitySet {
	if s.Identities == nil {
		return nil
	}
	out := map[int64]*identitySet{}
	now := time.Now()
	for _, c := range conns {
		if !identityCandidate(c) {
			continue
		}
		due, first := s.claim(c.ID, now)
		switch {
		case due && (wait || first):
			s.lookup(ctx, c.ID)
		case due:
			go func(id int64) {
				bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), identityTimeout)
				defer cancel()
				if s.lookup(bg, id) {
					s.invalidate()
				}
			}(c.ID)
		}
		if set := s.cached(c.ID); set != nil {
			out[c.ID] = set
		}
	}
	return out
}
