package routing

import (
	"context"
	"fmt"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Explanation is the answer of POST /pro/routing-rules/test: what
// delivery would do with a sample message, and why.
type Explanation struct {
	// Matched is true when a routing rule chooses the message.
	Matched bool `json:"matched"`
	// Rule is the rule that chooses it, or nil.
	Rule *RoutingRule `json:"rule"`
	// ConnectionID is the connection tried first (nil: the default
	// connection, as without Pro); ChosenBy says what chose it.
	ConnectionID *int64 `json:"connection_id"`
	ChosenBy     string `json:"chosen_by"`
	// Rules is every rule, in the order they are tried, with its verdict.
	Rules []RuleExplanation `json:"rules"`
}

// RuleExplanation is one rule's verdict on the sample message. Result
// is chosen, matched (a rule before it chose), not_matched or skipped
// (Reason says why: disabled, connection deleted or inactive).
type RuleExplanation struct {
	ID           int64                  `json:"id"`
	Name         string                 `json:"name"`
	Priority     int                    `json:"priority"`
	ConnectionID int64                  `json:"connection_id"`
	Result       string                 `json:"result"`
	Reason       string                 `json:"reason,omitempty"`
	Conditions   []ConditionExplanation `json:"conditions"`
}

// ConditionExplanation is one condition and whether it holds.
type ConditionExplanation struct {
	RoutingCondition
	Holds bool `json:"holds"`
}

// Explain runs the rules (only rule ruleID when it is not 0; ENOTFOUND
// when it does not exist) and the sender groups on a sample message
// without sending or counting anything.
func (s *Service) Explain(ctx context.Context, l *core.Log, ruleID int64) (*Explanation, error) {
	snap, err := s.read(ctx, true)
	if err != nil {
		return nil, err
	}
	if ruleID != 0 {
		var only []compiledRule
		for _, r := range snap.rules {
			if r.ID == ruleID {
				only = append(only, r)
			}
		}
		if len(only) == 0 {
			return nil, core.Errorf(core.ENOTFOUND, "Routing rule %d not found.", ruleID)
		}
		snap.rules = only
	}
	seen := map[int64]*ruleVerdict{}
	chosen := snap.matchRule(l, seen)
	out := &Explanation{Rules: []RuleExplanation{}, ChosenBy: "default connection"}
	for _, r := range snap.rules {
		v := seen[r.ID]
		e := RuleExplanation{ID: r.ID, Name: r.Name, Priority: r.Priority, ConnectionID: r.ConnectionID,
			Conditions: []ConditionExplanation{}}
		for i, c := range r.conds {
			e.Conditions = append(e.Conditions, ConditionExplanation{RoutingCondition: c.RoutingCondition, Holds: v.verdicts[i]})
		}
		switch {
		case chosen != nil && chosen.ID == r.ID:
			e.Result = "chosen"
		case v.skipped != "":
			e.Result, e.Reason = "skipped", v.skipped
		case v.matched:
			e.Result, e.Reason = "matched", "A rule tried before it chose the message."
		default:
			e.Result = "not_matched"
		}
		out.Rules = append(out.Rules, e)
	}
	if chosen != nil {
		out.Matched, out.Rule = true, chosen.RoutingRule
		id := chosen.ConnectionID
		out.ConnectionID = &id
		out.ChosenBy = fmt.Sprintf("routing rule %d %q", chosen.ID, chosen.Name)
		return out, nil
	}
	if ruleID != 0 {
		return out, nil
	}
	sender := strings.ToLower(l.Message.From.Email)
	if g := snap.groups[sender]; g != nil {
		order := snap.groupOrder(sender, g, l.ID)
		counts, err := s.todaySendCounts(ctx)
		if err != nil {
			return nil, err
		}
		for _, m := range order {
			if m.DailyCap == 0 || counts[m.ConnectionID] < m.DailyCap {
				id := m.ConnectionID
				out.ConnectionID = &id
				out.ChosenBy = fmt.Sprintf("sender group %s (%s)", sender, g.Strategy)
				break
			}
		}
	}
	return out, nil
}
