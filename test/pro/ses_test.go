package protest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/sesfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

const (
	sesRegion = "us-east-2"
	sesKeyID  = "AKIDPROSESTEST"
	sesSecret = "pro-ses-secret-0123456789"
)

// proService starts mailsvc with a trusted vendor and the extra
// environment, and returns the call function and a function that
// activates a licence with the given features.
func proService(t *testing.T, extra ...string) (func(method, path, body string) servicetest.Response, func(features string)) {
	t.Helper()
	dir := t.TempDir()
	v := keygen(t, dir)
	next := time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02")
	_, call := start(t, dir, append([]string{"MAILSVC_PUBLIC_URL=https://shop.example.com", "MAILSVC_LICENSE_PUBLIC_KEYS=" + v.public}, extra...)...)
	activate := func(features string) {
		t.Helper()
		if r := call("POST", "/pro/license/activate", keyBody(v.issue(t, dir, "https://shop.example.com", features, next))); r.Status != 200 {
			t.Fatalf("activate: %d %s", r.Status, r.Body)
		}
	}
	return call, activate
}

func createConnection(t *testing.T, call func(method, path, body string) servicetest.Response, body string) int64 {
	t.Helper()
	r := call("POST", "/connections", body)
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	var c struct{ ID int64 }
	r.JSON(t, &c)
	return c.ID
}

// sentTestEmail is the answer to a test email: its log, its status and
// the provider's message id.
type sentTestEmail struct {
	LogID             int64  `json:"log_id"`
	Status            string `json:"status"`
	ProviderMessageID string `json:"provider_message_id"`
}

// sendTestEmail sends a test email to "to" through connection id and
// fails t unless it was delivered with a provider message id.
func sendTestEmail(t *testing.T, call func(method, path, body string) servicetest.Response, to string, id int64) sentTestEmail {
	t.Helper()
	r := call("POST", "/test-email", fmt.Sprintf(`{"to":%q,"connection_id":%d}`, to, id))
	var sent sentTestEmail
	r.JSON(t, &sent)
	if r.Status != 200 || sent.Status != "delivered" || sent.ProviderMessageID == "" {
		t.Fatalf("test email: %d %s", r.Status, r.Body)
	}
	return sent
}

// requireHardBounce fails t unless log id failed for a hard bounce of rcpt;
// what names the moment in the failure.
func requireHardBounce(t *testing.T, call func(method, path, body string) servicetest.Response, what string, id int64, rcpt string) {
	t.Helper()
	var l struct {
		Status    string `json:"status"`
		LastError string `json:"last_error"`
	}
	call("GET", fmt.Sprintf("/logs/%d", id), "").JSON(t, &l)
	if l.Status != "failed" || !strings.Contains(l.LastError, "bounced (hard) for "+rcpt) {
		t.Fatalf("%s: %+v", what, l)
	}
}

