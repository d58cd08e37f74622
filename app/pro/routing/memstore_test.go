package routing_test

import (
	"context"
	"slices"
	"sync"

	"github.com/mailsvc/mailsvc/app/pro/routing"
	"github.com/mailsvc/mailsvc/core"
)

// memStore is an in-memory routing.RoutingStore.
type memStore struct {
	mu     sync.Mutex
	next   int64
	rules  []*routing.RoutingRule
	groups map[string]*routing.SenderGroup
	counts map[string]map[int64]int64
}

func newMemStore() *memStore {
	return &memStore{groups: map[string]*routing.SenderGroup{}, counts: map[string]map[int64]int64{}}
}

func (m *memStore) FindRoutingRules(context.Context) ([]*routing.RoutingRule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*routing.RoutingRule, 0, len(m.rules))
	for _, r := range m.rules {
		c := *r
		c.Conditions = slices.Clone(r.Conditions)
		out = append(out, &c)
	}
	slices.SortStableFunc(out, func(a, b *routing.RoutingRule) int {
		if a.Priority != b.Priority {
			return a.Priority - b.Priority
		}
		return int(a.ID - b.ID)
	})
	return out, nil
}

func (m *memStore) FindRoutingRuleByID(ctx context.Context, id int64) (*routing.RoutingRule, error) {
	all, _ := m.FindRoutingRules(ctx)
	for _, r := range all {
		if r.ID == id {
			return r, nil
		}
	}
	return nil, core.Errorf(core.ENOTFOUND, "Routing rule %d not found.", id)
}

func (m *memStore) CreateRoutingRule(_ context.Context, r *routing.RoutingRule) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	r.ID = m.next
	c := *r
	m.rules = append(m.rules, &c)
	return nil
}

func (m *memStore) UpdateRoutingRule(_ context.Context, r *routing.RoutingRule) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, o := range m.rules {
		if o.ID == r.ID {
			c := *r
			m.rules[i] = &c
			return nil
		}
	}
	return core.Errorf(core.ENOTFOUND, "Routing rule %d not found.", r.ID)
}

func (m *memStore) DeleteRoutingRules(_ context.Context, ids []int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.rules)
	m.rules = slices.DeleteFunc(m.rules, func(r *routing.RoutingRule) bool { return slices.Contains(ids, r.ID) })
	return n - len(m.rules), nil
}

func (m *memStore) SetRoutingRulesActive(_ context.Context, ids []int64, active bool) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, r := range m.rules {
		if slices.Contains(ids, r.ID) {
			r.IsActive = active
			n++
		}
	}
	return n, nil
}

func (m *memStore) ReorderRoutingRules(_ context.Context, ids []int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	byID := map[int64]*routing.RoutingRule{}
	for _, r := range m.rules {
		byID[r.ID] = r
	}
	for _, id := range ids {
		if byID[id] == nil {
			return core.Errorf(core.ENOTFOUND, "Routing rule %d not found.", id)
		}
	}
	for i, id := range ids {
		byID[id].Priority = i + 1
	}
	return nil
}

func (m *memStore) FindSenderGroups(context.Context) ([]*routing.SenderGroup, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*routing.SenderGroup
	for _, g := range m.groups {
		c := *g
		out = append(out, &c)
	}
	return out, nil
}

func (m *memStore) SaveSenderGroup(_ context.Context, g *routing.SenderGroup) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *g
	m.groups[g.Sender] = &c
	return nil
}

func (m *memStore) ReserveSend(_ context.Context, connID int64, day string, limit int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts[day] == nil {
		m.counts[day] = map[int64]int64{}
	}
	if limit > 0 && m.counts[day][connID] >= limit {
		return false, nil
	}
	m.counts[day][connID]++
	return true, nil
}

func (m *memStore) SendCounts(_ context.Context, day string) (map[int64]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps(m.counts[day]), nil
}

func maps(in map[int64]int64) map[int64]int64 {
	out := map[int64]int64{}
	for k, v := range in {
		out[k] = v
	}
	return out
}

// connList is a fixed routing.Connections.
type connList []*core.Connection

func (c connList) List(context.Context, int, int) ([]*core.Connection, int, error) {
	return c, len(c), nil
}

// settingsMap is a fixed routing.SettingsSource.
type settingsMap map[string]any

func (s settingsMap) Get(context.Context) (map[string]any, error) { return s, nil }
