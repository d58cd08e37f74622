package routing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mailsvc/mailsvc/core"
)

// Bounds of a rule.
const (
	MaxNameLength = 191
	MaxPriority   = 1000000
)

// Bulk actions on rules.
const (
	BulkEnable  = "enable"
	BulkDisable = "disable"
	BulkDelete  = "delete"
)

// RuleInput is a rule as the routes receive it; nil fields are left as
// they are on update and take their defaults on create (no conditions,
// priority after the last rule, active).
type RuleInput struct {
	Name         *string
	Conditions   *[]RoutingCondition
	ConnectionID *int64
	Priority     *int
	IsActive     *bool
}

// Rules returns every rule, by priority then id.
func (s *Service) Rules(ctx context.Context) ([]*RoutingRule, error) {
	rules, err := s.Store.FindRoutingRules(ctx)
	if err != nil {
		return nil, fmt.Errorf("list routing rules: %w", err)
	}
	return rules, nil
}

// Rule returns one rule or an ENOTFOUND error.
func (s *Service) Rule(ctx context.Context, id int64) (*RoutingRule, error) {
	return s.Store.FindRoutingRuleByID(ctx, id)
}

// CreateRule validates in (name and connection_id required) and stores
// a new rule.
func (s *Service) CreateRule(ctx context.Context, in RuleInput) (*RoutingRule, error) {
	r := &RoutingRule{Conditions: []RoutingCondition{}, IsActive: true}
	if in.Priority == nil {
		rules, err := s.Store.FindRoutingRules(ctx)
		if err != nil {
			return nil, fmt.Errorf("create routing rule: %w", err)
		}
		r.Priority = 1
		for _, o := range rules {
			r.Priority = max(r.Priority, o.Priority+1)
		}
		r.Priority = min(r.Priority, MaxPriority)
	}
	if err := s.apply(ctx, r, in, true); err != nil {
		return nil, err
	}
	if err := s.Store.CreateRoutingRule(ctx, r); err != nil {
		return nil, fmt.Errorf("create routing rule: %w", err)
	}
	s.invalidate()
	return r, nil
}

// UpdateRule validates in and changes the fields it sets on rule id.
func (s *Service) UpdateRule(ctx context.Context, id int64, in RuleInput) (*RoutingRule, error) {
	r, err := s.Store.FindRoutingRuleByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.apply(ctx, r, in, false); err != nil {
		return nil, err
	}
	if err := s.Store.UpdateRoutingRule(ctx, r); err != nil {
		return nil, fmt.Errorf("update routing rule %d: %w", id, err)
	}
	s.invalidate()
	return r, nil
}

// DeleteRule deletes rule id; ENOTFOUND when it does not exist.
func (s *Service) DeleteRule(ctx context.Context, id int64) error {
	n, err := s.Store.DeleteRoutingRules(ctx, []int64{id})
	if err != nil {
		return fmt.Errorf("delete routing rule %d: %w", id, err)
	}
	if n == 0 {
		return core.Errorf(core.ENOTFOUND, "Routing rule %d not found.", id)
	}
	s.invalidate()
	return nil
}

// Reorder gives the rules ids (in that order) the priorities 1..n;
// rules not named keep theirs. 422 for an empty list or a repeated id,
// 404 for an unknown one.
func (s *Service) Reorder(ctx context.Context, ids []int64) ([]*RoutingRule, error) {
	if err := checkIDs(ids); err != nil {
		return nil, err
	}
	if err := s.Store.ReorderRoutingRules(ctx, ids); err != nil {
		return nil, err
	}
	s.invalidate()
	return s.Rules(ctx)
}

// Bulk enables, disables or deletes the rules ids and returns how many
// existed.
func (s *Service) Bulk(ctx context.Context, action string, ids []int64) (int, error) {
	errs := map[string]string{}
	if action != BulkEnable && action != BulkDisable && action != BulkDelete {
		errs["action"] = "Use enable, disable or delete."
	}
	if err := checkIDs(ids); err != nil {
		errs["ids"] = "A list of distinct rule ids is required."
	}
	if err := core.Invalid(errs); err != nil {
		return 0, err
	}
	var n int
	var err error
	if action == BulkDelete {
		n, err = s.Store.DeleteRoutingRules(ctx, ids)
	} else {
		n, err = s.Store.SetRoutingRulesActive(ctx, ids, action == BulkEnable)
	}
	if err != nil {
		return 0, fmt.Errorf("bulk %s routing rules: %w", action, err)
	}
	s.invalidate()
	return n, nil
}

func checkIDs(ids []int64) error {
	if len(ids) == 0 {
		return core.InvalidField("ids", "At least one rule id is required.")
	}
	seen := map[int64]bool{}
	for _, id := range ids {
		if id <= 0 || seen[id] {
			return core.InvalidField("ids", fmt.Sprintf("Rule id %d is repeated or not a valid id.", id))
		}
		seen[id] = true
	}
	return nil
}

// apply validates in and copies it onto r; 422 per field (conditions
// as conditions[i].field, .operator, .value).
func (s *Service) apply(ctx context.Context, r *RoutingRule, in RuleInput, create bool) error {
	errs := map[string]string{}
	if in.Name != nil {
		r.Name = strings.TrimSpace(*in.Name)
	}
	if (create || in.Name != nil) && r.Name == "" {
		errs["name"] = "A name is required."
	} else if utf8.RuneCountInString(r.Name) > MaxNameLength {
		errs["name"] = fmt.Sprintf("A name is at most %d characters.", MaxNameLength)
	}
	if in.Conditions != nil {
		conds := *in.Conditions
		if len(conds) > MaxConditions {
			errs["conditions"] = fmt.Sprintf("A rule has at most %d conditions.", MaxConditions)
		}
		for i, c := range conds {
			_, ce := compileCondition(c)
			for k, msg := range ce {
				errs[fmt.Sprintf("conditions[%d].%s", i, k)] = msg
			}
		}
		r.Conditions = append([]RoutingCondition{}, conds...)
	}
	if in.Priority != nil {
		r.Priority = *in.Priority
		if r.Priority < 0 || r.Priority > MaxPriority {
			errs["priority"] = fmt.Sprintf("A priority is between 0 and %d.", MaxPriority)
		}
	}
	if in.IsActive != nil {
		r.IsActive = *in.IsActive
	}
	if in.ConnectionID != nil {
		r.ConnectionID = *in.ConnectionID
	}
	if create && in.ConnectionID == nil {
		errs["connection_id"] = "A connection is required."
	} else if in.ConnectionID != nil {
		conns, _, err := s.Connections.List(ctx, 0, 0)
		if err != nil {
			return fmt.Errorf("check the rule's connection: %w", err)
		}
		usable, err := core.CanUseConnection(ctx, s.Use, 0, r.ConnectionID)
		if err != nil {
			return fmt.Errorf("check the rule's connection: %w", err)
		}
		if !usable || !slices.ContainsFunc(conns, func(c *core.Connection) bool { return c.ID == r.ConnectionID }) {
			errs["connection_id"] = core.NoSuchConnection(r.ConnectionID)
		}
	}
	return core.Invalid(errs)
}
