package pro

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/pro/routing"
	"github.com/mailsvc/mailsvc/core"
)

// RoutingRuleService is what the routing rule routes need
// (app/pro/routing.Service).
type RoutingRuleService interface {
	Rules(ctx context.Context) ([]*routing.RoutingRule, error)
	Rule(ctx context.Context, id int64) (*routing.RoutingRule, error)
	CreateRule(ctx context.Context, in routing.RuleInput) (*routing.RoutingRule, error)
	UpdateRule(ctx context.Context, id int64, in routing.RuleInput) (*routing.RoutingRule, error)
	DeleteRule(ctx context.Context, id int64) error
	Reorder(ctx context.Context, ids []int64) ([]*routing.RoutingRule, error)
	Bulk(ctx context.Context, action string, ids []int64) (int, error)
	Explain(ctx context.Context, l *core.Log, ruleID int64) (*routing.Explanation, error)
}

// ruleBody is the body of POST and PUT /pro/routing-rules.
type ruleBody struct {
	Name         *string          `json:"name"`
	Conditions   *[]conditionBody `json:"conditions"`
	ConnectionID *int64           `json:"connection_id"`
	Priority     *int             `json:"priority"`
	IsActive     *bool            `json:"is_active"`
}

// conditionBody is one condition; its value may be a string, a boolean
// or a number (kept as its text).
type conditionBody struct {
	Field    string         `json:"field"`
	Operator string         `json:"operator"`
	Value    conditionValue `json:"value"`
}

// conditionValue is a condition value given as a JSON string, boolean,
// number or null.
type conditionValue string

// UnmarshalJSON implements json.Unmarshaler.
func (v *conditionValue) UnmarshalJSON(b []byte) error {
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	switch t := x.(type) {
	case nil:
		*v = ""
	case string:
		*v = conditionValue(t)
	case bool, float64:
		*v = conditionValue(strings.TrimSpace(string(b)))
	default:
		return &json.UnmarshalTypeError{Value: "object", Type: stringType, Field: "value"}
	}
	return nil
}

func (b ruleBody) input() routing.RuleInput {
	in := routing.RuleInput{Name: b.Name, ConnectionID: b.ConnectionID, Priority: b.Priority, IsActive: b.IsActive}
	if b.Conditions != nil {
		conds := make([]routing.RoutingCondition, 0, len(*b.Conditions))
		for _, c := range *b.Conditions {
			conds = append(conds, routing.RoutingCondition{Field: c.Field, Operator: c.Operator, Value: string(c.Value)})
		}
		in.Conditions = &conds
	}
	return in
}

// idsBody is the body of reorder and bulk.
type idsBody struct {
	IDs    []int64 `json:"ids"`
	Action string  `json:"action"`
}

// sampleBody is the body of POST /pro/routing-rules/test: a sample
// message, and optionally the one rule to test.
type sampleBody struct {
	RuleID        int64             `json:"rule_id"`
	From          string            `json:"from"`
	To            addressList       `json:"to"`
	Cc            addressList       `json:"cc"`
	Bcc           addressList       `json:"bcc"`
	ReplyTo       addressList       `json:"reply_to"`
	Subject       string            `json:"subject"`
	Headers       map[string]string `json:"headers"`
	Source        string            `json:"source"`
	HasAttachment bool              `json:"has_attachment"`
	// Site is the multisite network site that sends the sample (the
	// condition field "site"); 0 or absent is the site of the request's
	// URL (the main site on a single site).
	Site int64 `json:"site"`
}

// addressList is a list of addresses given as a JSON array of strings
// or one comma-separated string.
type addressList []string

// UnmarshalJSON implements json.Unmarshaler.
func (a *addressList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = nil
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				*a = append(*a, p)
			}
		}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return &json.UnmarshalTypeError{Value: "value", Type: stringType, Field: "to"}
	}
	*a = list
	return nil
}

