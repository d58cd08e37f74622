package watch

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/fakes/twiliofake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestSMSAlertAfterThresholdThroughTheBinary runs a twilio channel with a
// threshold of 2 failures in 10 minutes against the Messages API fake:
// the first message refused for good raises no SMS, the second does; its
// first try answers 429 with Retry-After and is retried. The fake checks
// the basic auth and the form; the auth token stays masked and out of the
// service's log.
func TestSMSAlertAfterThresholdThroughTheBinary(t *testing.T) {
	const (
		sid   = "AC0123456789abcdef0123456789abcdef"
		token = "f00dfeedf00dfeedf00dfeedf00dfeed"
	)
	sms := twiliofake.New(sid, token)
	defer sms.Close()
	sink := smtpsink.Start(t, smtpsink.WithRefusedRecipients("gone@example.net", "left@example.net"))
	svc := servicetest.Start(t, t.TempDir(), "MAILSVC_TWILIO_API_URL="+sms.URL, "MAILSVC_ALLOW_PRIVATE_WEBHOOKS=true")
	admin := servicetest.Basic("admin", svc.AdminPassword())

	var conn struct{ ID int64 }
	if err := json.Unmarshal(call(t, svc, admin, "POST", "/connections", fmt.Sprintf(
		`{"name":"relay","driver":"smtp","settings":{"host":"127.0.0.1","port":%d,"encryption":"none","auth":false,"from_email":"shop@example.com"}}`,
		sink.Port())), &conn); err != nil {
		t.Fatal(err)
	}
	call(t, svc, admin, "PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d}`, conn.ID))

	// Bad thresholds are refused per field.
	for body, field := range map[string]string{
		`{"name":"sms","type":"twilio","threshold_count":-1,"settings":{}}`:   "threshold_count",
		`{"name":"sms","type":"twilio","threshold_minutes":-5,"settings":{}}`: "threshold_minutes",
		`{"name":"sms","type":"twilio","threshold_count":3,"threshold_minutes":0,"settings":{"account_sid":"` + sid + `","auth_token":"` + token + `","from":"+15005550006","to":"+447700900123"}}`: "threshold_minutes",
	} {
		r := servicetest.Call(t, "POST", svc.Base+"/notifications", body, admin)
		var e struct {
			Data struct {
				Errors map[string]string `json:"errors"`
			} `json:"data"`
		}
		r.JSON(t, &e)
		if r.Status != 422 || e.Data.Errors[field] == "" {
			t.Fatalf("%s: %d %s, want 422 on %s", body, r.Status, r.Body, field)
		}
	}
	r := servicetest.Call(t, "POST", svc.Base+"/notifications", fmt.Sprintf(
		`{"name":"sms","type":"twilio","events":["delivery_failed"],"threshold_count":2,"threshold_minutes":10,`+
			`"settings":{"account_sid":%q,"auth_token":%q,"from":"+15005550006","to":"+447700900123"}}`, sid, token), admin)
	var ch struct {
		ThresholdCount   int               `json:"threshold_count"`
		ThresholdMinutes int               `json:"threshold_minutes"`
		Settings         map[string]string `json:"settings"`
	}
	r.JSON(t, &ch)
	if r.Status != 201 || ch.ThresholdCount != 2 || ch.ThresholdMinutes != 10 || ch.Settings["auth_token"] != core.Mask || strings.Contains(string(r.Body), token) {
		t.Fatalf("create the twilio channel: %d %s", r.Status, r.Body)
	}

	failed := func() int {
		var logs []struct{ ID int64 }
		json.Unmarshal(call(t, svc, admin, "GET", "/logs?status=failed", ""), &logs)
		return len(logs)
	}
	// The first failure is held.
	if res := svc.Run("From: shop@example.com\nTo: gone@example.net\nSubject: Order 1\n\nhi\n", "sendmail", "-t"); res.Code != 0 {
		t.Fatalf("sendmail: %d %s", res.Code, res.Stderr)
	}
	waitFor(t, "the first message failed", 30*time.Second, func() bool { return failed() == 1 })

	// The second reaches the threshold; Twilio first answers 429.
	sms.FailNext(1, http.StatusTooManyRequests, 1)
	if res := svc.Run("From: shop@example.com\nTo: left@example.net\nSubject: Order 2\n\nhi\n", "sendmail", "-t"); res.Code != 0 {
		t.Fatalf("sendmail: %d %s", res.Code, res.Stderr)
	}
	waitFor(t, "the SMS", 30*time.Second, func() bool { return len(sms.Messages()) == 1 })
	got := sms.Messages()[0]
	if got.To != "+447700900123" || got.From != "+15005550006" || got.AccountSID != sid ||
		!strings.HasPrefix(got.Body, "2 deliveries failed in 10 minutes - relay\n") || len(got.Form) != 3 {
		t.Fatalf("SMS %+v", got)
	}
	// One 429 and one success: the held first failure sent nothing.
	if n := sms.Requests(); n != 2 {
		t.Fatalf("the Messages API got %d requests, want 2 (a 429, then the SMS)", n)
	}
	if strings.Contains(svc.Stderr.String(), token) {
		t.Fatal("the auth token appears in the service's log")
	}
}