func TestSESIdentitiesThroughTheBinary(t *testing.T) {
	fake := sesfake.New(sesRegion, sesKeyID, sesSecret)
	defer fake.Close()
	fake.AddIdentity("verified.example", "SUCCESS")
	fake.AddIdentity("pending@other.example", "PENDING")
	// The credentials are pinned by constants from the environment.
	call, activate := proService(t, "MAILSVC_AWS_SES_ACCESS_KEY_ID="+sesKeyID, "MAILSVC_AWS_SES_SECRET_KEY="+sesSecret)
	ses := createConnection(t, call, fmt.Sprintf(`{"name":"ses","driver":"ses","settings":{"region":%q,"custom_endpoint":%q}}`, sesRegion, fake.URL))
	smtp := createConnection(t, call, `{"name":"relay","driver":"smtp","settings":{"host":"127.0.0.1","port":2525,"encryption":"none","auth":false}}`)
	conn := func(extra string) string { return fmt.Sprintf(`{"connection_id":%d%s}`, ses, extra) }

	type step struct {
		name, path, body string
		status           int
		contains         []string
	}
	run := func(steps []step) {
		t.Helper()
		for _, s := range steps {
			r := call("POST", s.path, s.body)
			if r.Status != s.status {
				t.Fatalf("%s: %d %s, want %d", s.name, r.Status, r.Body, s.status)
			}
			for _, c := range s.contains {
				if !bytes.Contains(r.Body, []byte(c)) {
					t.Errorf("%s: %s does not contain %s", s.name, r.Body, c)
				}
			}
			if bytes.Contains(r.Body, []byte(sesSecret)) || bytes.Contains(r.Body, []byte(sesKeyID)) {
				t.Errorf("%s: the answer shows a credential: %s", s.name, r.Body)
			}
		}
	}
	before := fake.RequestCount()
	run([]step{
		{"no licence", "/pro/ses/identities", conn(""), 403, []string{`"code":"license_required"`}},
	})
	activate("tools.domain_check")
	run([]step{
		{"licence without the feature", "/pro/ses/stats", conn(""), 403, []string{`"code":"rest_forbidden"`, "feature:connections.ses.identity_management"}},
	})
	if n := fake.RequestCount(); n != before {
		t.Fatalf("refused requests reached SES (%d calls)", n-before)
	}
	activate("connections.ses.identity_management")
	run([]step{
		{"list", "/pro/ses/identities", conn(""), 200, []string{
			`{"identity":"pending@other.example","type":"email_address","verification_status":"pending","verified_for_sending":false`,
			`{"identity":"verified.example","type":"domain","verification_status":"success","verified_for_sending":true,"dkim":{"signing_enabled":true,"status":"success"`,
			`._domainkey.verified.example","value":`, `.dkim.amazonses.com"`}},
		{"valid senders", "/pro/ses/valid-senders", conn(""), 200, []string{`"addresses":[]`, `"domains":["verified.example"]`, `"sandbox":true`}},
		{"verify an address", "/pro/ses/identities/action", conn(`,"action":"verify","identity":"sender@shop.example.com"`), 200, []string{
			`"action":"verify"`, `"identity":"sender@shop.example.com","type":"email_address","verification_status":"pending"`, `"records":[]`, "verification link"}},
		{"verify a domain", "/pro/ses/identities/action", conn(`,"action":"verify","identity":"Shop.Example.com"`), 200, []string{
			`"identity":"shop.example.com","type":"domain"`, `"type":"CNAME"`, "Publish the 3 CNAME records"}},
		{"verify it again", "/pro/ses/identities/action", conn(`,"action":"verify","identity":"shop.example.com"`), 200, []string{"already exists"}},
		{"delete", "/pro/ses/identities/action", conn(`,"action":"delete","identity":"pending@other.example"`), 200, []string{`"action":"delete"`, "was deleted"}},
		{"delete it again", "/pro/ses/identities/action", conn(`,"action":"delete","identity":"pending@other.example"`), 404, []string{`"code":"not_found"`}},
		{"stats", "/pro/ses/stats", conn(""), 200, []string{`"max_24_hour_send":200`, `"max_send_rate":1`, `"sent_last_24_hours":0`, `"remaining_24_hours":200`, `"sandbox":true`, `"enforcement_status":"HEALTHY"`}},
		{"credential sources", "/pro/ses/credential-sources", conn(""), 200, []string{
			`"in_use":"environment"`,
			`{"source":"database","available":false,"in_use":false,"keys":[]`,
			`{"source":"wp-config","available":false,"in_use":false`,
			`{"source":"environment","available":true,"in_use":true,"keys":["access_key","secret"],"constants":["MAILSVC_AWS_SES_ACCESS_KEY_ID","MAILSVC_AWS_SES_SECRET_KEY"]`,
			`{"source":"instance_role","available":false,"in_use":false`}},
		{"bad action", "/pro/ses/identities/action", conn(`,"action":"approve","identity":"a@b.example"`), 422, []string{`"action":"Must be one of: verify, delete."`}},
		{"bad identity", "/pro/ses/identities/action", conn(`,"action":"verify","identity":"not an address"`), 422, []string{`"identity":`}},
		{"no identity", "/pro/ses/identities/action", conn(`,"action":"verify"`), 422, []string{`"identity":`}},
		{"no connection", "/pro/ses/identities", `{}`, 422, []string{`"connection_id":`}},
		{"not ses", "/pro/ses/valid-senders", fmt.Sprintf(`{"connection_id":%d}`, smtp), 422, []string{"not Amazon SES"}},
		{"unknown connection", "/pro/ses/stats", `{"connection_id":999}`, 404, []string{`"code":"not_found"`}},
		{"malformed", "/pro/ses/identities", `{"connection_id":`, 400, []string{`"code":"bad_request"`}},
		{"wrong type", "/pro/ses/credential-sources", `{"connection_id":"1"}`, 400, []string{`"code":"bad_request"`}},
	})

	var names []string
	for _, it := range fake.Identities() {
		names = append(names, it.Name)
		if it.Name == "shop.example.com" && len(it.DkimTokens) != 3 {
			t.Errorf("the domain has %d DKIM tokens", len(it.DkimTokens))
		}
	}
	if got := strings.Join(names, ","); got != "sender@shop.example.com,shop.example.com,verified.example" {
		t.Errorf("SES holds %s", got)
	}
	for _, req := range fake.Requests() {
		if !req.Authorized || req.AccessKeyID != sesKeyID {
			t.Errorf("request %s %s signed by %q, authorized %v", req.Method, req.Path, req.AccessKeyID, req.Authorized)
		}
	}

	// The records the domain answer gives are the fake's tokens.
	r := call("POST", "/pro/ses/identities", conn(""))
	for _, it := range fake.Identities() {
		for _, tok := range it.DkimTokens {
			rec := fmt.Sprintf(`{"type":"CNAME","name":"%s._domainkey.%s","value":"%s.dkim.amazonses.com"}`, tok, it.Name, tok)
			if !bytes.Contains(r.Body, []byte(rec)) {
				t.Errorf("identities lack %s: %s", rec, r.Body)
			}
		}
	}
}

