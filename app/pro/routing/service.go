package routing

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// DefaultCacheTTL is how long the Service's delivery path reuses what it
// read of rules, groups and connections.
const DefaultCacheTTL = time.Second

// Connections lists the connections (app.Connections.List: masked, with
// constants applied; from_email is not a secret).
type Connections interface {
	List(ctx context.Context, offset, limit int) ([]*core.Connection, int, error)
}

// SettingsSource returns the free settings with defaults applied
// (app.Settings.Get); routing reads fallback_connection_id from it.
type SettingsSource interface {
	Get(ctx context.Context) (map[string]any, error)
}

// Service serves the routing rules and sender groups, and chooses the
// connections of a message for the delivery engine (Choose). Set the
// fields before use.
type Service struct {
	Store       RoutingStore
	Connections Connections
	// Settings, when set, gives fallback_connection_id: the connection a
	// routing rule's choice falls back to.
	Settings SettingsSource
	// Location returns the site's time zone, where a day of daily caps
	// starts; nil means UTC.
	Location func(ctx context.Context) (*time.Location, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// CacheTTL is how long Choose reuses rules, groups and connections
	// (0: DefaultCacheTTL). This process's own changes apply at once;
	// another replica's within CacheTTL.
	CacheTTL time.Duration
	// Identities, when set, gives the verified identities of SES
	// connections: an SES connection without from_email sends as each of
	// them (see sendsAs). Answers are reused for IdentityTTL (0:
	// DefaultIdentityTTL).
	Identities  VerifiedIdentities
	IdentityTTL time.Duration
	// Health, when set, stores a connection as down when delivery meets a
	// connection-level failure on it (see ConnectionFailed).
	Health HealthMarker
	// Use, on a multisite network, limits the connections rules and
	// sender groups (the network's) name to the network's own: a
	// connection a site created for itself is answered as a missing one.
	// Nil (a single site) lets them name any connection.
	Use core.ConnectionUse
	// Logger logs what the routes cannot report (slog.Default when nil).
	Logger *slog.Logger

	mu   sync.Mutex
	snap *snapshot
	ids  identityCache
}

// snapshot is what Choose works from.
type snapshot struct {
	at       time.Time
	rules    []compiledRule
	groups   map[string]*SenderGroup
	conns    map[int64]*core.Connection
	connList []*core.Connection
	fallback int64
	// verified are the identities of the SES connections that send as
	// them (identityCandidate), by connection id.
	verified map[int64]*identitySet
}

// compiledRule is a rule with its conditions compiled.
type compiledRule struct {
	*RoutingRule
	conds []condition
}

func (s *Service) logger() *slog.Logger { return core.LoggerOr(s.Logger) }

func (s *Service) now() time.Time { return core.NowFrom(s.Now) }

// day returns the site's local date of t, YYYY-MM-DD.
func (s *Service) day(ctx context.Context, t time.Time) (string, error) {
	loc := time.UTC
	if s.Location != nil {
		l, err := s.Location(ctx)
		if err != nil {
			return "", fmt.Errorf("site time zone: %w", err)
		}
		if l != nil {
			loc = l
		}
	}
	return t.In(loc).Format(time.DateOnly), nil
}

// invalidate drops the cached snapshot after a change.
func (s *Service) invalidate() {
	s.mu.Lock()
	s.snap = nil
	s.mu.Unlock()
}

// load returns a snapshot at most CacheTTL old.
func (s *Service) load(ctx context.Context) (*snapshot, error) {
	ttl := s.CacheTTL
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap != nil && time.Since(s.snap.at) < ttl {
		return s.snap, nil
	}
	snap, err := s.read(ctx, false)
	if err != nil {
		return nil, err
	}
	s.snap = snap
	return snap, nil
}

// read builds a fresh snapshot from the store; wait is verifiedSets'.
func (s *Service) read(ctx context.Context, wait bool) (*snapshot, error) {
	snap := &snapshot{at: time.Now(), groups: map[string]*SenderGroup{}, conns: map[int64]*core.Connection{}}
	rules, err := s.Store.FindRoutingRules(ctx)
	if err != nil {
		return nil, fmt.Errorf("read routing rules: %w", err)
	}
	for _, r := range rules {
		cr := compiledRule{RoutingRule: r}
		for _, c := range r.Conditions {
			cc, errs := compileCondition(c)
			if len(errs) > 0 {
				// A stored rule that no longer compiles never matches.
				cc.Operator, cc.re = OpMatches, nil
			}
			cr.conds = append(cr.conds, cc)
		}
		snap.rules = append(snap.rules, cr)
	}
	sortRules(snap.rules)
	groups, err := s.Store.FindSenderGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("read sender groups: %w", err)
	}
	for _, g := range groups {
		snap.groups[strings.ToLower(g.Sender)] = g
	}
	conns, _, err := s.Connections.List(ctx, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("read connections: %w", err)
	}
	if conns, err = s.networkConnections(ctx, conns); err != nil {
		return nil, err
	}
	snap.connList = conns
	for _, c := range conns {
		snap.conns[c.ID] = c
	}
	snap.verified = s.verifiedSets(ctx, conns, wait)
	if s.Settings != nil {
		m, err := s.Settings.Get(ctx)
		if err != nil {
			return nil, fmt.Errorf("read settings: %w", err)
		}
		snap.fallback = core.DecodeGeneralSettings(m).FallbackConnectionID
	}
	return snap, nil
}

// networkConnections returns the connections of conns the network may
// use (Use): rules and sender groups are the network's, so a rule or a
// group member naming a site's own connection (stored before the rule)
// finds it gone, and no implicit group takes one in. All of them on a
// single site.
func (s *Service) networkConnections(ctx context.Context, conns []*core.Connection) ([]*core.Connection, error) {
	if s.Use == nil {
		return conns, nil
	}
	out := make([]*core.Connection, 0, len(conns))
	for _, c := range conns {
		usable, err := core.CanUseConnection(ctx, s.Use, 0, c.ID)
		if err != nil {
			return nil, fmt.Errorf("read connections: %w", err)
		}
		if usable {
			out = append(out, c)
		}
	}
	return out, nil
}

// sortRules orders rules as they are tried: priority, then id.
func sortRules(rules []compiledRule) {
	slices.SortStableFunc(rules, func(a, b compiledRule) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.ID, b.ID))
	})
}
