package protest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/apidoc"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/fakes/snsfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestProAnswersMatchTheAPIDocument calls a representative route of each
// Pro family through the built binary (no licence) and validates every
// answer against docs/openapi.yaml.
func TestProAnswersMatchTheAPIDocument(t *testing.T) {
	svc, call := start(t, t.TempDir())
	if r := call("POST", "/connections", `{"name":"Relay","driver":"smtp","settings":{"host":"smtp.example.com","port":587,"from_email":"site@example.com","username":"site","password":"s3cret"}}`); r.Status != 201 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	steps := []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/pro/license/status", "", 200},
		{"POST", "/pro/license/activate", `{"license_key":"not-a-key"}`, 422},
		{"GET", "/pro/settings", "", 200},
		{"PUT", "/pro/settings", `{"max_retries":2}`, 200},
		{"GET", "/pro/tools/domain-check?domain=example.com", "", 403},
		{"POST", "/pro/tools/export", "", 200},
		{"GET", "/pro/sender-groups", "", 200},
		{"GET", "/pro/routing-rules", "", 200},
		{"POST", "/pro/routing-rules", `{"name":"Invoices","conditions":[{"field":"subject","operator":"contains","value":"invoice"}],"connection_id":1,"priority":1}`, 201},
		{"GET", "/pro/routing-rules/1", "", 200},
		{"POST", "/pro/routing-rules/test", `{"to":"a@example.com","subject":"Your invoice"}`, 200},
		{"GET", "/pro/routing-rules/999", "", 404},
		{"GET", "/pro/suppressions", "", 200},
		{"POST", "/pro/suppressions", `{"email":"bounced@example.com","reason":"manual"}`, 201},
		{"POST", "/pro/ses/identities", `{"connection_id":1}`, 403},
		{"POST", "/pro/webhooks/postmark", `{"RecordType":"Bounce"}`, 401},
		{"GET", "/pro/analytics/overview", "", 200},
		{"GET", "/pro/analytics/deliverability?days=7", "", 200},
		{"GET", "/pro/analytics/export?from=2025-06-01&to=2025-06-30", "", 200},
		{"GET", "/pro/analytics/overview?days=0", "", 422},
	}
	root := strings.TrimSuffix(svc.Base, "/wp-json/mailsvc/v1")
	for _, s := range steps {
		r := call(s.method, s.path, s.body)
		if r.Status != s.status {
			t.Errorf("%s %s: %d %s, want %d", s.method, s.path, r.Status, r.Body, s.status)
		}
		apidoc.Check(t, s.method, root+"/wp-json/mailsvc/v1"+s.path, r.Status, r.Header, r.Body)
	}
}

// TestProAnalyticsAnswersMatchTheAPIDocument validates the analytics
// answers with figures in them against docs/openapi.yaml: a test email
// delivered through an SES connection (SMTP mode, a real SMTP sink) that
// SES then reports bounced through a signed SNS notification, so that
// the overview has rates, the deliverability a provider and the export a
// row; then the errors of each route (422 bad range, 401 no credentials).
func TestProAnalyticsAnswersMatchTheAPIDocument(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.WithAuth("ses-user", "ses-pass"))
	sns := snsfake.Start(t, "us-east-1")
	dir := t.TempDir()
	svc, call := start(t, dir, "MAILSVC_SNS_CA_FILE="+sns.WriteCA(t, dir), "MAILSVC_SNS_DIAL_ADDR="+sns.Addr())
	id := createConnection(t, call, fmt.Sprintf(`{"name":"SES relay","driver":"ses","settings":{"delivery_mode":"smtp","smtp_host":%q,"smtp_port":%d,"smtp_encryption":"none","smtp_username":"ses-user","smtp_password":"ses-pass","from_email":"site@example.com","webhook_topic_arns":%q}}`,
		sink.Host(), sink.Port(), topic))
	sent := sendTestEmail(t, call, "gone@example.com", id)
	r := servicetest.Call(t, "POST", svc.Base+"/pro/webhooks/ses",
		string(sns.Notification(topic, snsfake.SESBounce(sent.ProviderMessageID, "gone@example.com", true), time.Now(), "2")),
		func(r *http.Request) { r.Header.Set("X-Amz-Sns-Message-Type", "Notification") })
	if r.Status != 200 || !strings.Contains(string(r.Body), `"matched":1`) {
		t.Fatalf("bounce: %d %s", r.Status, r.Body)
	}

	steps := []struct {
		path   string
		anon   bool
		status int
		want   string // in the body
	}{
		{"/pro/analytics/overview?days=1", false, 200, `"bounce_rate":100`},
		{"/pro/analytics/deliverability?days=1", false, 200, `"provider":"ses"`},
		{"/pro/analytics/export?days=1", false, 200, "gone@example.com"},
		{"/pro/analytics/overview?days=1&from=2025-06-01", false, 422, `"days"`},
		{"/pro/analytics/deliverability?from=someday", false, 422, `"from"`},
		{"/pro/analytics/export?from=2020-01-01&to=2024-01-01", false, 422, `"to"`},
		{"/pro/analytics/overview", true, 401, "rest_not_logged_in"},
		{"/pro/analytics/deliverability", true, 401, "rest_not_logged_in"},
		{"/pro/analytics/export", true, 401, "rest_not_logged_in"},
	}
	for _, s := range steps {
		if s.anon {
			r = servicetest.Call(t, "GET", svc.Base+s.path, "", nil)
		} else {
			r = call("GET", s.path, "")
		}
		if r.Status != s.status || !strings.Contains(string(r.Body), s.want) {
			t.Errorf("GET %s: %d %s, want %d with %s", s.path, r.Status, r.Body, s.status, s.want)
		}
		apidoc.Check(t, "GET", svc.Base+s.path, r.Status, r.Header, r.Body)
	}
}