func TestSESCredentialSourcesFromTheDatabase(t *testing.T) {
	fake := sesfake.New(sesRegion, sesKeyID, sesSecret)
	defer fake.Close()
	call, activate := proService(t)
	activate("connections.ses.identity_management")
	ses := createConnection(t, call, fmt.Sprintf(`{"name":"ses","driver":"ses","settings":{"region":%q,"custom_endpoint":%q,"access_key":%q,"secret":%q}}`,
		sesRegion, fake.URL, sesKeyID, sesSecret))
	r := call("POST", "/pro/ses/credential-sources", fmt.Sprintf(`{"connection_id":%d}`, ses))
	for _, c := range []string{`"in_use":"database"`, `{"source":"database","available":true,"in_use":true,"keys":["access_key","secret"]`,
		`{"source":"environment","available":false,"in_use":false,"keys":[]`} {
		if r.Status != 200 || !bytes.Contains(r.Body, []byte(c)) {
			t.Errorf("%d %s lacks %s", r.Status, r.Body, c)
		}
	}
	if r := call("POST", "/pro/ses/stats", fmt.Sprintf(`{"connection_id":%d}`, ses)); r.Status != 200 || !bytes.Contains(r.Body, []byte(`"max_24_hour_send":200`)) {
		t.Errorf("stats with the stored keys: %d %s", r.Status, r.Body)
	}
	// A wrong stored secret: SES refuses, the answer says so without the secret.
	bad := createConnection(t, call, fmt.Sprintf(`{"name":"ses2","driver":"ses","settings":{"region":%q,"custom_endpoint":%q,"access_key":%q,"secret":"wrong-secret-987"}}`,
		sesRegion, fake.URL, sesKeyID))
	r = call("POST", "/pro/ses/identities", fmt.Sprintf(`{"connection_id":%d}`, bad))
	if r.Status != 422 || !bytes.Contains(r.Body, []byte("refused the connection's credentials")) || bytes.Contains(r.Body, []byte("wrong-secret-987")) {
		t.Errorf("wrong secret: %d %s", r.Status, r.Body)
	}
}
