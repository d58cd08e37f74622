package routing

import (
	"context"
	"time"
)

// RoutingCondition is one test a routing rule makes of a message: Field
// (to, cc, bcc, from, reply_to, subject, header:<name>, source,
// has_attachment), Operator (is, is_not, contains, not_contains,
// starts_with, ends_with, matches, exists) and Value (unused by exists).
type RoutingCondition struct {
	Field    string `json:"field"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
}

// RoutingRule sends the messages that meet all its Conditions through
// ConnectionID. Among the active rules that match, the lowest Priority
// wins (ties: the lowest ID).
type RoutingRule struct {
	ID           int64              `json:"id"`
	Name         string             `json:"name"`
	Conditions   []RoutingCondition `json:"conditions"`
	ConnectionID int64              `json:"connection_id"`
	Priority     int                `json:"priority"`
	IsActive     bool               `json:"is_active"`
	CreatedAt    time.Time          `json:"created_at"`
	UpdatedAt    time.Time          `json:"updated_at"`
}

// Sender group strategies.
const (
	StrategyFailover = "failover"
	StrategyBalance  = "balance"
	StrategyOverflow = "overflow"
)

// SenderGroupMember is one connection of a sender group as stored: its
// weight (balance, 1–100) and its daily cap (overflow; 0 means none).
type SenderGroupMember struct {
	ConnectionID int64 `json:"connection_id"`
	Weight       int   `json:"weight"`
	DailyCap     int64 `json:"daily_cap"`
}

// SenderGroup is the stored configuration of the connections that send as
// one sender address: the strategy and the members in failover order.
type SenderGroup struct {
	Sender    string              `json:"sender"`
	Strategy  string              `json:"strategy"`
	Members   []SenderGroupMember `json:"members"`
	UpdatedAt time.Time           `json:"updated_at"`
}

// RoutingStore persists the routing rules, sender groups and the
// per-connection daily send counters. Every method is one transaction.
type RoutingStore interface {
	// FindRoutingRules returns every rule, by priority then id.
	FindRoutingRules(ctx context.Context) ([]*RoutingRule, error)
	// FindRoutingRuleByID returns one rule or an ENOTFOUND error.
	FindRoutingRuleByID(ctx context.Context, id int64) (*RoutingRule, error)
	// CreateRoutingRule inserts r and sets its ID, CreatedAt and UpdatedAt.
	CreateRoutingRule(ctx context.Context, r *RoutingRule) error
	// UpdateRoutingRule replaces the stored fields of r.ID and sets
	// UpdatedAt; ENOTFOUND if it does not exist.
	UpdateRoutingRule(ctx context.Context, r *RoutingRule) error
	// DeleteRoutingRules deletes the rules with the given ids and returns
	// how many existed.
	DeleteRoutingRules(ctx context.Context, ids []int64) (int, error)
	// SetRoutingRulesActive sets is_active of the given rules and returns
	// how many existed.
	SetRoutingRulesActive(ctx context.Context, ids []int64, active bool) (int, error)
	// ReorderRoutingRules gives the rules ids[0], ids[1], ... the
	// priorities 1, 2, ...; ENOTFOUND (and no change) when one does not
	// exist.
	ReorderRoutingRules(ctx context.Context, ids []int64) error
	// FindSenderGroups returns every stored sender group, by sender.
	FindSenderGroups(ctx context.Context) ([]*SenderGroup, error)
	// SaveSenderGroup stores g under g.Sender (lower case), replacing the
	// group stored there, and sets UpdatedAt.
	SaveSenderGroup(ctx context.Context, g *SenderGroup) error
	// ReserveSend atomically adds one to the send counter of (connID,
	// day) when the counter is below limit (limit 0: always) and reports
	// whether it did. day is the site's local date, YYYY-MM-DD. Across
	// processes at most limit reservations succeed per (connID, day).
	ReserveSend(ctx context.Context, connID int64, day string, limit int64) (bool, error)
	// SendCounts returns the counters of day by connection id (absent:
	// 0).
	SendCounts(ctx context.Context, day string) (map[int64]int64, error)
}
