package http_test

import (
	"io"
	"net/http"
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
