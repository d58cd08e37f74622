package protest

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/webhooks"
	"github.com/mailsvc/mailsvc/test/fakes/elasticemailfake"
	"github.com/mailsvc/mailsvc/test/fakes/mandrillfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestElasticEmailAndMandrillWebhooksThroughTheBinary sends a test email
// through an Elastic Email and a Mandrill connection backed by their
// fakes (the credentials check first: it sends nothing), then calls the
// webhook route the provider's way with a hard bounce of it: Elastic
// Email's GET notification with the connection's token, Mandrill's
// signed form POST (after its HEAD check of the URL). The log fails and
// the address is suppressed; the same call again is a 409, a wrong token
// or signature a 401 that changes nothing.
func TestElasticEmailAndMandrillWebhooksThroughTheBinary(t *testing.T) {
	const (
		eeKey, eeToken = "ee-binary-key", "ee-binary-token"
		mdKey, mdHook  = "md-binary-key", "md-binary-hook-key"
		mdURL          = "https://shop.example.com/wp-json/mailsvc/v1/pro/webhooks/mandrill"
	)
	ee := elasticemailfake.New(eeKey)
	t.Cleanup(ee.Close)
	md := mandrillfake.New(mdKey)
	t.Cleanup(md.Close)
	svc, call := start(t, t.TempDir())
	route := svc.Base + "/pro/webhooks/"

	elastic := func(token string, id string) func() servicetest.Response {
		return func() servicetest.Response {
			q := url.Values{"status": {"Error"}, "category": {"NoMailbox"}, "to": {"gone@example.com"}, "messageid": {id}, "token": {token}}
			return servicetest.Call(t, "GET", route+"elasticemail?"+q.Encode(), "", nil)
		}
	}
	mandrill := func(key string, id string) func() servicetest.Response {
		return func() servicetest.Response {
			events := fmt.Sprintf(`[{"event":"hard_bounce","_id":%q,"ts":%d,"msg":{"_id":%q,"email":"gone@example.com","bounce_description":"bad_mailbox"}}]`, id, time.Now().Unix(), id)
			form := url.Values{"mandrill_events": {events}}
			return servicetest.Call(t, "POST", route+"mandrill", form.Encode(), func(r *http.Request) {
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				r.Header.Set(webhooks.MandrillSignatureHeader, webhooks.SignMandrill(key, mdURL, form))
			})
		}
	}
	tests := []struct {
		provider string
		settings string
		good     func(id string) func() servicetest.Response
		forged   func(id string) func() servicetest.Response
	}{
		{"elasticemail", fmt.Sprintf(`{"api_key":%q,"base_url":%q,"from_email":"site@example.com","webhook_token":%q}`, eeKey, ee.URL, eeToken),
			func(id string) func() servicetest.Response { return elastic(eeToken, id) },
			func(id string) func() servicetest.Response { return elastic("guess", id) }},
		{"mandrill", fmt.Sprintf(`{"api_key":%q,"base_url":%q,"from_email":"site@example.com","webhook_key":%q,"webhook_url":%q}`, mdKey, md.URL, mdHook, mdURL),
			func(id string) func() servicetest.Response { return mandrill(mdHook, id) },
			func(id string) func() servicetest.Response { return mandrill("guess", id) }},
	}
	for _, tc := range tests {
		t.Run(tc.provider, func(t *testing.T) {
			id := createConnection(t, call, fmt.Sprintf(`{"name":%q,"driver":%q,"settings":%s}`, tc.provider, tc.provider, tc.settings))
			if r := call("POST", fmt.Sprintf("/connections/%d/verify-api-credentials", id), `{}`); r.Status != 200 {
				t.Fatalf("verify-api-credentials: %d %s", r.Status, r.Body)
			}
			sent := sendTestEmail(t, call, "gone@example.com", id)
			if r := tc.forged(sent.ProviderMessageID)(); r.Status != 401 {
				t.Fatalf("forged call: %d %s", r.Status, r.Body)
			}
			if r := call("GET", fmt.Sprintf("/logs/%d", sent.LogID), ""); !strings.Contains(string(r.Body), `"status":"delivered"`) {
				t.Fatalf("a refused call moved the log: %s", r.Body)
			}
			good := tc.good(sent.ProviderMessageID)
			if r := good(); r.Status != 200 || !strings.Contains(string(r.Body), `"matched":1`) || !strings.Contains(string(r.Body), `"suppressed":1`) {
				t.Fatalf("bounce: %d %s", r.Status, r.Body)
			}
			if r := good(); r.Status != 409 {
				t.Fatalf("replay: %d %s", r.Status, r.Body)
			}
			requireHardBounce(t, call, "log after the bounce", sent.LogID, "gone@example.com")
			r := call("GET", "/pro/suppressions?search=gone@example.com", "")
			if !strings.Contains(string(r.Body), `"reason":"bounce"`) {
				t.Fatalf("suppressions: %s", r.Body)
			}
			if r := call("DELETE", "/pro/suppressions/gone@example.com", ""); r.Status != 200 {
				t.Fatalf("remove the suppression: %d %s", r.Status, r.Body)
			}
		})
	}
	if r := servicetest.Call(t, "HEAD", route+"mandrill", "", nil); r.Status != 200 {
		t.Errorf("HEAD, Mandrill's URL check: %d", r.Status)
	}
	if r := servicetest.Call(t, "GET", route+"sendgrid", "", nil); r.Status != 404 {
		t.Errorf("GET of a provider that posts: %d %s", r.Status, r.Body)
	}
}
