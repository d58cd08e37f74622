package protest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/webhooks"
	"github.com/mailsvc/mailsvc/test/fakes/brevofake"
	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/mailersendfake"
	"github.com/mailsvc/mailsvc/test/fakes/mailjetfake"
	"github.com/mailsvc/mailsvc/test/fakes/resendfake"
	"github.com/mailsvc/mailsvc/test/fakes/sparkpostfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestJSONProviderWebhooksThroughTheBinary: for Brevo, SparkPost,
// Mailjet, Resend and MailerSend, a test email goes through the
// provider's fake, then the provider's hard bounce of it, verified the
// provider's way, fails the log and suppresses the address; the same
// call again is a 409 and a call with a wrong secret a 401 that leaves
// the list alone.
func TestJSONProviderWebhooksThroughTheBinary(t *testing.T) {
	const secret = "hook-secret-1"
	resendSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("resend-key-0123456789"))
	svc, call := start(t, t.TempDir())
	type signed func(body string, good bool) http.Header
	basic := func(body string, good bool) http.Header {
		r, _ := http.NewRequest("POST", "/", nil)
		pass := secret
		if !good {
			pass = "guess"
		}
		r.SetBasicAuth("hook", pass)
		return r.Header
	}
	tests := []struct {
		slug     string
		fake     func() *fakeapi.Server
		settings string // beside api_key and base_url
		bounce   func(pid, rcpt string) string
		sign     signed
	}{
		{"brevo", func() *fakeapi.Server { return brevofake.New("xkeysib-hook") }, `"api_key":"xkeysib-hook","webhook_token":"` + secret + `"`,
			func(pid, rcpt string) string {
				return fmt.Sprintf(`{"event":"hard_bounce","email":%q,"message-id":%q,"reason":"unknown user"}`, rcpt, pid)
			},
			func(body string, good bool) http.Header {
				tok := secret
				if !good {
					tok = "guess"
				}
				return http.Header{"Authorization": {"Bearer " + tok}}
			}},
		{"sparkpost", func() *fakeapi.Server { return sparkpostfake.New("sp-hook") }, `"api_key":"sp-hook","webhook_username":"hook","webhook_password":"` + secret + `"`,
			func(pid, rcpt string) string {
				return fmt.Sprintf(`[{"msys":{"message_event":{"type":"bounce","bounce_class":"10","event_id":"e1","transmission_id":%q,"rcpt_to":%q}}}]`, pid, rcpt)
			}, basic},
		{"mailjet", func() *fakeapi.Server { return mailjetfake.New("mj-hook", "mj-secret") }, `"api_key":"mj-hook","api_secret":"mj-secret","webhook_password":"` + secret + `"`,
			func(pid, rcpt string) string {
				return fmt.Sprintf(`{"event":"bounce","time":1,"Message_GUID":"g1","email":%q,"CustomID":%q,"hard_bounce":true}`, rcpt, pid)
			}, basic},
		{"resend", func() *fakeapi.Server { return resendfake.New("re_hook") }, `"api_key":"re_hook","webhook_secret":"` + resendSecret + `"`,
			func(pid, rcpt string) string {
				return fmt.Sprintf(`{"type":"email.bounced","data":{"email_id":%q,"to":[%q],"bounce":{"type":"Permanent"}}}`, pid, rcpt)
			},
			func(body string, good bool) http.Header {
				key := resendSecret
				if !good {
					key = "whsec_" + base64.StdEncoding.EncodeToString([]byte("other"))
				}
				ts := strconv.FormatInt(time.Now().Unix(), 10)
				sig, _ := webhooks.SignSvix(key, "msg_1", ts, []byte(body))
				return http.Header{webhooks.SvixIDHeader: {"msg_1"}, webhooks.SvixTimestampHeader: {ts}, webhooks.SvixSignatureHeader: {sig}}
			}},
		{"mailersend", func() *fakeapi.Server { return mailersendfake.New("mlsn.hook") }, `"api_key":"mlsn.hook","webhook_secret":"` + secret + `"`,
			func(pid, rcpt string) string {
				return fmt.Sprintf(`{"type":"activity.hard_bounced","data":{"id":"a1","email":{"message":{"id":%q},"recipient":{"email":%q}}}}`, pid, rcpt)
			},
			func(body string, good bool) http.Header {
				key := secret
				if !good {
					key = "guess"
				}
				return http.Header{webhooks.MailerSendSignatureHeader: {webhooks.SignMailerSend(key, []byte(body))}}
			}},
	}
	for i, tc := range tests {
		t.Run(tc.slug, func(t *testing.T) {
			fake := tc.fake()
			t.Cleanup(fake.Close)
			id := createConnection(t, call, fmt.Sprintf(`{"name":%q,"driver":%q,"settings":{%s,"base_url":%q,"from_email":"site@example.com"}}`,
				tc.slug, tc.slug, tc.settings, fake.URL))
			rcpt := "gone-" + tc.slug + "@example.com"
			sent := sendTestEmail(t, call, rcpt, id)
			body := tc.bounce(sent.ProviderMessageID, rcpt)
			post := func(h http.Header) servicetest.Response {
				return servicetest.Call(t, "POST", svc.Base+"/pro/webhooks/"+tc.slug, body, func(r *http.Request) {
					for k, v := range h {
						r.Header[k] = v
					}
				})
			}
			if r := post(tc.sign(body, false)); r.Status != 401 {
				t.Fatalf("wrong secret: %d %s", r.Status, r.Body)
			}
			if r := call("GET", "/pro/suppressions", ""); r.Header.Get("X-WP-Total") != strconv.Itoa(i) {
				t.Fatalf("a refused call suppressed: %s", r.Body)
			}
			good := tc.sign(body, true)
			if r := post(good); r.Status != 200 || !strings.Contains(string(r.Body), `"matched":1`) || !strings.Contains(string(r.Body), `"suppressed":1`) {
				t.Fatalf("signed bounce: %d %s", r.Status, r.Body)
			}
			if r := post(good); r.Status != 409 {
				t.Fatalf("replay: %d %s", r.Status, r.Body)
			}
			requireHardBounce(t, call, "log after the bounce", sent.LogID, rcpt)
		})
	}
}
