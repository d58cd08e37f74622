package http_test

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	api "github.com/mailsvc/mailsvc/adapters/http"
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
	// A changed destination with the stored secret masked, absent, entered
	// again, removed, or of the wrong type (PUT /connections/1).
	for _, seed := range []string{
		`{"settings":{"host":"elsewhere","api_key":"********"}}`, `{"settings":{"host":"elsewhere"}}`,
		`{"settings":{"host":"elsewhere","api_key":"k2"}}`, `{"settings":{"host":"elsewhere","api_key":null}}`,
		`{"settings":{"host":"elsewhere","api_key":7}}`, `{"settings":{"host":"","api_key":"********"}}`,
		`{"driver":"httptestmail","settings":{"host":"elsewhere","api_key":"********"}}`,
	} {
		f.Add(seed, uint8(1))
	}
	srv, _ := newAPI()
	handler := srv.Handler()
	routes := []struct{ method, path string }{
		{"POST", "/connections"}, {"PUT", "/connections/1"}, {"DELETE", "/connections"}, {"PUT", "/settings"},
	}
	// One connection with a stored secret exists so the PUT reaches
	// validation and the destination rule.
	seed := httptest.NewRecorder()
	req := httptest.NewRequest("POST", ns+"/connections", strings.NewReader(`{"name":"c","driver":"httptestmail","settings":{"host":"h","api_key":"k"}}`))
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

// FuzzAlertAndOAuthBodies sends arbitrary bodies to the Notifications
// routes and the connection token routes, with the same promise: a 2xx or
// a 4xx in the spec's shape, never a 500.
func FuzzAlertAndOAuthBodies(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `{"name":"x","type":"webhook","settings":{"url":"https://e.example/h"}}`,
		`{"name":"x","type":"telegram","events":["delivery_failed",7],"settings":{"bot_token":"1:a","chat_id":-5}}`,
		`{"action":"disable","ids":[1,1e40]}`, `{"id":1}`, `{"channel":{"type":"slack"}}`, `{"bot_token":""}`,
		`{"refresh_token":"r","expires_in":1e300}`, `{"access_token":"a","expires_at":"not a time"}`, "{\"name\":\"\xff\"}",
	} {
		f.Add(seed, uint8(0))
	}
	notifications, _ := newNotificationServer(f)
	oauthSrv := newOAuthServer(f)
	targets := []struct {
		base         string
		method, path string
	}{
		{notifications.URL, "POST", "/notifications"},
		{notifications.URL, "PUT", "/notifications/1"},
		{notifications.URL, "POST", "/notifications/bulk"},
		{notifications.URL, "POST", "/notifications/test"},
		{notifications.URL, "POST", "/notifications/telegram/detect-chats"},
		{oauthSrv.ts.URL, "POST", "/connections/1/oauth-token"},
		{oauthSrv.ts.URL, "POST", "/connections/2/oauth-token"},
	}
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		tg := targets[int(which)%len(targets)]
		req, err := http.NewRequest(tg.method, tg.base+ns+tg.path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer admin")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 || resp.StatusCode < 200 {
			t.Fatalf("%s %s with %q: status %d %s", tg.method, tg.path, body, resp.StatusCode, b)
		}
		if resp.StatusCode >= 400 && !strings.Contains(string(b), `"status":`) {
			t.Fatalf("error without the spec's shape: %s", b)
		}
	})
}

// FuzzListQueries sends arbitrary query strings to the paged lists over
// real in-memory stores (connections, OAuth refresh history) and to
// ParsePage itself: the answer is a 200 or a 422 validation_error, never
// a 500, and a page ParsePage accepts addresses a row the stores can
// reach.
func FuzzListQueries(f *testing.F) {
	for _, seed := range []string{
		``, `page=1`, `page=2&per_page=3`, `page=1844674407370955162`, `page=9223372036854775807`,
		`page=-1`, `page=0`, `page=abc`, `page=1e3`, `page=%00`, `per_page=1844674407370955162`,
		`per_page=0`, `per_page=100&page=21474837`, `per_page=100&page=21474838`, `page=1&page=2`,
		`page=+5`, `page=0x10`, `per_page=%20100`, `page=2147483648&per_page=1`, `;page=1`,
	} {
		f.Add(seed, uint8(0))
	}
	srv, _ := newAPI()
	targets := []struct {
		handler http.Handler
		path    string
	}{
		{srv.Handler(), ns + "/connections"},
		{newOAuthServer(f).ts.Config.Handler, ns + "/connections/1/oauth-refresh-history"},
	}
	f.Fuzz(func(t *testing.T, query string, which uint8) {
		if p, err := api.ParsePage(&http.Request{URL: &url.URL{RawQuery: query}}, 10); err == nil {
			if p.Page < 1 || p.PerPage < 1 || p.PerPage > 100 || p.Offset() < 0 || p.Offset() > math.MaxInt32 {
				t.Fatalf("ParsePage accepted %q as %+v (offset %d)", query, p, p.Offset())
			}
		}
		tg := targets[int(which)%len(targets)]
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", tg.path, nil)
		req.URL.RawQuery = query
		req.Header.Set("Authorization", "Bearer admin")
		tg.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("?%s: status %d %s", query, rec.Code, rec.Body)
		}
		if rec.Code == http.StatusUnprocessableEntity && !strings.Contains(rec.Body.String(), `"validation_error"`) {
			t.Fatalf("?%s: 422 without validation_error: %s", query, rec.Body)
		}
	})
}
