package pro_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	api "github.com/mailsvc/mailsvc/adapters/http"
	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/app/pro/routing"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// storeConns lists the store's connections as routing.Connections.
type storeConns struct{ db *store.DB }

func (s storeConns) List(ctx context.Context, offset, limit int) ([]*core.Connection, int, error) {
	return s.db.Connections().FindConnections(ctx, core.ConnectionFilter{Offset: offset, Limit: limit})
}

// newRoutingEnv serves the Pro module with the routing service over a
// real SQLite store holding connections 1 and 2 (shop@example.com), 3
// (other@example.com) and 4 (shop@example.com, inactive).
func newRoutingEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t, testdb.SQLite(t), "wp_")
	for i, from := range []string{"shop@example.com", "shop@example.com", "other@example.com", "shop@example.com"} {
		c := &core.Connection{Name: "Relay", Driver: "smtp", IsActive: i != 3, Settings: core.Settings{"from_email": from}}
		if err := db.Connections().CreateConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	svc := &routing.Service{Store: prostore.New(db).Routing(), Connections: storeConns{db}}
	settings := apptest.NewSettingsStore()
	m := &httppro.Module{Licenses: &pro.Licenses{Store: settings, Cipher: apptest.Cipher{Key: "k"}}, Settings: &pro.Settings{Store: settings},
		RoutingRules: svc, SenderGroups: svc}
	s := &api.Server{Auth: adminAuth{}, Hooks: &core.Hooks{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Modules: []api.Module{m}}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return &env{url: ts.URL + api.Namespace, t: t}
}

func TestRoutingRuleRoutes(t *testing.T) {
	e := newRoutingEnv(t)
	e.run([]step{
		{"list empty", "GET", "/pro/routing-rules", "", 200, []string{`[]`}},
		{"create malformed", "POST", "/pro/routing-rules", `{"name":`, 400, []string{"bad_request"}},
		{"create wrong type", "POST", "/pro/routing-rules", `{"name":"x","connection_id":"one"}`, 400, []string{"bad_request", "connection_id"}},
		{"create condition value object", "POST", "/pro/routing-rules", `{"name":"x","connection_id":1,"conditions":[{"field":"to","operator":"is","value":{}}]}`, 400, []string{"bad_request"}},
		{"create missing fields", "POST", "/pro/routing-rules", `{}`, 422, []string{"validation_error", `"name"`, `"connection_id"`}},
		{"create unknown connection", "POST", "/pro/routing-rules", `{"name":"x","connection_id":99}`, 422, []string{`"connection_id"`, "does not exist"}},
		{"create bad conditions", "POST", "/pro/routing-rules", `{"name":"x","connection_id":1,"conditions":[
			{"field":"body","operator":"is","value":"a"},{"field":"to","operator":"like","value":"a"},{"field":"subject","operator":"matches","value":"(a"}]}`,
			422, []string{`"conditions[0].field"`, `"conditions[1].operator"`, `"conditions[2].value"`}},
		{"create invoices", "POST", "/pro/routing-rules", `{"name":"Invoices","connection_id":3,"priority":5,
			"conditions":[{"field":"subject","operator":"contains","value":"invoice"}]}`, 201, []string{`"id":1`, `"priority":5`, `"is_active":true`}},
		{"create header rule", "POST", "/pro/routing-rules", `{"name":"Newsletters","connection_id":2,
			"conditions":[{"field":"header:X-Kind","operator":"is","value":"newsletter"},{"field":"has_attachment","operator":"is","value":false}]}`,
			201, []string{`"id":2`, `"priority":6`, `"value":"false"`}},
		{"create to inactive", "POST", "/pro/routing-rules", `{"name":"Old","connection_id":4,"priority":1}`, 201, []string{`"id":3`}},
		{"get", "GET", "/pro/routing-rules/1", "", 200, []string{`"name":"Invoices"`, `"operator":"contains"`}},
		{"get unknown", "GET", "/pro/routing-rules/99", "", 404, []string{"not_found"}},
		{"get bad id", "GET", "/pro/routing-rules/x", "", 404, []string{"not_found"}},
		{"update", "PUT", "/pro/routing-rules/1", `{"name":"Bills"}`, 200, []string{`"name":"Bills"`, `"connection_id":3`}},
		{"update bad", "PUT", "/pro/routing-rules/1", `{"priority":-3,"name":""}`, 422, []string{`"priority"`, `"name"`}},
		{"update unknown", "PUT", "/pro/routing-rules/99", `{"name":"x"}`, 404, []string{"not_found"}},
		{"update malformed", "PUT", "/pro/routing-rules/1", `[1]`, 400, []string{"bad_request"}},
		{"test invoice: inactive connection skipped, invoices chosen", "POST", "/pro/routing-rules/test",
			`{"from":"shop@example.com","to":"a@example.com","subject":"Your invoice"}`, 200,
			[]string{`"matched":true`, `"connection_id":3`, `"result":"skipped"`, `inactive`, `"result":"chosen"`, `"holds":true`, `"result":"not_matched"`}},
		{"test header", "POST", "/pro/routing-rules/test",
			`{"to":["a@example.com"],"subject":"News","headers":{"x-kind":"Newsletter"}}`, 200,
			[]string{`"matched":true`, `"connection_id":2`, `routing rule 2`}},
		{"test one rule", "POST", "/pro/routing-rules/test", `{"rule_id":1,"subject":"hello"}`, 200, []string{`"matched":false`, `"connection_id":null`, `"chosen_by":"default connection"`}},
		{"test unknown rule", "POST", "/pro/routing-rules/test", `{"rule_id":42}`, 404, []string{"not_found"}},
		{"test bad address", "POST", "/pro/routing-rules/test", `{"to":"not an address"}`, 422, []string{`"to"`}},
		{"test malformed", "POST", "/pro/routing-rules/test", `{"to":`, 400, []string{"bad_request"}},
		{"test wrong type", "POST", "/pro/routing-rules/test", `{"subject":5}`, 400, []string{"bad_request"}},
		{"reorder", "POST", "/pro/routing-rules/reorder", `{"ids":[2,1]}`, 200, []string{`"id":2,"name":"Newsletters"`}},
		{"reorder unknown", "POST", "/pro/routing-rules/reorder", `{"ids":[2,77]}`, 404, []string{"not_found"}},
		{"reorder repeat", "POST", "/pro/routing-rules/reorder", `{"ids":[2,2]}`, 422, []string{`"ids"`}},
		{"reorder empty", "POST", "/pro/routing-rules/reorder", `{}`, 422, []string{`"ids"`}},
		{"reorder wrong type", "POST", "/pro/routing-rules/reorder", `{"ids":"1,2"}`, 400, []string{"bad_request"}},
		{"bulk disable", "POST", "/pro/routing-rules/bulk", `{"action":"disable","ids":[1,3,50]}`, 200, []string{`"affected":2`}},
		{"bulk bad action", "POST", "/pro/routing-rules/bulk", `{"action":"explode","ids":[1]}`, 422, []string{`"action"`}},
		{"bulk no ids", "POST", "/pro/routing-rules/bulk", `{"action":"delete"}`, 422, []string{`"ids"`}},
		{"disabled rules are skipped", "POST", "/pro/routing-rules/test", `{"subject":"invoice"}`, 200, []string{`"matched":false`, `The rule is disabled.`}},
		{"bulk enable", "POST", "/pro/routing-rules/bulk", `{"action":"enable","ids":[1]}`, 200, []string{`"affected":1`}},
		{"bulk delete", "POST", "/pro/routing-rules/bulk", `{"action":"delete","ids":[3]}`, 200, []string{`"affected":1`}},
		{"delete", "DELETE", "/pro/routing-rules/2", "", 200, []string{`"deleted":true`}},
		{"delete again", "DELETE", "/pro/routing-rules/2", "", 404, []string{"not_found"}},
		{"list after", "GET", "/pro/routing-rules", "", 200, []string{`"id":1`}},
	})
	if _, body := e.call("GET", "/pro/routing-rules", ""); len(body) == 0 || strings.Contains(body, `"id":2`) || strings.Contains(body, `"id":3`) {
		t.Fatalf("rules 2 and 3 remain: %s", body)
	}
}

func TestSenderGroupRoutes(t *testing.T) {
	e := newRoutingEnv(t)
	e.run([]step{
		{"list: one group of the two active shop@ connections", "GET", "/pro/sender-groups", "", 200,
			[]string{`"sender":"shop@example.com"`, `"strategy":"failover"`, `"configured":false`, `"connection_id":1`, `"provider":"smtp"`, `"sent_today":0`, `"health_status"`}},
		{"put malformed", "PUT", "/pro/sender-groups", `{"sender":`, 400, []string{"bad_request"}},
		{"put wrong type", "PUT", "/pro/sender-groups", `{"sender":"shop@example.com","members":[{"connection_id":1,"weight":"3"}]}`, 400, []string{"bad_request"}},
		{"put member not sending as sender", "PUT", "/pro/sender-groups", `{"sender":"shop@example.com","strategy":"failover","members":[{"connection_id":1},{"connection_id":3}]}`,
			422, []string{"validation_error", `"members[1].connection_id"`, "does not send as"}},
		{"put repeat and ranges", "PUT", "/pro/sender-groups", `{"sender":"shop@example.com","strategy":"balance","members":[
			{"connection_id":1,"weight":0},{"connection_id":1},{"connection_id":2,"weight":101,"daily_cap":-1}]}`,
			422, []string{`"members[0].weight"`, `"members[1].connection_id"`, `"members[2].weight"`, `"members[2].daily_cap"`}},
		{"put bad strategy and sender", "PUT", "/pro/sender-groups", `{"sender":"nope","strategy":"random","members":[]}`, 422, []string{`"sender"`, `"strategy"`, `"members"`}},
		{"put balance", "PUT", "/pro/sender-groups", `{"sender":"Shop@Example.com","strategy":"balance","members":[
			{"connection_id":2,"weight":3,"daily_cap":100},{"connection_id":1,"weight":1}]}`,
			200, []string{`"sender":"shop@example.com"`, `"strategy":"balance"`, `"configured":true`, `"members":[{"connection_id":2`, `"weight":3,"daily_cap":100`}},
		{"list configured", "GET", "/pro/sender-groups", "", 200, []string{`"strategy":"balance"`, `"members":[{"connection_id":2`, `"connection_id":4`, `"is_active":false`}},
	})
}

// TestRoutingExplainSite dry-runs a rule on the site field: the sample's
// site matches it, a sample without one is the main site's.
func TestRoutingExplainSite(t *testing.T) {
	e := newRoutingEnv(t)
	e.run([]step{
		{"create site rule", "POST", "/pro/routing-rules", `{"name":"Site 2","connection_id":3,
			"conditions":[{"field":"site","operator":"is","value":"2"}]}`, 201, []string{`"id":1`}},
		{"site 2 matches", "POST", "/pro/routing-rules/test", `{"site":2,"subject":"hi"}`, 200, []string{`"matched":true`, `"connection_id":3`}},
		{"site 3 does not", "POST", "/pro/routing-rules/test", `{"site":3,"subject":"hi"}`, 200, []string{`"matched":false`}},
		{"no site is the main site's", "POST", "/pro/routing-rules/test", `{"subject":"hi"}`, 200, []string{`"matched":false`}},
		{"bad site", "POST", "/pro/routing-rules/test", `{"site":-1}`, 422, []string{`"site"`}},
		{"site not a number", "POST", "/pro/routing-rules/test", `{"site":"two"}`, 400, []string{"bad_request"}},
	})
}
