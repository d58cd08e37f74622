package store_test

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app/pro/routing"
	"github.com/mailsvc/mailsvc/core"
)

// routingTests returns the contract tests of the routing rules, sender
// groups and send counters.
func (s *suite) routingTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"RoutingRuleCRUD", s.testRoutingRuleCRUD},
		{"RoutingRuleReorderAndBulk", s.testRoutingRuleReorderAndBulk},
		{"SenderGroupSave", s.testSenderGroupSave},
		{"ReserveSendConcurrent", s.testReserveSendConcurrent},
	}
}

func (s *suite) testRoutingRuleCRUD(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	r := &routing.RoutingRule{Name: "Invoices", ConnectionID: 7, Priority: 2, IsActive: true,
		Conditions: []routing.RoutingCondition{{Field: "subject", Operator: "contains", Value: "invoice"}, {Field: "header:X-Kind", Operator: "exists"}}}
	if err := db.Routing().CreateRoutingRule(ctx, r); err != nil || r.ID <= 0 {
		t.Fatalf("CreateRoutingRule: id %d, %v", r.ID, err)
	}
	empty := &routing.RoutingRule{Name: "Everything", ConnectionID: 8, Priority: 1}
	if err := db.Routing().CreateRoutingRule(ctx, empty); err != nil {
		t.Fatal(err)
	}
	got, err := db.Routing().FindRoutingRuleByID(ctx, r.ID)
	if err != nil || got.Name != "Invoices" || !reflect.DeepEqual(got.Conditions, r.Conditions) || !got.IsActive || got.Priority != 2 {
		t.Fatalf("FindRoutingRuleByID = %+v, %v", got, err)
	}
	list, err := db.Routing().FindRoutingRules(ctx)
	if err != nil || len(list) != 2 || list[0].ID != empty.ID || list[1].ID != r.ID || len(list[0].Conditions) != 0 || list[0].Conditions == nil {
		t.Fatalf("FindRoutingRules = %+v, %v; want by priority, empty conditions as []", list, err)
	}
	got.Name, got.IsActive, got.Conditions = "Bills", false, nil
	if err := db.Routing().UpdateRoutingRule(ctx, got); err != nil {
		t.Fatal(err)
	}
	again, _ := db.Routing().FindRoutingRuleByID(ctx, r.ID)
	if again.Name != "Bills" || again.IsActive || len(again.Conditions) != 0 {
		t.Fatalf("after update: %+v", again)
	}
	storetest.WantCode(t, db.Routing().UpdateRoutingRule(ctx, &routing.RoutingRule{ID: 999, Name: "x"}), core.ENOTFOUND)
	_, err = db.Routing().FindRoutingRuleByID(ctx, 999)
	storetest.WantCode(t, err, core.ENOTFOUND)
	if n, err := db.Routing().DeleteRoutingRules(ctx, []int64{r.ID, 999}); err != nil || n != 1 {
		t.Fatalf("DeleteRoutingRules = %d, %v; want 1", n, err)
	}
	if list, _ := db.Routing().FindRoutingRules(ctx); len(list) != 1 {
		t.Fatalf("after delete %d rules, want 1", len(list))
	}
}

func (s *suite) testRoutingRuleReorderAndBulk(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	var ids []int64
	for i := range 3 {
		r := &routing.RoutingRule{Name: "r", ConnectionID: 1, Priority: 10 + i, IsActive: true}
		if err := db.Routing().CreateRoutingRule(ctx, r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	if err := db.Routing().ReorderRoutingRules(ctx, []int64{ids[2], ids[0], ids[1]}); err != nil {
		t.Fatal(err)
	}
	list, _ := db.Routing().FindRoutingRules(ctx)
	if list[0].ID != ids[2] || list[0].Priority != 1 || list[1].ID != ids[0] || list[2].Priority != 3 {
		t.Fatalf("after reorder: %+v %+v %+v", list[0], list[1], list[2])
	}
	storetest.WantCode(t, db.Routing().ReorderRoutingRules(ctx, []int64{ids[1], 999}), core.ENOTFOUND)
	if r, _ := db.Routing().FindRoutingRuleByID(ctx, ids[1]); r.Priority != 3 {
		t.Fatalf("a failed reorder changed priority to %d", r.Priority)
	}
	if n, err := db.Routing().SetRoutingRulesActive(ctx, []int64{ids[0], ids[1], 999}, false); err != nil || n != 2 {
		t.Fatalf("SetRoutingRulesActive = %d, %v; want 2", n, err)
	}
	list, _ = db.Routing().FindRoutingRules(ctx)
	active := map[int64]bool{}
	for _, r := range list {
		active[r.ID] = r.IsActive
	}
	if active[ids[0]] || active[ids[1]] || !active[ids[2]] {
		t.Fatalf("active after disable: %v", active)
	}
}

func (s *suite) testSenderGroupSave(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	g := &routing.SenderGroup{Sender: "Billing@Example.com", Strategy: routing.StrategyBalance,
		Members: []routing.SenderGroupMember{{ConnectionID: 2, Weight: 3, DailyCap: 0}, {ConnectionID: 1, Weight: 1, DailyCap: 500}}}
	if err := db.Routing().SaveSenderGroup(ctx, g); err != nil {
		t.Fatal(err)
	}
	g2 := &routing.SenderGroup{Sender: "billing@example.com", Strategy: routing.StrategyOverflow,
		Members: []routing.SenderGroupMember{{ConnectionID: 1, Weight: 1, DailyCap: 5}, {ConnectionID: 2, Weight: 1}}}
	if err := db.Routing().SaveSenderGroup(ctx, g2); err != nil {
		t.Fatal(err)
	}
	if err := db.Routing().SaveSenderGroup(ctx, &routing.SenderGroup{Sender: "a@example.com", Strategy: routing.StrategyFailover}); err != nil {
		t.Fatal(err)
	}
	list, err := db.Routing().FindSenderGroups(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("FindSenderGroups = %d groups, %v; want 2 (a save replaces the sender's group)", len(list), err)
	}
	if list[1].Sender != "billing@example.com" || list[1].Strategy != routing.StrategyOverflow || !reflect.DeepEqual(list[1].Members, g2.Members) {
		t.Fatalf("group = %+v", list[1])
	}
}

func (s *suite) testReserveSendConcurrent(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if got, err := db.Routing().ReserveSend(ctx, 3, "2025-01-02", 5); err != nil {
				t.Error(err)
			} else if got {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 5 {
		t.Fatalf("%d of 20 concurrent reservations under a limit of 5 succeeded", ok.Load())
	}
	for range 3 {
		if got, err := db.Routing().ReserveSend(ctx, 4, "2025-01-02", 0); err != nil || !got {
			t.Fatalf("ReserveSend without a limit = %v, %v", got, err)
		}
	}
	if got, _ := db.Routing().ReserveSend(ctx, 3, "2025-01-03", 5); !got {
		t.Fatal("the next day does not start at 0")
	}
	counts, err := db.Routing().SendCounts(ctx, "2025-01-02")
	if err != nil || !reflect.DeepEqual(counts, map[int64]int64{3: 5, 4: 3}) {
		t.Fatalf("SendCounts = %v, %v", counts, err)
	}
}
