package http_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestMovedDestinationAsksForTheSecret: a PUT that changes a destination
// field (httptestmail's host) and sends the stored secret back masked is
// 422 validation_error naming the secret in data.errors, answers no
// secret and stores nothing; the same change with the secret entered
// again, or a change of another field, is accepted. GET /transports
// serves the destination mark.
func TestMovedDestinationAsksForTheSecret(t *testing.T) {
	ts, _, _ := newServer(t)
	r := do(t, ts, "GET", ns+"/transports/httptestmail", "admin", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"key":"host","label":"","type":"string","required":true,"destination":true`) {
		t.Fatalf("GET /transports/httptestmail: %d %s", r.Status, r.Body)
	}
	r = do(t, ts, "POST", ns+"/connections", "admin", strings.NewReader(`{"name":"c","driver":"httptestmail","settings":{"host":"h1","api_key":"SECRET-1"}}`))
	var c struct{ ID int64 }
	r.json(t, &c)
	path := fmt.Sprintf("%s/connections/%d", ns, c.ID)
	tests := []struct {
		name     string
		body     string
		status   int
		wantErr  string // data.errors.api_key
		wantHost string // host after the call
	}{
		{"host moved, key masked", `{"settings":{"host":"h2","api_key":"********"}}`, 422, "Enter the API key again: the server changed.", "h1"},
		{"host moved, key not sent", `{"name":"renamed","settings":{"host":"h2"}}`, 422, "Enter the API key again: the server changed.", "h1"},
		{"another field", `{"settings":{"port":2525,"api_key":"********"}}`, 200, "", "h1"},
		{"host moved, key entered again", `{"settings":{"host":"h2","api_key":"SECRET-2"}}`, 200, "", "h2"},
		{"host moved back, key removed", `{"settings":{"host":"h1","api_key":null}}`, 200, "", "h1"},
	}
	for _, tt := range tests {
		r := do(t, ts, "PUT", path, "admin", strings.NewReader(tt.body))
		if r.Status != tt.status || strings.Contains(string(r.Body), "SECRET") {
			t.Fatalf("%s: %d %s, want %d", tt.name, r.Status, r.Body, tt.status)
		}
		if tt.status == 422 {
			code, status, errs := r.errorCode(t)
			if code != "validation_error" || status != 422 || errs["api_key"] != tt.wantErr || len(errs) != 1 {
				t.Fatalf("%s: %s, want validation_error with data.errors.api_key %q", tt.name, r.Body, tt.wantErr)
			}
		}
		var got struct {
			Name     string
			Settings map[string]any
		}
		do(t, ts, "GET", path, "admin", nil).json(t, &got)
		if got.Settings["host"] != tt.wantHost || got.Name == "renamed" {
			t.Fatalf("%s: stored %+v, want host %s", tt.name, got, tt.wantHost)
		}
	}
}
