package http_test

import (
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// pathVariable matches a variable of an OpenAPI path: {id}.
var pathVariable = regexp.MustCompile(`\{\w+\}`)

// pagedOperations returns the path (variables set to 1) of every GET
// operation that docs/openapi.yaml documents with a page parameter.
func pagedOperations(t *testing.T) []string {
	t.Helper()
	var paths []string
	for path, item := range loadOpenAPI(t).Paths.Map() {
		if item.Get == nil || item.Get.Parameters.GetByInAndName("query", "page") == nil {
			continue
		}
		paths = append(paths, pathVariable.ReplaceAllString(path, "1"))
	}
	sort.Strings(paths)
	return paths
}

// TestListsBoundPage sends every paged list a page or per_page it cannot
// serve: each answers 422 validation_error naming the parameter before
// reaching its service (the services here panic when called, which would
// answer 500).
func TestListsBoundPage(t *testing.T) {
	paths := pagedOperations(t)
	if len(paths) < 5 {
		t.Fatalf("only %d paged lists documented: %v", len(paths), paths)
	}
	_, ts := fullServer(t, true)
	cases := []struct {
		query, field string
	}{
		{"page=1844674407370955162", "page"},
		{"page=9223372036854775807", "page"},
		{"page=99999999999999999999", "page"},
		{"page=214748366", "page"}, // offset 2^31 with 10 a page
		{"page=21474838&per_page=100", "page"},
		{"page=-1", "page"},
		{"page=0", "page"},
		{"page=abc", "page"},
		{"page=1.5", "page"},
		{"per_page=1844674407370955162", "per_page"},
		{"per_page=101", "per_page"},
		{"per_page=0", "per_page"},
		{"per_page=-5", "per_page"},
		{"per_page=x&page=1844674407370955162", "per_page"},
	}
	for _, path := range paths {
		for _, c := range cases {
			t.Run(path+"?"+c.query, func(t *testing.T) {
				r := do(t, ts, "GET", path+"?"+c.query, "admin", nil)
				if r.Status != http.StatusUnprocessableEntity {
					t.Fatalf("status %d: %s", r.Status, r.Body)
				}
				code, status, fields := r.errorCode(t)
				if code != "validation_error" || status != 422 || fields[c.field] == "" {
					t.Errorf("code %q status %d errors %v; want validation_error naming %s", code, status, fields, c.field)
				}
			})
		}
	}
}

// TestLastAddressablePage reads the last page a list can address and the
// one after it, on a list over a real (in-memory) store.
func TestLastAddressablePage(t *testing.T) {
	ts, _, _ := newServer(t)
	for _, c := range []struct {
		perPage, page int
		want          int
	}{
		{100, 21474837, http.StatusOK}, // offset 2147483600
		{100, 21474838, http.StatusUnprocessableEntity},
		{1, 2147483648, http.StatusOK}, // offset 2^31-1
		{1, 2147483649, http.StatusUnprocessableEntity},
		{10, 214748365, http.StatusOK},
	} {
		q := url.Values{"page": {strconv.Itoa(c.page)}, "per_page": {strconv.Itoa(c.perPage)}}
		r := do(t, ts, "GET", ns+"/connections?"+q.Encode(), "admin", nil)
		if r.Status != c.want {
			t.Errorf("%s: status %d, want %d: %s", q.Encode(), r.Status, c.want, r.Body)
			continue
		}
		if c.want == http.StatusOK && (strings.TrimSpace(string(r.Body)) != "[]" || r.Header.Get("X-WP-Total") != "0") {
			t.Errorf("%s: body %s total %q, want an empty page", q.Encode(), r.Body, r.Header.Get("X-WP-Total"))
		}
	}
}
