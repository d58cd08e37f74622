package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/sendgridfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// validationErrors decodes a 422 answer's data.errors.
func validationErrors(t *testing.T, r servicetest.Response) map[string]string {
	t.Helper()
	var body struct {
		Code string
		Data struct{ Errors map[string]string }
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || r.Status != 422 || body.Code != "validation_error" {
		t.Fatalf("want a 422 validation_error, got %d %s", r.Status, r.Body)
	}
	return body.Data.Errors
}

// TestEndpointsOnTheProvidersHosts drives the endpoint rule through the
// built binary: by default an endpoint setting off the provider's hosts is
// a 422 and nothing is stored; MAILSVC_ALLOW_CUSTOM_ENDPOINTS=true lets a
// connection use a local fake; once the flag is gone that stored
// connection neither sends nor verifies (no request reaches the fake); a
// constant that pins the endpoint is the site owner's and is used.
func TestEndpointsOnTheProvidersHosts(t *testing.T) {
	const apiKey = "SG.endpoint-test-key"
	fake := sendgridfake.New(apiKey)
	defer fake.Close()
	dir := t.TempDir()
	svc, pw := adminOf(t, dir)
	admin := basic("admin", pw)

	r := call(t, "GET", svc.Base+"/transports/sendgrid", "", admin)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"hosts":["api.sendgrid.com","api.eu.sendgrid.com"]`) {
		t.Errorf("GET /transports/sendgrid does not serve base_url's hosts: %d %s", r.Status, r.Body)
	}

	refused := []struct {
		name, driver, settings, field string
	}{
		{"sendgrid on a loopback fake", "sendgrid", fmt.Sprintf(`{"api_key":%q,"base_url":%q}`, apiKey, fake.URL), "base_url"},
		{"sendgrid on plain http", "sendgrid", fmt.Sprintf(`{"api_key":%q,"base_url":"http://api.sendgrid.com"}`, apiKey), "base_url"},
		{"postmark on the metadata service", "postmark", `{"api_key":"pm-token","base_url":"https://169.254.169.254/"}`, "base_url"},
		{"mailgun on a look-alike host", "mailgun", `{"api_key":"key-1","domain":"mg.example.com","base_url":"https://api.mailgun.net.example.org/v3"}`, "base_url"},
		{"ses endpoint inside the network", "ses", `{"region":"us-east-1","access_key":"AKIA1","secret":"s","custom_endpoint":"https://10.0.0.5/"}`, "custom_endpoint"},
		{"ses imds endpoint elsewhere", "ses", `{"region":"us-east-1","access_key":"AKIA1","secret":"s","imds_endpoint":"http://127.0.0.1:9/"}`, "imds_endpoint"},
		{"gmail authorization server elsewhere", "gmail", `{"client_id":"c","client_secret":"s","from_email":"a@example.com","oauth_base_url":"https://login.example.net"}`, "oauth_base_url"},
		{"ses instance role from the API", "ses", `{"region":"us-east-1","imds_role_source":true}`, "imds_role_source"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, "POST", svc.Base+"/connections", fmt.Sprintf(`{"name":"x","driver":%q,"settings":%s}`, tt.driver, tt.settings), admin)
			errs := validationErrors(t, r)
			want := "MAILSVC_ALLOW_CUSTOM_ENDPOINTS"
			if tt.field == "imds_role_source" {
				want = "MAILSVC_AWS_ENABLE_IMDS_ROLE_SOURCE"
			}
			if !strings.Contains(errs[tt.field], want) {
				t.Errorf("errors = %v, want %s naming %s", errs, tt.field, want)
			}
		})
	}
	r = call(t, "GET", svc.Base+"/connections", "", admin)
	if strings.Contains(string(r.Body), `"driver"`) {
		t.Fatalf("a refused connection was stored: %s", r.Body)
	}
	for _, settings := range []string{
		`{"api_key":"SG.k","base_url":"https://api.eu.sendgrid.com/"}`,
		`{"api_key":"SG.k"}`,
	} {
		if r := call(t, "POST", svc.Base+"/connections", `{"name":"own host","driver":"sendgrid","settings":`+settings+`}`, admin); r.Status != 201 {
			t.Errorf("the provider's own endpoint %s: %d %s", settings, r.Status, r.Body)
		}
	}
	if r := call(t, "POST", svc.Base+"/connections", `{"name":"role off","driver":"ses","settings":{"region":"us-east-1","access_key":"AKIA1","secret":"s","imds_role_source":false}}`, admin); r.Status != 201 {
		t.Errorf("imds_role_source false (the form's default): %d %s", r.Status, r.Body)
	}
	svc.Stop(t)

	// With the flag, a connection may use the local fake.
	svc = servicetest.Start(t, dir, servicetest.AllowCustomEndpoints)
	r = call(t, "POST", svc.Base+"/connections", fmt.Sprintf(`{"name":"fake","driver":"sendgrid","settings":{"api_key":%q,"base_url":%q,"from_email":"site@example.com"}}`, apiKey, fake.URL), admin)
	var conn struct{ ID int64 }
	if err := json.Unmarshal(r.Body, &conn); err != nil || r.Status != 201 {
		t.Fatalf("create with MAILSVC_ALLOW_CUSTOM_ENDPOINTS: %d %s", r.Status, r.Body)
	}
	testEmail := fmt.Sprintf(`{"to":"rcpt@example.com","connection_id":%d}`, conn.ID)
	if r := call(t, "POST", svc.Base+"/test-email", testEmail, admin); r.Status != 200 || !strings.Contains(string(r.Body), `"success":true`) {
		t.Fatalf("test email through the fake: %d %s", r.Status, r.Body)
	}
	if n := len(fake.Messages()); n != 1 {
		t.Fatalf("fake got %d messages, want 1", n)
	}
	svc.Stop(t)

	// Without it, the stored endpoint is refused at use: the connection
	// says why, and neither a send nor a credentials check reaches the fake.
	svc = servicetest.Start(t, dir)
	before := fake.Requests()
	r = call(t, "GET", fmt.Sprintf("%s/connections/%d", svc.Base, conn.ID), "", admin)
	var got struct {
		SettingsError string `json:"settings_error"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil || !strings.Contains(got.SettingsError, "base_url") {
		t.Errorf("GET the connection: %d %s, want a settings_error naming base_url", r.Status, r.Body)
	}
	if r := call(t, "POST", svc.Base+"/test-email", testEmail, admin); strings.Contains(string(r.Body), `"success":true`) {
		t.Errorf("test email through a refused endpoint: %d %s", r.Status, r.Body)
	}
	if r := call(t, "POST", fmt.Sprintf("%s/connections/%d/verify-api-credentials", svc.Base, conn.ID), "", admin); strings.Contains(string(r.Body), `"success":true`) {
		t.Errorf("verify through a refused endpoint: %d %s", r.Status, r.Body)
	}
	if r := call(t, "PUT", fmt.Sprintf("%s/connections/%d", svc.Base, conn.ID), `{"name":"renamed"}`, admin); validationErrors(t, r)["base_url"] == "" {
		t.Errorf("an edit that keeps the refused endpoint: %s", r.Body)
	}
	if n := fake.Requests(); n != before {
		t.Errorf("the fake got %d requests from a refused endpoint", n-before)
	}
	svc.Stop(t)

	// A constant is the site owner's: a pinned endpoint is used as it is.
	svc = servicetest.Start(t, dir, "MAILSVC_SENDGRID_BASE_URL="+fake.URL)
	if r := call(t, "POST", svc.Base+"/test-email", testEmail, admin); r.Status != 200 || !strings.Contains(string(r.Body), `"success":true`) {
		t.Errorf("test email through a pinned endpoint: %d %s", r.Status, r.Body)
	}
	if n := len(fake.Messages()); n != 2 {
		t.Errorf("fake got %d messages, want 2", n)
	}
}

// TestInstanceRoleFromItsConstantOnly checks that the SES instance-role
// source comes from MAILSVC_AWS_ENABLE_IMDS_ROLE_SOURCE: with it, an SES
// connection needs no keys and shows the key as pinned.
func TestInstanceRoleFromItsConstantOnly(t *testing.T) {
	svc, pw := adminOf(t, t.TempDir(), "MAILSVC_AWS_ENABLE_IMDS_ROLE_SOURCE=true")
	admin := basic("admin", pw)
	r := call(t, "POST", svc.Base+"/connections", `{"name":"role","driver":"ses","settings":{"region":"us-east-1"}}`, admin)
	var c struct {
		Settings map[string]any
		Pinned   []string
	}
	if err := json.Unmarshal(r.Body, &c); err != nil || r.Status != 201 {
		t.Fatalf("create with the constant: %d %s", r.Status, r.Body)
	}
	if c.Settings["imds_role_source"] != true || !strings.Contains(strings.Join(c.Pinned, ","), "imds_role_source") {
		t.Errorf("imds_role_source = %v, pinned %v", c.Settings["imds_role_source"], c.Pinned)
	}
}
