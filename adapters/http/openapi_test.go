package http_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	api "github.com/mailsvc/mailsvc/adapters/http"
	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
	"github.com/mailsvc/mailsvc/core"
)

// openapiFile is the API's description, checked against the router.
const openapiFile = "../../docs/openapi.yaml"

// loadOpenAPI loads and validates docs/openapi.yaml.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(openapiFile)
	if err != nil {
		t.Fatalf("load %s: %v", openapiFile, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("%s is not a valid OpenAPI document: %v", openapiFile, err)
	}
	return doc
}

// stubAnalytics only makes the Pro analytics service non-nil, so that
// its routes are registered; its methods are never called.
type stubAnalytics struct{ httppro.AnalyticsService }

// documentedServer is fullServer with, when pro is true, the analytics
// service on its Pro module as well: every route the router can serve.
// Its router is built again after the service is set.
func documentedServer(t *testing.T, pro bool) *api.Server {
	t.Helper()
	s, _ := fullServer(t, pro)
	s.Sites, s.Network = stubSites{}, stubNetwork{}
	s.SiteFormat = stubSiteFormat{format: core.DefaultSiteFormat}
	for _, m := range s.Modules {
		if pm, ok := m.(*httppro.Module); ok && pm.Analytics == nil {
			pm.Analytics = stubAnalytics{}
		}
	}
	s.Handler()
	return s
}

// muxVar matches a mux path variable with a pattern: {name:pattern}.
var muxVar = regexp.MustCompile(`\{(\w+):([^{}]*)\}`)

// routerOperations returns "METHOD /path" for every method and path the
// router serves (variables as {name}), and the literal values of each
// variable whose pattern lists them (provider: google|microsoft|zoho).
// The admin screens (/admin/...) are static files, not API routes.
func routerOperations(t *testing.T, pro bool) (map[string]bool, map[string][]string) {
	t.Helper()
	s := documentedServer(t, pro)
	ops, enums := map[string]bool{}, map[string][]string{}
	// A fleet's router serves the operator's view beside the sites.
	for _, rr := range append(s.RegisteredRoutes(), api.FleetRoutes()...) {
		if rr.Path == "/admin" || strings.HasPrefix(rr.Path, "/admin/") {
			continue
		}
		path := muxVar.ReplaceAllStringFunc(rr.Path, func(v string) string {
			m := muxVar.FindStringSubmatch(v)
			return "{" + m[1] + "}"
		})
		for _, m := range muxVar.FindAllStringSubmatch(rr.Path, -1) {
			enums[path+" "+m[1]] = strings.Split(m[2], "|")
		}
		for _, method := range rr.Methods {
			ops[method+" "+path] = true
		}
	}
	return ops, enums
}

// documentOperations returns "METHOD /path" for every operation of doc.
func documentOperations(doc *openapi3.T) map[string]bool {
	ops := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			ops[strings.ToUpper(method)+" "+path] = true
		}
	}
	return ops
}

// compareOperations lists the operations only in the router and only in
// the document.
func compareOperations(router, doc map[string]bool) (onlyRouter, onlyDoc []string) {
	for op := range router {
		if !doc[op] {
			onlyRouter = append(onlyRouter, op)
		}
	}
	for op := range doc {
		if !router[op] {
			onlyDoc = append(onlyDoc, op)
		}
	}
	sort.Strings(onlyRouter)
	sort.Strings(onlyDoc)
	return onlyRouter, onlyDoc
}

func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	doc := loadOpenAPI(t)
	router, enums := routerOperations(t, true)
	documented := documentOperations(doc)
	onlyRouter, onlyDoc := compareOperations(router, documented)
	for _, op := range onlyRouter {
		t.Errorf("route %s is served but not in %s", op, openapiFile)
	}
	for _, op := range onlyDoc {
		t.Errorf("%s describes %s, which the router does not serve", openapiFile, op)
	}
	if len(router) < 80 {
		t.Errorf("only %d operations with Pro on", len(router))
	}

	t.Run("pattern variables are enums", func(t *testing.T) {
		for key, values := range enums {
			path, name, _ := strings.Cut(key, " ")
			item := doc.Paths.Value(path)
			if item == nil {
				continue // reported above
			}
			for method, op := range item.Operations() {
				p := op.Parameters.GetByInAndName("path", name)
				if p == nil {
					t.Errorf("%s %s: no path parameter %s", method, path, name)
					continue
				}
				var got []string
				for _, v := range p.Schema.Value.Enum {
					got = append(got, fmt.Sprint(v))
				}
				if !slices.Equal(got, values) {
					t.Errorf("%s %s: %s enum %v, router %v", method, path, name, got, values)
				}
			}
		}
	})

	t.Run("Pro routes are tagged Pro", func(t *testing.T) {
		for path, item := range doc.Paths.Map() {
			isPro := strings.HasPrefix(path, ns+"/pro/")
			for method, op := range item.Operations() {
				if slices.Contains(op.Tags, "Pro") != isPro {
					t.Errorf("%s %s: tags %v", method, path, op.Tags)
				}
			}
		}
	})

	t.Run("the free part registers no public route", func(t *testing.T) {
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				public := op.Security != nil && len(*op.Security) == 0
				allowed := strings.HasPrefix(path, ns+"/pro/webhooks/") || strings.HasPrefix(path, ns+"/pro/oauth/") ||
					strings.HasPrefix(path, ns+"/oauth/") && strings.HasSuffix(path, "/callback") ||
					path == "/healthz" || path == "/readyz"
				if public && !allowed {
					t.Errorf("%s %s is documented as public", method, path)
				}
			}
		}
	})

	t.Run("free routes without Pro", func(t *testing.T) {
		free, _ := routerOperations(t, false)
		for op := range free {
			if strings.Contains(op, ns+"/pro/") {
				t.Errorf("%s served with Pro off", op)
			}
			if !documented[op] {
				t.Errorf("free route %s not documented", op)
			}
		}
	})
}

// TestOpenAPICheckCatchesDrift proves the comparison fails on a route
// missing from the document and on a documented route the router does
// not serve.
func TestOpenAPICheckCatchesDrift(t *testing.T) {
	router, _ := routerOperations(t, true)
	cases := []struct {
		name           string
		edit           func(doc *openapi3.T)
		wantOnlyRouter []string
		wantOnlyDoc    []string
	}{
		{"unchanged", func(*openapi3.T) {}, nil, nil},
		{"path removed", func(doc *openapi3.T) { doc.Paths.Delete(ns + "/logs/{id}") },
			[]string{"DELETE " + ns + "/logs/{id}", "GET " + ns + "/logs/{id}"}, nil},
		{"method removed", func(doc *openapi3.T) { doc.Paths.Value(ns + "/connections").Post = nil },
			[]string{"POST " + ns + "/connections"}, nil},
		{"path added", func(doc *openapi3.T) {
			doc.Paths.Set(ns+"/connections/{id}/clone", &openapi3.PathItem{Post: doc.Paths.Value(ns + "/connections").Post})
		}, nil, []string{"POST " + ns + "/connections/{id}/clone"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := loadOpenAPI(t) // a parsed copy of its own
			c.edit(doc)
			onlyRouter, onlyDoc := compareOperations(router, documentOperations(doc))
			if !slices.Equal(onlyRouter, c.wantOnlyRouter) || !slices.Equal(onlyDoc, c.wantOnlyDoc) {
				t.Errorf("only in router %v, only in document %v; want %v and %v", onlyRouter, onlyDoc, c.wantOnlyRouter, c.wantOnlyDoc)
			}
		})
	}
}
