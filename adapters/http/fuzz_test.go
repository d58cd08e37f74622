package http_test

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequestBodies sends arbitrary bodies to every route that reads one:
// whatever arrives, the answer is a 2xx or a 4xx in the spec's shape, never
// a 500 or a dropped connection.
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `{"name":`, `{"name":"x","driver":"httptestmail","settings":{"host":"h"}}`,
		`{"settings":{"port":1e308}}`, `{"ids":[1,2,-3]}`, `{"ids":[1e30]}`, `{"health_check_interval":1.0000001}`,
		`{"default_connection_id":"1"}`, "{\"name\":\"\xff\xfe\"}", `{"settings":{"host":{"a":[]}}}`,
	} {
		f.Add(seed, uint8(0))
	}
	srv, _ := newAPI()
	handler := srv.Handler()
	routes := []struct{ method, path string }{
		{"POST", "/connections"}, {"PUT", "/connections/1"}, {"DELETE", "/connections"}, {"PUT", "/settings"},
	}
	// One connection exists so the PUT reaches validation.
	seed := httptest.NewRecorder()
	req := httptest.NewRequest("POST", ns+"/connections", strings.NewReader(`{"name":"c","driver":"httptestmail","settings":{"host":"h"}}`))
	req.Header.Set("Authorization", "Bearer admin")
	handler.ServeHTTP(seed, req)
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		r := routes[int(which)%len(routes)]
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(r.method, ns+r.path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer admin")
		handler.ServeHTTP(rec, req)
		if rec.Code >= 500 || rec.Code < 200 {
			t.Fatalf("%s %s with %q: status %d %s", r.method, r.path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && !strings.Contains(rec.Body.String(), `"status":`) {
			t.Fatalf("error without the spec's shape: %s", rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("content type %q", ct)
		}
	})
}
