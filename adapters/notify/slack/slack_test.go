package slack

import (
	"net/http"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify/notifytest"
	"github.com/mailsvc/mailsvc/core"
)

func TestNotifyBodyAndAnswers(t *testing.T) {
	sink, n := notifytest.Start(t, New, "/services/T000/B000/XXXXsecret")
	a := core.Alert{Event: core.EventDeliveryFailed, ConnectionID: 2, ConnectionName: "A&B <smtp>", LogID: 9,
		Title: "Message #9 failed", Message: "550 <user@example.com> rejected", At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	req := notifytest.NotifyOnce(t, n, sink, a, "Slack answered HTTP 200: ok")
	want := `{"text":"Message #9 failed","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Message #9 failed*\n550 \u0026lt;user@example.com\u0026gt; rejected\n\n*Event:* Delivery failed\n*Connection:* A\u0026amp;B \u0026lt;smtp\u0026gt; (#2)\n*Log:* #9\n*Time:* 2025-01-02T03:04:05Z"}}]}`
	if got := string(req.Body); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	if req.Path != "/services/T000/B000/XXXXsecret" || req.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request %s %v", req.Path, req.Header)
	}
	notifytest.CheckFailures(t, n, sink, a, "XXXXsecret", []notifytest.Failure{
		{Status: http.StatusBadRequest, Body: "invalid_payload", WantBodyInError: true},
		{Status: http.StatusForbidden, Body: "invalid_token", WantBodyInError: true},
		{Status: http.StatusNotFound, Body: "no_service", WantBodyInError: true},
		{Status: http.StatusGone, Body: "channel_is_archived", WantBodyInError: true},
		{Status: http.StatusTooManyRequests, Body: "rate_limited", WantTemporary: true, WantBodyInError: true},
		{Status: http.StatusInternalServerError, Body: "rollup_error", WantTemporary: true, WantBodyInError: true},
	})
}
