package routing_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/pro/routing"
	"github.com/mailsvc/mailsvc/core"
)

// TestRulesAndGroupsConnectionUse checks, on a network, that routing
// rules and sender groups (the network's) name the network's
// connections only: a site's own is refused with the text of a
// connection that does not exist.
func TestRulesAndGroupsConnectionUse(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(conn(1, "shop@example.com", true, ""), conn(2, "shop@example.com", true, ""))
	svc.Use = apptest.NewNetwork(t, 3, map[int64]int64{2: 3})
	for _, id := range []int64{2, 9} {
		want := fmt.Sprintf("Connection %d does not exist.", id)
		_, err := svc.CreateRule(ctx, routing.RuleInput{Name: ptr("x"), ConnectionID: ptr(id)})
		if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)["connection_id"] != want {
			t.Errorf("rule through connection %d: %v %v", id, err, core.ErrorFields(err))
		}
		_, err = svc.SaveGroup(ctx, routing.GroupInput{Sender: "shop@example.com", Strategy: "failover", Members: []routing.MemberInput{{ConnectionID: id}}})
		if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)["members[0].connection_id"] != want {
			t.Errorf("group member %d: %v %v", id, err, core.ErrorFields(err))
		}
	}
	r, err := svc.CreateRule(ctx, routing.RuleInput{Name: ptr("x"), ConnectionID: ptr(int64(1))})
	if err != nil {
		t.Fatalf("rule through the network's connection: %v", err)
	}
	if _, err := svc.UpdateRule(ctx, r.ID, routing.RuleInput{ConnectionID: ptr(int64(2))}); core.ErrorFields(err)["connection_id"] != "Connection 2 does not exist." {
		t.Errorf("rule moved to site 3's connection: %v", err)
	}
	if _, err := svc.SaveGroup(ctx, routing.GroupInput{Sender: "shop@example.com", Strategy: "failover", Members: []routing.MemberInput{{ConnectionID: 1}}}); err != nil {
		t.Errorf("group of the network's connection: %v", err)
	}
}

// TestChooseKeepsOffSiteConnections checks delivery on a network: a rule
// and a sender group stored before the rule that name a site's own
// connection find it gone, and no implicit group takes it in, so the
// network's routing never sends through it.
func TestChooseKeepsOffSiteConnections(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(conn(1, "shop@example.com", true, ""), conn(2, "shop@example.com", true, ""), conn(3, "shop@example.com", true, ""))
	if _, err := svc.CreateRule(ctx, routing.RuleInput{Name: ptr("invoices"), ConnectionID: ptr(int64(2)),
		Conditions: &[]routing.RoutingCondition{{Field: "subject", Operator: "contains", Value: "invoice"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SaveGroup(ctx, routing.GroupInput{Sender: "shop@example.com", Strategy: "failover",
		Members: []routing.MemberInput{{ConnectionID: 2}, {ConnectionID: 1}}}); err != nil {
		t.Fatal(err)
	}
	svc.Use = apptest.NewNetwork(t, 3, map[int64]int64{2: 3})
	c, err := svc.Choose(ctx, sample())
	if err != nil || len(c.ConnectionIDs) != 2 || c.ConnectionIDs[0] != 1 || c.ConnectionIDs[1] != 3 {
		t.Fatalf("choice %+v, %v; want the group without site 3's connection: [1 3]", c, err)
	}
	groups, err := svc.Groups(ctx)
	if err != nil || len(groups) != 1 || len(groups[0].Members) != 2 {
		t.Fatalf("groups %+v, %v; want one of connections 1 and 3", groups, err)
	}
}