// log builds the sample message as delivery sees it; 422 per address
// field that does not parse.
func (b sampleBody) log() (*core.Log, error) {
	errs := map[string]string{}
	parse := func(field string, in []string) []core.Address {
		var out []core.Address
		for _, s := range in {
			a, err := core.ParseAddress(s)
			if err != nil {
				errs[field] = fmt.Sprintf("%q is not an email address.", s)
				continue
			}
			out = append(out, a)
		}
		return out
	}
	l := &core.Log{Source: b.Source}
	m := &l.Message
	if b.From != "" {
		if from := parse("from", []string{b.From}); len(from) == 1 {
			m.From = from[0]
		}
	}
	m.To, m.Cc, m.Bcc, m.ReplyTo = parse("to", b.To), parse("cc", b.Cc), parse("bcc", b.Bcc), parse("reply_to", b.ReplyTo)
	m.Subject = b.Subject
	for name, value := range b.Headers {
		m.Headers = append(m.Headers, core.Header{Name: name, Value: value})
	}
	if b.HasAttachment {
		m.Attachments = []core.Attachment{{Filename: "sample"}}
	}
	if b.RuleID < 0 {
		errs["rule_id"] = "Must be a rule id."
	}
	if b.Site < 0 {
		errs["site"] = "Must be a site id."
	}
	l.SiteID = b.Site
	return l, core.Invalid(errs)
}

// ruleID reads the {id} of a rule path; anything but a positive number
// is a rule that does not exist.
func ruleID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(mux.Vars(r)["id"], 10, 64)
	if err != nil || id <= 0 {
		return 0, core.Errorf(core.ENOTFOUND, "Routing rule %q not found.", mux.Vars(r)["id"])
	}
	return id, nil
}

// respondRule answers what do returns for the routing rule the path's id
// names (a 404 when it is not a positive integer), as api.Respond does.
func respondRule[T any](w http.ResponseWriter, r *http.Request, do func(context.Context, int64) (T, error)) error {
	id, err := ruleID(r)
	if err != nil {
		return err
	}
	return api.Respond(w, r, func(ctx context.Context) (T, error) { return do(ctx, id) })
}

// registerRoutingRoutes registers the spec's "Pro: routing rules" routes
// when the module has a RoutingRules service.
func (m *Module) registerRoutingRoutes(rt *api.Routes) {
	svc := m.RoutingRules
	if svc == nil {
		return
	}
	rt.Private("GET", "/pro/routing-rules", func(w http.ResponseWriter, r *http.Request) error {
		return api.Respond(w, r, svc.Rules)
	})
	rt.Private("POST", "/pro/routing-rules", func(w http.ResponseWriter, r *http.Request) error {
		return api.RespondCreated(rt.DecodeJSON, w, r, func(ctx context.Context, b ruleBody) (*routing.RoutingRule, error) {
			return svc.CreateRule(ctx, b.input())
		})
	})
	rt.Private("POST", "/pro/routing-rules/reorder", func(w http.ResponseWriter, r *http.Request) error {
		return api.RespondBody(rt.DecodeJSON, w, r, func(ctx context.Context, b idsBody) ([]*routing.RoutingRule, error) {
			return svc.Reorder(ctx, b.IDs)
		})
	})
	rt.Private("POST", "/pro/routing-rules/bulk", func(w http.ResponseWriter, r *http.Request) error {
		return api.RespondBody(rt.DecodeJSON, w, r, func(ctx context.Context, b idsBody) (map[string]any, error) {
			n, err := svc.Bulk(ctx, b.Action, b.IDs)
			if err != nil {
				return nil, err
			}
			return map[string]any{"action": b.Action, "affected": n}, nil
		})
	})
	rt.Private("POST", "/pro/routing-rules/test", func(w http.ResponseWriter, r *http.Request) error {
		var b sampleBody
		if err := rt.DecodeJSON(w, r, &b); err != nil {
			return err
		}
		l, err := b.log()
		if err != nil {
			return err
		}
		if site, ok := core.SiteFrom(r.Context()); ok && l.SiteID == 0 {
			l.SiteID = site
		}
		out, err := svc.Explain(r.Context(), l, b.RuleID)
		if err != nil {
			return err
		}
		writeJSON(w, out)
		return nil
	})
	rt.Private("GET", "/pro/routing-rules/{id}", func(w http.ResponseWriter, r *http.Request) error {
		return respondRule(w, r, svc.Rule)
	})
	rt.Private("PUT", "/pro/routing-rules/{id}", func(w http.ResponseWriter, r *http.Request) error {
		return respondRule(w, r, func(ctx context.Context, id int64) (*routing.RoutingRule, error) {
			var b ruleBody
			if err := rt.DecodeJSON(w, r, &b); err != nil {
				return nil, err
			}
			return svc.UpdateRule(ctx, id, b.input())
		})
	})
	rt.Private("DELETE", "/pro/routing-rules/{id}", func(w http.ResponseWriter, r *http.Request) error {
		return respondRule(w, r, func(ctx context.Context, id int64) (map[string]any, error) {
			if err := svc.DeleteRule(ctx, id); err != nil {
				return nil, err
			}
			return map[string]any{"deleted": true, "id": id}, nil
		})
	})
}
