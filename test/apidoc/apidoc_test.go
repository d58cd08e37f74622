package apidoc

import (
	"net/http"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	const base = "http://127.0.0.1:41234/wp-json/mailsvc/v1"
	jsonHeader := http.Header{"Content-Type": {"application/json; charset=UTF-8"}}
	list := http.Header{"Content-Type": {"application/json; charset=UTF-8"}, "X-Wp-Total": {"1"}, "X-Wp-Totalpages": {"1"}}
	stats := `{"queued":1,"sending":0,"failed":2,"delivered":3}`
	tests := []struct {
		name, method, url string
		status            int
		header            http.Header
		body              string
		wantErr           string // "" for a valid answer
	}{
		{"queue stats", "GET", base + "/logs/queue/stats", 200, jsonHeader, stats, ""},
		{"missing field", "GET", base + "/logs/queue/stats", 200, jsonHeader, `{"queued":1,"sending":0,"failed":2}`, "delivered"},
		{"wrong type", "GET", base + "/logs/queue/stats", 200, jsonHeader, `{"queued":"1","sending":0,"failed":2,"delivered":3}`, "queued"},
		{"wrong content type", "GET", base + "/logs/queue/stats", 200, http.Header{"Content-Type": {"text/html"}}, stats, "text/html"},
		{"error shape", "GET", base + "/connections/9", 404, jsonHeader, `{"code":"not_found","message":"No.","data":{"status":404}}`, ""},
		{"bad error shape", "GET", base + "/connections/9", 404, jsonHeader, `{"code":"not_found","message":"No."}`, "data"},
		{"list with headers", "GET", base + "/tools/debug-logs", 200, list, `[{"id":"a","connection_id":1,"created_at":"2026-03-01T10:00:00Z","size":3,"transcript":"EHLO"}]`, ""},
		{"list without headers", "GET", base + "/tools/debug-logs", 200, jsonHeader, `[]`, "X-WP-Total"},
		{"undocumented route", "GET", base + "/no-such-route", 200, jsonHeader, `{}`, "not in"},
		{"undocumented method", "PATCH", base + "/connections", 200, jsonHeader, `{}`, "not in"},
		{"probe", "GET", "http://127.0.0.1:41234/healthz", 200, http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, "ok\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := d.Validate(tt.method, tt.url, tt.status, tt.header, []byte(tt.body))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("valid answer refused: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("invalid answer accepted")
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("error %q does not name %q", err, tt.wantErr)
			}
		})
	}
}
