package routing_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/routing"
	"github.com/mailsvc/mailsvc/core"
)

func conn(id int64, from string, active bool, health string) *core.Connection {
	return &core.Connection{ID: id, Name: "c" + string(rune('0'+id)), Driver: "smtp", IsActive: active, HealthStatus: health,
		Settings: core.Settings{"from_email": from}}
}

func newService(conns ...*core.Connection) (*routing.Service, *memStore) {
	st := newMemStore()
	return &routing.Service{Store: st, Connections: connList(conns), CacheTTL: time.Nanosecond}, st
}

func sample() *core.Log {
	return &core.Log{ID: 1, Source: "woocommerce", Message: core.Message{
		From:    core.Address{Email: "shop@example.com"},
		To:      []core.Address{{Email: "Ann@Customer.example"}, {Email: "bob@other.example"}},
		Cc:      []core.Address{{Email: "cc@example.com"}},
		ReplyTo: []core.Address{{Email: "help@example.com"}},
		Subject: "Your Invoice #42",
		Headers: []core.Header{{Name: "X-Kind", Value: "Invoice"}},
	}}
}

func TestConditionOperators(t *testing.T) {
	tests := []struct {
		field, op, value string
		want             bool
	}{
		{"subject", "is", "your invoice #42", true},
		{"subject", "is", "invoice", false},
		{"subject", "is_not", "invoice", true},
		{"subject", "is_not", "YOUR INVOICE #42", false},
		{"subject", "contains", "INVOICE", true},
		{"subject", "contains", "receipt", false},
		{"subject", "not_contains", "receipt", true},
		{"subject", "not_contains", "invoice", false},
		{"subject", "starts_with", "your", true},
		{"subject", "starts_with", "invoice", false},
		{"subject", "ends_with", "#42", true},
		{"subject", "ends_with", "your", false},
		{"subject", "matches", `Invoice #\d+$`, true},
		{"subject", "matches", `^invoice`, false},
		{"subject", "matches", `(?i)^your invoice`, true},
		{"subject", "exists", "", true},
		{"to", "is", "ann@customer.example", true},
		{"to", "ends_with", "@other.example", true},
		{"to", "is_not", "bob@other.example", false},
		{"to", "not_contains", "nobody", true},
		{"cc", "is", "cc@example.com", true},
		{"bcc", "exists", "", false},
		{"bcc", "is_not", "x@example.com", true},
		{"from", "is", "shop@example.com", true},
		{"reply_to", "starts_with", "help@", true},
		{"source", "is", "woocommerce", true},
		{"source", "is", "contact-form-7", false},
		{"site", "is", "1", true}, // a log without a site is the main site's
		{"site", "is", "2", false},
		{"site", "is_not", "2", true},
		{"has_attachment", "is", "false", true},
		{"has_attachment", "is", "true", false},
		{"has_attachment", "exists", "", false},
		{"header:x-kind", "is", "invoice", true},
		{"header:X-Kind", "exists", "", true},
		{"header:X-Missing", "exists", "", false},
		{"header:X-Missing", "is_not", "a", true},
		{"header:X-Missing", "contains", "a", false},
		{"header:X-Kind", "matches", "^Inv", true},
	}
	for _, tt := range tests {
		t.Run(tt.field+" "+tt.op+" "+tt.value, func(t *testing.T) {
			ctx := context.Background()
			svc, _ := newService(conn(1, "a@example.com", true, ""))
			if _, err := svc.CreateRule(ctx, routing.RuleInput{Name: ptr("r"), ConnectionID: ptr(int64(1)),
				Conditions: &[]routing.RoutingCondition{{Field: tt.field, Operator: tt.op, Value: tt.value}}}); err != nil {
				t.Fatal(err)
			}
			c, err := svc.Choose(ctx, sample())
			if err != nil {
				t.Fatal(err)
			}
			if got := len(c.ConnectionIDs) == 1; got != tt.want {
				t.Fatalf("matched = %v, want %v (choice %+v)", got, tt.want, c)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestRuleValidation(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(conn(1, "a@example.com", true, ""))
	tests := []struct {
		name  string
		in    routing.RuleInput
		field string
	}{
		{"no name", routing.RuleInput{ConnectionID: ptr(int64(1))}, "name"},
		{"no connection", routing.RuleInput{Name: ptr("x")}, "connection_id"},
		{"unknown connection", routing.RuleInput{Name: ptr("x"), ConnectionID: ptr(int64(9))}, "connection_id"},
		{"unknown field", routing.RuleInput{Name: ptr("x"), ConnectionID: ptr(int64(1)),
			Conditions: &[]routing.RoutingCondition{{Field: "body", Operator: "is", Value: "a"}}}, "conditions[0].field"},
		{"bad header name", routing.RuleInput{Name: ptr("x"), ConnectionID: ptr(int64(1)),
			Conditions: &[]routing.RoutingCondition{{Field: "header:", Operator: "exists"}}}, "conditions[0].field"},
		{"unknown operator", routing.RuleInput{Name: ptr("x"), ConnectionID: ptr(int64(1)),
			Conditions: &[]routing.RoutingCondition{{Field: "to", Operator: "like", Value: "a"}}}, "conditions[0].operator"},
		{"bad regex", routing.RuleInput{Name: ptr("x"), ConnectionID: ptr(int64(1)),
			Conditions: &[]routing.RoutingCondition{{Field: "to", Operator: "is"}, {Field: "subject", Operator: "matches", Value: "(a"}}}, "conditions[1].value"},
		{"regex too long", routing.RuleInput{Name: ptr("x"), ConnectionID: ptr(int64(1)),
			Conditions: &[]routing.RoutingCondition{{Field: "subject", Operator: "matches", Value: strings.Repeat("a", routing.MaxPatternLength+1)}}}, "conditions[0].value"},
		{"missing value", routing.RuleInput{Name: ptr("x"), ConnectionID: ptr(int64(1)),
			Conditions: &[]routing.RoutingCondition{{Field: "subject", Operator: "contains"}}}, "conditions[0].value"},
		{"has_attachment yes", routing.RuleInput{Name: ptr("x"), ConnectionID: ptr(int64(1)),
			Conditions: &[]routing.RoutingCondition{{Field: "has_attachment", Operator: "is", Value: "yes"}}}, "conditions[0].value"},
		{"priority", routing.RuleInput{Name: ptr("x"), ConnectionID: ptr(int64(1)), Priority: ptr(-1)}, "priority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := svc.CreateRule(ctx, tt.in)
			var e *core.Error
			if core.ErrorCode(err) != core.EINVALID || !asError(err, &e) || e.Fields[tt.field] == "" {
				t.Fatalf("error %v, want EINVALID on %s", err, tt.field)
			}
		})
	}
	// A pattern of exactly the bound is accepted.
	if _, err := svc.CreateRule(ctx, routing.RuleInput{Name: ptr("x"), ConnectionID: ptr(int64(1)),
		Conditions: &[]routing.RoutingCondition{{Field: "subject", Operator: "matches", Value: strings.Repeat("a", routing.MaxPatternLength)}}}); err != nil {
		t.Fatalf("a %d-character pattern: %v", routing.MaxPatternLength, err)
	}
}

func asError(err error, e **core.Error) bool {
	ce, ok := err.(*core.Error)
	*e = ce
	return ok
}

func TestChooseOrder(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(conn(1, "shop@example.com", true, ""), conn(2, "shop@example.com", true, ""),
		conn(3, "other@example.com", true, ""), conn(4, "other@example.com", false, ""))
	svc.Settings = settingsMap{"fallback_connection_id": int64(2)}
	if _, err := svc.SaveGroup(ctx, routing.GroupInput{Sender: "shop@example.com", Strategy: "failover",
		Members: []routing.MemberInput{{ConnectionID: 2}, {ConnectionID: 1}}}); err != nil {
		t.Fatal(err)
	}
	invoice := &[]routing.RoutingCondition{{Field: "subject", Operator: "contains", Value: "invoice"}}
	// The inactive connection's rule comes first and is skipped.
	skipped, _ := svc.CreateRule(ctx, routing.RuleInput{Name: ptr("to inactive"), ConnectionID: ptr(int64(4)), Priority: ptr(1), Conditions: invoice})
	if _, err := svc.CreateRule(ctx, routing.RuleInput{Name: ptr("invoices"), ConnectionID: ptr(int64(3)), Priority: ptr(2), Conditions: invoice}); err != nil {
		t.Fatal(err)
	}
	c, err := svc.Choose(ctx, sample())
	if err != nil || len(c.ConnectionIDs) != 2 || c.ConnectionIDs[0] != 3 || c.ConnectionIDs[1] != 2 || !strings.Contains(c.Rule, `"invoices"`) {
		t.Fatalf("routing: %+v, %v; want [3 2] by rule invoices (then the fallback)", c, err)
	}
	ex, err := svc.Explain(ctx, sample(), 0)
	if err != nil || ex.Rules[0].ID != skipped.ID || ex.Rules[0].Result != "skipped" || !strings.Contains(ex.Rules[0].Reason, "inactive") ||
		ex.Rules[1].Result != "chosen" || *ex.ConnectionID != 3 || !ex.Rules[1].Conditions[0].Holds {
		t.Fatalf("explain: %+v, %v", ex, err)
	}
	l := sample()
	l.Message.Subject = "Welcome"
	c, _ = svc.Choose(ctx, l)
	if len(c.ConnectionIDs) != 2 || c.ConnectionIDs[0] != 2 || c.ConnectionIDs[1] != 1 || !strings.Contains(c.Rule, "sender group") {
		t.Fatalf("group: %+v; want [2 1] by the sender group", c)
	}
	l.Message.From.Email = "nobody@example.com"
	if c, _ = svc.Choose(ctx, l); len(c.ConnectionIDs) != 0 {
		t.Fatalf("no rule, no group: %+v; want no opinion", c)
	}
}

func TestFailoverSkipsDown(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(conn(1, "shop@example.com", true, core.HealthDown), conn(2, "shop@example.com", true, core.HealthHealthy),
		conn(3, "shop@example.com", true, core.HealthUnknown))
	if _, err := svc.SaveGroup(ctx, routing.GroupInput{Sender: "shop@example.com", Strategy: "failover",
		Members: []routing.MemberInput{{ConnectionID: 1}, {ConnectionID: 2}, {ConnectionID: 3}}}); err != nil {
		t.Fatal(err)
	}
	c, _ := svc.Choose(ctx, sample())
	if len(c.ConnectionIDs) != 2 || c.ConnectionIDs[0] != 2 || c.ConnectionIDs[1] != 3 {
		t.Fatalf("failover: %+v; want [2 3] (1 is down)", c)
	}
	// Moved on from 2 (its tries used up): the engine tries the entry after 2.
	l := sample()
	l.Attempts, l.PhaseAttempts, l.SentConnectionID = 4, 0, ptr(int64(2))
	c, _ = svc.Choose(ctx, l)
	if len(c.ConnectionIDs) != 2 || c.ConnectionIDs[0] != 2 || c.ConnectionIDs[1] != 3 {
		t.Fatalf("moved on: %+v; want [2 3]", c)
	}
}

func TestBalanceWeights(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(conn(1, "shop@example.com", true, ""), conn(2, "shop@example.com", true, ""))
	if _, err := svc.SaveGroup(ctx, routing.GroupInput{Sender: "shop@example.com", Strategy: "balance",
		Members: []routing.MemberInput{{ConnectionID: 1, Weight: ptr(3)}, {ConnectionID: 2, Weight: ptr(1)}}}); err != nil {
		t.Fatal(err)
	}
	first := map[int64]int{}
	for id := int64(1); id <= 400; id++ {
		l := sample()
		l.ID = id
		c, err := svc.Choose(ctx, l)
		if err != nil || len(c.ConnectionIDs) != 2 {
			t.Fatalf("log %d: %+v, %v", id, c, err)
		}
		first[c.ConnectionIDs[0]]++
	}
	if math.Abs(float64(first[1])-300) > 20 || math.Abs(float64(first[2])-100) > 20 {
		t.Fatalf("balance 3:1 over 400 = %v; want 300:100 ±5%%", first)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	if counts, _ := st.SendCounts(ctx, today); counts[1] != int64(first[1]) || counts[2] != int64(first[2]) {
		t.Fatalf("sent_today counters %v, want %v", counts, first)
	}
	// Smooth: no run of three picks of member 2 in a row.
	seq := ""
	for n := int64(0); n < 8; n++ {
		seq += string(rune('A' + routing.BalancePick([]int{3, 1}, n)))
	}
	if seq != "AABAAABA" {
		t.Fatalf("sequence %s", seq)
	}
}

func TestOverflowCapsAndDays(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(conn(1, "shop@example.com", true, ""), conn(2, "shop@example.com", true, ""))
	zone := time.FixedZone("site", -5*3600)
	now := time.Date(2025, 3, 10, 23, 0, 0, 0, zone) // 04:00 UTC next day
	svc.Now = func() time.Time { return now }
	svc.Location = func(context.Context) (*time.Location, error) { return zone, nil }
	if _, err := svc.SaveGroup(ctx, routing.GroupInput{Sender: "shop@example.com", Strategy: "overflow",
		Members: []routing.MemberInput{{ConnectionID: 1, DailyCap: ptr(int64(5))}, {ConnectionID: 2, DailyCap: ptr(int64(3))}}}); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for id := int64(1); id <= 9; id++ {
		l := sample()
		l.ID = id
		c, err := svc.Choose(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.ConnectionIDs) == 0 {
			got = append(got, 0)
		} else {
			got = append(got, c.ConnectionIDs[0])
		}
	}
	want := []int64{1, 1, 1, 1, 1, 2, 2, 2, 0}
	if !equal(got, want) {
		t.Fatalf("overflow picks %v, want %v (0: every member at its cap, the default connection)", got, want)
	}
	groups, _ := svc.Groups(ctx)
	if len(groups) != 1 || groups[0].Members[0].SentToday != 5 || groups[0].Members[1].SentToday != 3 {
		t.Fatalf("groups %+v", groups)
	}
	// A retry stays on its connection without counting again.
	l := sample()
	l.Attempts, l.PhaseAttempts, l.SentConnectionID = 1, 1, ptr(int64(1))
	if c, _ := svc.Choose(ctx, l); len(c.ConnectionIDs) != 2 || c.ConnectionIDs[0] != 1 {
		t.Fatalf("retry: %+v", c)
	}
	// One hour later it is the next day in the site's zone: counts reset.
	now = now.Add(time.Hour)
	c, _ := svc.Choose(ctx, sample())
	if len(c.ConnectionIDs) == 0 || c.ConnectionIDs[0] != 1 {
		t.Fatalf("next day: %+v; want member 1 again", c)
	}
	groups, _ = svc.Groups(ctx)
	if groups[0].Members[0].SentToday != 1 || groups[0].Members[1].SentToday != 0 {
		t.Fatalf("next day groups %+v", groups[0].Members)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSaveGroupValidation(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(conn(1, "shop@example.com", true, ""), conn(2, "shop@example.com", true, ""), conn(3, "other@example.com", true, ""))
	tests := []struct {
		name  string
		in    routing.GroupInput
		field string
	}{
		{"not sending as", routing.GroupInput{Sender: "shop@example.com", Strategy: "failover", Members: []routing.MemberInput{{ConnectionID: 1}, {ConnectionID: 3}}}, "members[1].connection_id"},
		{"repeat", routing.GroupInput{Sender: "shop@example.com", Strategy: "failover", Members: []routing.MemberInput{{ConnectionID: 1}, {ConnectionID: 1}}}, "members[1].connection_id"},
		{"unknown", routing.GroupInput{Sender: "shop@example.com", Strategy: "failover", Members: []routing.MemberInput{{ConnectionID: 9}}}, "members[0].connection_id"},
		{"weight 0", routing.GroupInput{Sender: "shop@example.com", Strategy: "balance", Members: []routing.MemberInput{{ConnectionID: 1, Weight: ptr(0)}}}, "members[0].weight"},
		{"weight 101", routing.GroupInput{Sender: "shop@example.com", Strategy: "balance", Members: []routing.MemberInput{{ConnectionID: 1, Weight: ptr(101)}}}, "members[0].weight"},
		{"cap", routing.GroupInput{Sender: "shop@example.com", Strategy: "overflow", Members: []routing.MemberInput{{ConnectionID: 1, DailyCap: ptr(int64(10000001))}}}, "members[0].daily_cap"},
		{"strategy", routing.GroupInput{Sender: "shop@example.com", Strategy: "random", Members: []routing.MemberInput{{ConnectionID: 1}}}, "strategy"},
		{"sender", routing.GroupInput{Sender: "shop", Strategy: "failover", Members: []routing.MemberInput{{ConnectionID: 1}}}, "sender"},
		{"no members", routing.GroupInput{Sender: "shop@example.com", Strategy: "failover"}, "members"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := svc.SaveGroup(ctx, tt.in)
			var e *core.Error
			if !asError(err, &e) || e.Code != core.EINVALID || e.Fields[tt.field] == "" {
				t.Fatalf("error %v, want EINVALID on %s", err, tt.field)
			}
		})
	}
	g, err := svc.SaveGroup(ctx, routing.GroupInput{Sender: "SHOP@example.com", Strategy: "balance",
		Members: []routing.MemberInput{{ConnectionID: 2, Weight: ptr(100), DailyCap: ptr(int64(10000000))}}})
	if err != nil || g.Sender != "shop@example.com" || len(g.Members) != 2 || g.Members[0].ConnectionID != 2 || g.Members[0].Weight != 100 ||
		g.Members[1].ConnectionID != 1 || g.Members[1].Weight != 1 {
		t.Fatalf("saved group %+v, %v; want member 2 then the unlisted 1", g, err)
	}
}
