package routing

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/core"
)

var _ delivery.ConnectionChooser = (*Service)(nil)

// Choose implements delivery.ConnectionChooser: the first active routing
// rule (by priority, then id) whose conditions all hold and whose
// connection exists and is active sends the message (then the
// fallback_connection_id connection, when set, different and active);
// else a saved sender group whose sender is the message's From uses its
// strategy; else no opinion (the default connection).
func (s *Service) Choose(ctx context.Context, l *core.Log) (delivery.Choice, error) {
	snap, err := s.load(ctx)
	if err != nil {
		return delivery.Choice{}, err
	}
	if r := snap.matchRule(l, nil); r != nil {
		ids := []int64{r.ConnectionID}
		if fb := snap.conns[snap.fallback]; fb != nil && fb.IsActive && fb.ID != r.ConnectionID {
			ids = append(ids, fb.ID)
		}
		return delivery.Choice{ConnectionIDs: ids, Rule: fmt.Sprintf("routing rule %d %q", r.ID, r.Name)}, nil
	}
	sender := strings.ToLower(l.Message.From.Email)
	g := snap.groups[sender]
	if g == nil {
		return delivery.Choice{}, nil
	}
	order := snap.groupOrder(sender, g, l.ID)
	if len(order) == 0 {
		return delivery.Choice{}, nil
	}
	ids, err := s.reserve(ctx, l, order)
	if err != nil || len(ids) == 0 {
		return delivery.Choice{}, err
	}
	return delivery.Choice{ConnectionIDs: ids, Rule: fmt.Sprintf("sender group %s (%s)", sender, g.Strategy)}, nil
}

// ruleVerdict is why a rule did or did not choose a message.
type ruleVerdict struct {
	matched  bool
	skipped  string // why a matching rule was passed over
	verdicts []bool
}

// matchRule returns the rule that chooses l, or nil. When seen is not
// nil it records every rule's verdict.
func (snap *snapshot) matchRule(l *core.Log, seen map[int64]*ruleVerdict) *compiledRule {
	var chosen *compiledRule
	for i := range snap.rules {
		r := &snap.rules[i]
		if !r.IsActive && seen == nil {
			continue
		}
		v := &ruleVerdict{matched: true}
		for _, c := range r.conds {
			ok := c.holds(l)
			v.verdicts = append(v.verdicts, ok)
			v.matched = v.matched && ok
			if !ok && seen == nil {
				break
			}
		}
		conn := snap.conns[r.ConnectionID]
		switch {
		case !r.IsActive:
			v.skipped = "The rule is disabled."
		case !v.matched:
		case conn == nil:
			v.skipped = fmt.Sprintf("Its connection %d has been deleted.", r.ConnectionID)
		case !conn.IsActive:
			v.skipped = fmt.Sprintf("Its connection %d (%s) is inactive.", conn.ID, conn.Name)
		case chosen == nil:
			chosen = r
		}
		if seen == nil && chosen != nil {
			return chosen
		}
		if seen != nil {
			seen[r.ID] = v
		}
	}
	return chosen
}

// groupOrder returns the connections of group g to try for the message
// with id logID: its active members, those not down (all of them when
// every one is down) — none when fewer than two members are active, as
// then there is no group; failover keeps the members' order, balance puts
// first the member smooth weighted round robin gives position logID, then
// the others in order; overflow keeps the order (reserve skips members at
// their cap).
func (snap *snapshot) groupOrder(sender string, g *SenderGroup, logID int64) []SenderGroupMember {
	var active, up []SenderGroupMember
	for _, m := range snap.members(sender, g) {
		c := snap.conns[m.ConnectionID]
		if !c.IsActive {
			continue
		}
		active = append(active, m)
		if c.HealthStatus != core.HealthDown {
			up = append(up, m)
		}
	}
	if len(active) < 2 {
		return nil
	}
	list := up
	if len(list) == 0 {
		list = active
	}
	if g.Strategy != StrategyBalance || len(list) < 2 {
		return list
	}
	weights := make([]int, len(list))
	for i, m := range list {
		weights[i] = max(m.Weight, 1)
	}
	first := BalancePick(weights, logID)
	return append([]SenderGroupMember{list[first]}, slices.Delete(slices.Clone(list), first, first+1)...)
}

// reserve turns a group's order into the list the engine tries, counting
// the message against the member it is assigned to in the site's today:
// a new message is assigned to the first member below its daily cap; a
// retry stays on its connection without counting again; a message moved
// on from connection X is assigned to the first member after X below its
// cap. The list it returns makes the engine try that member (see
// delivery.ConnectionChooser); none when every member is at its cap.
func (s *Service) reserve(ctx context.Context, l *core.Log, order []SenderGroupMember) ([]int64, error) {
	ids := make([]int64, len(order))
	for i, m := range order {
		ids[i] = m.ConnectionID
	}
	from := 0
	var prefix []int64
	if l.Attempts > 0 && l.SentConnectionID != nil {
		if i := slices.Index(ids, *l.SentConnectionID); i >= 0 {
			if l.PhaseAttempts > 0 {
				return ids, nil // a retry: same connection, counted already
			}
			from, prefix = i+1, []int64{ids[i]}
		}
	}
	day, err := s.day(ctx, s.now())
	if err != nil {
		return nil, err
	}
	for j := from; j < len(order); j++ {
		ok, err := s.Store.ReserveSend(ctx, order[j].ConnectionID, day, order[j].DailyCap)
		if err != nil {
			return nil, fmt.Errorf("count a send of connection %d: %w", order[j].ConnectionID, err)
		}
		if ok {
			return append(prefix, ids[j:]...), nil
		}
	}
	if prefix != nil {
		return prefix, nil // the engine finds nothing left and fails it
	}
	return nil, nil
}

// BalancePick returns the member that smooth weighted round robin (as
// nginx does it) picks at position n of its sequence: the sequence
// repeats every sum(weights) picks and gives member i weights[i] of them,
// spread out. Positions are message ids, so every replica picks the same
// member for a message and consecutive messages follow the weights.
func BalancePick(weights []int, n int64) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	if total == 0 {
		return 0
	}
	pos := int(((n % int64(total)) + int64(total)) % int64(total))
	current := make([]int, len(weights))
	pick := 0
	for range pos + 1 {
		pick = 0
		for i, w := range weights {
			current[i] += w
			if current[i] > current[pick] {
				pick = i
			}
		}
		current[pick] -= total
	}
	return pick
}
