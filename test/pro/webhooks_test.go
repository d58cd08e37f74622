package protest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/sendgridfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/fakes/snsfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

const topic = "arn:aws:sns:us-east-1:123456789012:ses-events"

// TestWebhookBounceSuppressesThroughTheBinary sends a message through an
// SES connection in SMTP mode backed by a local SMTP sink (the sink's
// queue id becomes the provider message id), then posts an SNS-signed
// SES hard bounce of it: the log fails, the address is suppressed, and a
// new message to the address is not sent. Refused calls touch nothing.
func TestWebhookBounceSuppressesThroughTheBinary(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.WithAuth("ses-user", "ses-pass"))
	sns := snsfake.Start(t, "us-east-1")
	dir := t.TempDir()
	svc, call := start(t, dir, "MAILSVC_SNS_CA_FILE="+sns.WriteCA(t, dir), "MAILSVC_SNS_DIAL_ADDR="+sns.Addr(), "MAILSVC_WORKERS=1")
	hook := func(provider string, body []byte, header http.Header) servicetest.Response {
		t.Helper()
		return servicetest.Call(t, "POST", svc.Base+"/pro/webhooks/"+provider, string(body), func(r *http.Request) {
			for k, v := range header {
				r.Header[k] = v
			}
		})
	}

	// No ses connection holds a topic yet: 401, even for a signed call.
	bounce := func(id string) []byte {
		return sns.Notification(topic, snsfake.SESBounce(id, "gone@example.com", true), time.Now(), "2")
	}
	if r := hook("ses", bounce("x"), nil); r.Status != 401 {
		t.Fatalf("no secret: %d %s", r.Status, r.Body)
	}

	id := createConnection(t, call, fmt.Sprintf(`{"name":"ses-smtp","driver":"ses","settings":{"delivery_mode":"smtp","smtp_host":%q,"smtp_port":%d,"smtp_encryption":"none","smtp_username":"ses-user","smtp_password":"ses-pass","from_email":"site@example.com","webhook_topic_arns":%q}}`,
		sink.Host(), sink.Port(), topic))
	if r := call("PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d}`, id)); r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	sent := sendTestEmail(t, call, "gone@example.com", id)

	// Refusals: each leaves the log delivered and the list empty.
	forged := bounce(sent.ProviderMessageID)
	forged = []byte(strings.Replace(string(forged), "gone@example.com", "other@example.com", 1))
	var untrusted = sns.Notification("arn:aws:sns:us-east-1:1:evil", snsfake.SESBounce(sent.ProviderMessageID, "gone@example.com", true), time.Now(), "2")
	stale := sns.Notification(topic, snsfake.SESBounce(sent.ProviderMessageID, "gone@example.com", true), time.Now().Add(-time.Hour), "1")
	for _, tc := range []struct {
		name     string
		provider string
		body     []byte
		want     int
	}{
		{"forged", "ses", forged, 401},
		{"untrusted topic", "ses", untrusted, 401},
		{"stale", "ses", stale, 401},
		{"malformed", "ses", []byte(`{"Type":`), 400},
		{"no sendgrid secret", "sendgrid", []byte(`[]`), 401},
		{"unknown provider", "nosuch", []byte(`{}`), 404},
		{"too large", "ses", []byte(`{"Message":"` + strings.Repeat("a", 1<<20) + `"}`), 400},
	} {
		if r := hook(tc.provider, tc.body, nil); r.Status != tc.want {
			t.Fatalf("%s: %d %s, want %d", tc.name, r.Status, r.Body, tc.want)
		}
	}
	if r := call("GET", fmt.Sprintf("/logs/%d", sent.LogID), ""); !strings.Contains(string(r.Body), `"status":"delivered"`) {
		t.Fatalf("a refused call moved the log: %s", r.Body)
	}
	if r := call("GET", "/pro/suppressions", ""); r.Header.Get("X-WP-Total") != "0" {
		t.Fatalf("a refused call suppressed: %s", r.Body)
	}

	// The subscription is confirmed at the fake.
	if r := hook("ses", sns.SubscriptionConfirmation(topic, time.Now(), "1"), nil); r.Status != 200 || sns.Confirmations() != 1 {
		t.Fatalf("subscription: %d %s (%d confirmations)", r.Status, r.Body, sns.Confirmations())
	}

	good := bounce(sent.ProviderMessageID)
	r := hook("ses", good, http.Header{"X-Amz-Sns-Message-Type": {"Notification"}})
	var res struct{ Matched, Unknown, Suppressed int }
	r.JSON(t, &res)
	if r.Status != 200 || res.Matched != 1 || res.Suppressed != 1 {
		t.Fatalf("bounce: %d %s", r.Status, r.Body)
	}
	if r := hook("ses", good, nil); r.Status != 409 {
		t.Fatalf("replay: %d %s", r.Status, r.Body)
	}
	if r := hook("ses", sns.Notification(topic, snsfake.SESDelivery("not-ours", "a@example.com"), time.Now(), "2"), nil); r.Status != 200 || !strings.Contains(string(r.Body), `"unknown":1`) {
		t.Fatalf("unknown message id: %d %s", r.Status, r.Body)
	}
	requireHardBounce(t, call, "log after bounce", sent.LogID, "gone@example.com")
	var evs []struct{ Provider, Event string }
	call("GET", fmt.Sprintf("/pro/logs/%d/events", sent.LogID), "").JSON(t, &evs)
	if len(evs) != 1 || evs[0].Provider != "ses" || evs[0].Event != "bounced" {
		t.Fatalf("log events %+v", evs)
	}
	var list []struct {
		ID     int64
		Email  string
		Reason string
	}
	r = call("GET", "/pro/suppressions?search=GONE", "")
	r.JSON(t, &list)
	if len(list) != 1 || list[0].Email != "gone@example.com" || list[0].Reason != "bounce" {
		t.Fatalf("suppressions: %s", r.Body)
	}

	// A queued message to the suppressed address fails without a send.
	before := len(sink.Messages())
	if res := svc.Run("From: site@example.com\nTo: Gone <gone@example.com>\nSubject: again\n\nhello\n", "sendmail", "-t"); res.Code != 0 {
		t.Fatalf("sendmail: %+v", res)
	}
	var failed []struct {
		Status    string `json:"status"`
		LastError string `json:"last_error"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		call("GET", "/logs?status=failed", "").JSON(t, &failed)
		if len(failed) == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	found := false
	for _, f := range failed {
		found = found || strings.Contains(f.LastError, "gone@example.com is on the suppression list")
	}
	if !found || len(sink.Messages()) != before {
		t.Fatalf("suppressed message: %+v, sink %d → %d", failed, before, len(sink.Messages()))
	}

	// The admin routes: bad input, add, remove.
	for _, tc := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/pro/suppressions", `{"email":"not an address"}`, 422},
		{"POST", "/pro/suppressions", `{"email":"a@example.com","reason":"because"}`, 422},
		{"POST", "/pro/suppressions", `{`, 400},
		{"POST", "/pro/suppressions", `{"email":"gone@example.com"}`, 409},
		{"GET", "/pro/suppressions?per_page=1000", "", 422},
		{"DELETE", "/pro/suppressions/nobody@example.com", "", 404},
		{"DELETE", "/pro/suppressions/xyz", "", 404},
		{"GET", "/pro/logs/abc/events", "", 404},
		{"POST", "/pro/suppressions", `{"email":"Manual@Example.com"}`, 201},
		{"DELETE", "/pro/suppressions/gone@example.com", "", 200},
		{"DELETE", fmt.Sprintf("/pro/suppressions/%d", list[0].ID), "", 404},
	} {
		if r := call(tc.method, tc.path, tc.body); r.Status != tc.want {
			t.Fatalf("%s %s %s: %d %s, want %d", tc.method, tc.path, tc.body, r.Status, r.Body, tc.want)
		}
	}
	r = call("GET", "/pro/suppressions", "")
	if r.Header.Get("X-WP-Total") != "1" || !strings.Contains(string(r.Body), `"manual@example.com"`) {
		t.Fatalf("after add and remove: %s", r.Body)
	}
	// The webhook route needs no login, the admin routes do.
	if r := servicetest.Call(t, "GET", svc.Base+"/pro/suppressions", "", nil); r.Status != 401 {
		t.Fatalf("anonymous list: %d", r.Status)
	}
	var conn struct{ Settings map[string]any }
	call("GET", fmt.Sprintf("/connections/%d", id), "").JSON(t, &conn)
	if conn.Settings["webhook_topic_arns"] != topic {
		t.Fatalf("connection settings %v", conn.Settings)
	}
}

// TestSendGridWebhookRewrittenSignatureIsAReplay sends a message through a
// SendGrid connection backed by the SendGrid fake, posts a signed event of
// it, then the same call with its signature rewritten without the key
// (s → n−s): the second is a 409 replay and the log keeps one event.
func TestSendGridWebhookRewrittenSignatureIsAReplay(t *testing.T) {
	const apiKey = "SG.webhook-test-key"
	fake := sendgridfake.New(apiKey)
	t.Cleanup(fake.Close)
	sg, err := sendgridfake.NewEventWebhook()
	if err != nil {
		t.Fatal(err)
	}
	svc, call := start(t, t.TempDir(), "MAILSVC_ALLOW_CUSTOM_ENDPOINTS=true")
	id := createConnection(t, call, fmt.Sprintf(`{"name":"sg","driver":"sendgrid","settings":{"api_key":%q,"base_url":%q,"from_email":"site@example.com","webhook_public_key":%q}}`,
		apiKey, fake.URL, sg.PublicKey()))
	sent := sendTestEmail(t, call, "reader@example.com", id)

	// An open without sg_event_id: only the call's replay id guards it.
	body := []byte(fmt.Sprintf(`[{"event":"open","email":"reader@example.com","sg_message_id":"%s.filter-1","timestamp":%d}]`, sent.ProviderMessageID, time.Now().Unix()))
	header := sg.Header(time.Now(), body)
	post := func(h http.Header) servicetest.Response {
		return servicetest.Call(t, "POST", svc.Base+"/pro/webhooks/sendgrid", string(body), func(r *http.Request) {
			for k, v := range h {
				r.Header[k] = v
			}
		})
	}
	if r := post(header); r.Status != 200 || !strings.Contains(string(r.Body), `"matched":1`) {
		t.Fatalf("signed event: %d %s", r.Status, r.Body)
	}
	rewritten, err := sendgridfake.Malleate(header.Get(sendgridfake.SignatureHeader))
	if err != nil {
		t.Fatal(err)
	}
	replay := header.Clone()
	replay.Set(sendgridfake.SignatureHeader, rewritten)
	if r := post(replay); r.Status != 409 {
		t.Fatalf("replay with a rewritten signature: %d %s", r.Status, r.Body)
	}
	var evs []struct{ Provider, Event string }
	call("GET", fmt.Sprintf("/pro/logs/%d/events", sent.LogID), "").JSON(t, &evs)
	if len(evs) != 1 || evs[0].Event != "opened" {
		t.Fatalf("log events %+v, want one open", evs)
	}
}
