package routing

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Bounds of a sender group member.
const (
	MinWeight     = 1
	MaxWeight     = 100
	DefaultWeight = 1
	MaxDailyCap   = 10000000
)

// Group is a sender group as the routes show it.
type Group struct {
	Sender   string        `json:"sender"`
	Strategy string        `json:"strategy"`
	Members  []GroupMember `json:"members"`
	// Configured is false for a group nobody has saved yet: it is listed
	// (failover, members by id) but delivery does not use it.
	Configured bool `json:"configured"`
}

// GroupMember is one member of a Group, in failover order.
type GroupMember struct {
	ConnectionID int64  `json:"connection_id"`
	Name         string `json:"name"`
	Provider     string `json:"provider"`
	IsActive     bool   `json:"is_active"`
	HealthStatus string `json:"health_status"`
	Weight       int    `json:"weight"`
	DailyCap     int64  `json:"daily_cap"`
	SentToday    int64  `json:"sent_today"`
}

// MemberInput is one member of a PUT /pro/sender-groups body; nil
// Weight means DefaultWeight, nil DailyCap no cap.
type MemberInput struct {
	ConnectionID int64
	Weight       *int
	DailyCap     *int64
}

// GroupInput is a PUT /pro/sender-groups body.
type GroupInput struct {
	Sender   string
	Strategy string
	Members  []MemberInput
}

// sendsAs reports whether connection c sends as sender (lower-cased):
// its from_email setting (which force_from enforces, and which an API
// driver puts on every message) is that address; or, for an SES
// connection without from_email, one of its verified identities is the
// address, its domain or a parent domain of it.
func (snap *snapshot) sendsAs(c *core.Connection, sender string) bool {
	if from := fromEmail(c); from != "" {
		return from == sender
	}
	return snap.verified[c.ID].covers(sender)
}

// senders returns the lower-cased sender addresses that more than one
// active connection sends as, sorted. The addresses looked at are the
// active connections' from_email, the verified addresses of SES
// connections and the senders of saved groups.
func (snap *snapshot) senders() []string {
	candidates := map[string]bool{}
	for _, c := range snap.connList {
		if !c.IsActive {
			continue
		}
		if from := fromEmail(c); from != "" {
			candidates[from] = true
		}
		if set := snap.verified[c.ID]; set != nil {
			for a := range set.addresses {
				candidates[a] = true
			}
		}
	}
	for sender := range snap.groups {
		candidates[sender] = true
	}
	var out []string
	for sender := range candidates {
		n := 0
		for _, c := range snap.connList {
			if c.IsActive && snap.sendsAs(c, sender) {
				n++
			}
		}
		if n > 1 {
			out = append(out, sender)
		}
	}
	slices.Sort(out)
	return out
}

// members returns the connections of sender in failover order with their
// weights and caps: the stored group's members first (those still
// sending as sender), then any other connection that sends as sender, by
// id, with the default weight and no cap.
func (snap *snapshot) members(sender string, g *SenderGroup) []SenderGroupMember {
	var out []SenderGroupMember
	seen := map[int64]bool{}
	if g != nil {
		for _, m := range g.Members {
			if c := snap.conns[m.ConnectionID]; c != nil && snap.sendsAs(c, sender) && !seen[m.ConnectionID] {
				out = append(out, m)
				seen[m.ConnectionID] = true
			}
		}
	}
	for _, c := range snap.connList {
		if snap.sendsAs(c, sender) && !seen[c.ID] {
			out = append(out, SenderGroupMember{ConnectionID: c.ID, Weight: DefaultWeight})
		}
	}
	return out
}

// Groups returns one group per sender address that more than one active
// connection sends as, with today's send counts. What it reads replaces
// the snapshot Choose works from, so that delivery in this process
// follows what the list shows (a member back up, say) at once.
func (s *Service) Groups(ctx context.Context) ([]Group, error) {
	snap, err := s.read(ctx, true)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.snap = snap
	s.mu.Unlock()
	counts, err := s.todaySendCounts(ctx)
	if err != nil {
		return nil, err
	}
	out := []Group{}
	for _, sender := range snap.senders() {
		g := snap.groups[sender]
		view := Group{Sender: sender, Strategy: StrategyFailover, Members: []GroupMember{}, Configured: g != nil}
		if g != nil {
			view.Strategy = g.Strategy
		}
		for _, m := range snap.members(sender, g) {
			c := snap.conns[m.ConnectionID]
			view.Members = append(view.Members, GroupMember{
				ConnectionID: c.ID, Name: c.Name, Provider: c.Driver, IsActive: c.IsActive,
				HealthStatus: c.HealthStatus, Weight: m.Weight, DailyCap: m.DailyCap, SentToday: counts[c.ID],
			})
		}
		out = append(out, view)
	}
	return out, nil
}

