package e2e

import (
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/apidoc"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestAnswersMatchTheAPIDocument calls a representative route of each
// family of the free API through the built binary, with and without
// credentials, and validates every answer against docs/openapi.yaml.
func TestAnswersMatchTheAPIDocument(t *testing.T) {
	svc, pw := adminOf(t, t.TempDir())
	admin := basic("admin", pw)
	root := strings.TrimSuffix(svc.Base, "/wp-json/mailsvc/v1")
	steps := []struct {
		method, path, body string
		auth               bool
		status             int
	}{
		{"GET", "/wp-json/", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1", "", false, 401},
		{"GET", "/wp-json/mailsvc/v1/no-such-route", "", true, 404},
		{"GET", "/wp-json/mailsvc/v1/transports", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1/transports/smtp", "", true, 200},
		{"POST", "/wp-json/mailsvc/v1/connections", `{"name":"Relay","driver":"smtp","settings":{"host":"smtp.example.com","port":587,"from_email":"site@example.com","username":"site","password":"s3cret"}}`, true, 201},
		{"POST", "/wp-json/mailsvc/v1/connections", `{"name":"Relay","driver":"smtp","settings":{"port":70000}}`, true, 422},
		{"POST", "/wp-json/mailsvc/v1/connections", `{"name":`, true, 400},
		{"GET", "/wp-json/mailsvc/v1/connections", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1/connections/1", "", true, 200},
		{"PUT", "/wp-json/mailsvc/v1/connections/1", `{"name":"Office relay"}`, true, 200},
		{"GET", "/wp-json/mailsvc/v1/connections/999", "", true, 404},
		{"GET", "/wp-json/mailsvc/v1/connections/1/oauth-refresh-history", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1/settings", "", true, 200},
		{"PUT", "/wp-json/mailsvc/v1/settings", `{"health_check_interval":30}`, true, 200},
		{"PUT", "/wp-json/mailsvc/v1/settings", `{"health_check_interval":0}`, true, 422},
		{"GET", "/wp-json/mailsvc/v1/logs", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1/logs?status=nope", "", true, 422},
		{"GET", "/wp-json/mailsvc/v1/logs/queue/stats", "", true, 200},
		{"POST", "/wp-json/mailsvc/v1/test-email", `{"to":"not-an-address","connection_id":1}`, true, 422},
		{"GET", "/wp-json/mailsvc/v1/dashboard/stats", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1/dashboard/chart?bucket=hour&days=2", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1/dashboard/activity", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1/dashboard/onboarding", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1/site/format", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1/settings/schema", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1/site/format", "", false, 401},
		{"POST", "/wp-json/mailsvc/v1/dashboard/onboarding", `{"step":2,"driver":"smtp"}`, true, 200},
		{"POST", "/wp-json/mailsvc/v1/reports/summary/preview", `{"period":"weekly"}`, true, 200},
		{"POST", "/wp-json/mailsvc/v1/reports/summary/preview", `{"period":"hourly"}`, true, 422},
		{"POST", "/wp-json/mailsvc/v1/reports/summary/send", `{"recipients":["nope"]}`, true, 422},
		{"GET", "/wp-json/mailsvc/v1/notifications", "", true, 200},
		{"POST", "/wp-json/mailsvc/v1/notifications", `{"name":"Ops","type":"slack","settings":{"webhook_url":"https://hooks.slack.com/services/T/B/x"}}`, true, 201},
		{"GET", "/wp-json/mailsvc/v1/tools/debug-logs", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1/tools/plugins", "", true, 200},
		{"GET", "/wp-json/mailsvc/v1/tools/migration/scan", "", true, 200},
		{"POST", "/wp-json/mailsvc/v1/tools/migration/import", `{"source":"fluent-smtp","dry_run":true}`, true, 422},
		{"DELETE", "/wp-json/mailsvc/v1/connections/1", "", true, 200},
		{"GET", "/healthz", "", false, 200},
	}
	for _, s := range steps {
		var auth = admin
		if !s.auth {
			auth = nil
		}
		r := servicetest.Call(t, s.method, root+s.path, s.body, auth)
		if r.Status != s.status {
			t.Errorf("%s %s: %d %s, want %d", s.method, s.path, r.Status, r.Body, s.status)
		}
		if r.Code() == "rest_no_route" {
			// Not a route of the document by definition.
			continue
		}
		apidoc.Check(t, s.method, root+s.path, r.Status, r.Header, r.Body)
	}
}