// SaveGroup validates in and stores the group of in.Sender; it returns
// the group as Groups shows it. 422 when the sender is not an address,
// the strategy unknown, a member does not send as the sender, repeats, or
// has its weight (1–100) or daily cap (0–10,000,000) out of range.
func (s *Service) SaveGroup(ctx context.Context, in GroupInput) (*Group, error) {
	sender := strings.ToLower(strings.TrimSpace(in.Sender))
	errs := map[string]string{}
	if !core.ValidEmail(sender) {
		errs["sender"] = "A sender email address is required."
	}
	switch in.Strategy {
	case StrategyFailover, StrategyBalance, StrategyOverflow:
	default:
		errs["strategy"] = "Use failover, balance or overflow."
	}
	if len(in.Members) == 0 {
		errs["members"] = "At least one member is required."
	}
	snap, err := s.read(ctx, true)
	if err != nil {
		return nil, err
	}
	if s.recheckIdentities(ctx, snap, sender, in.Members) {
		if snap, err = s.read(ctx, true); err != nil {
			return nil, err
		}
	}
	g := &SenderGroup{Sender: sender, Strategy: in.Strategy, Members: []SenderGroupMember{}}
	seen := map[int64]bool{}
	for i, m := range in.Members {
		key := fmt.Sprintf("members[%d]", i)
		c := snap.conns[m.ConnectionID]
		usable, err := core.CanUseConnection(ctx, s.Use, 0, m.ConnectionID)
		if err != nil {
			return nil, fmt.Errorf("check member %d's connection: %w", i, err)
		}
		switch {
		case c == nil || !usable:
			errs[key+".connection_id"] = core.NoSuchConnection(m.ConnectionID)
		case seen[m.ConnectionID]:
			errs[key+".connection_id"] = fmt.Sprintf("Connection %d is listed twice.", m.ConnectionID)
		case !snap.sendsAs(c, sender):
			errs[key+".connection_id"] = fmt.Sprintf("Connection %d (%s) does not send as %s: neither its from address nor, for Amazon SES, a verified identity is that address or its domain.", c.ID, c.Name, sender)
		}
		seen[m.ConnectionID] = true
		member := SenderGroupMember{ConnectionID: m.ConnectionID, Weight: DefaultWeight}
		if m.Weight != nil {
			member.Weight = *m.Weight
			if member.Weight < MinWeight || member.Weight > MaxWeight {
				errs[key+".weight"] = fmt.Sprintf("A weight is between %d and %d.", MinWeight, MaxWeight)
			}
		}
		if m.DailyCap != nil {
			member.DailyCap = *m.DailyCap
			if member.DailyCap < 0 || member.DailyCap > MaxDailyCap {
				errs[key+".daily_cap"] = fmt.Sprintf("A daily cap is between 0 (none) and %d.", MaxDailyCap)
			}
		}
		g.Members = append(g.Members, member)
	}
	if err := core.Invalid(errs); err != nil {
		return nil, err
	}
	if err := s.Store.SaveSenderGroup(ctx, g); err != nil {
		return nil, fmt.Errorf("save sender group %s: %w", sender, err)
	}
	s.invalidate()
	groups, err := s.Groups(ctx)
	if err != nil {
		return nil, err
	}
	for _, view := range groups {
		if view.Sender == sender {
			return &view, nil
		}
	}
	// Fewer than two active connections send as sender: saved, not a
	// group yet.
	view := &Group{Sender: sender, Strategy: g.Strategy, Members: []GroupMember{}, Configured: true}
	for _, m := range g.Members {
		c := snap.conns[m.ConnectionID]
		view.Members = append(view.Members, GroupMember{ConnectionID: c.ID, Name: c.Name, Provider: c.Driver,
			IsActive: c.IsActive, HealthStatus: c.HealthStatus, Weight: m.Weight, DailyCap: m.DailyCap})
	}
	return view, nil
}

// recheckIdentities asks again, ignoring the cache, the verified
// identities of the SES members of in that snap says do not send as
// sender (an identity may have been verified since the last lookup). It
// reports whether it asked any.
func (s *Service) recheckIdentities(ctx context.Context, snap *snapshot, sender string, in []MemberInput) bool {
	if s.Identities == nil {
		return false
	}
	asked := false
	for _, m := range in {
		if c := snap.conns[m.ConnectionID]; c != nil && identityCandidate(c) && !snap.sendsAs(c, sender) {
			s.lookup(ctx, c.ID)
			asked = true
		}
	}
	return asked
}

// todaySendCounts returns the sends of today (the site's day) by
// connection id.
func (s *Service) todaySendCounts(ctx context.Context) (map[int64]int64, error) {
	day, err := s.day(ctx, s.now())
	if err != nil {
		return nil, err
	}
	counts, err := s.Store.SendCounts(ctx, day)
	if err != nil {
		return nil, fmt.Errorf("read today's send counts: %w", err)
	}
	return counts, nil
}
