package slack

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify/netguard"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/webhooksink"
)

func TestNotifyBodyAndAnswers(t *testing.T) {
	sink := webhooksink.New()
	defer sink.Close()
	url := sink.URL + "/services/T000/B000/XXXXsecret"
	n, err := New(&core.NotificationChannel{Settings: core.Settings{KeyWebhookURL: url}},
		core.NotifierEnv{HTTPClient: netguard.NewClient(true, 5*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	a := core.Alert{Event: core.EventDeliveryFailed, ConnectionID: 2, ConnectionName: "A&B <smtp>", LogID: 9,
		Title: "Message #9 failed", Message: "550 <user@example.com> rejected", At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	answer, err := n.Notify(context.Background(), a)
	if err != nil || answer != "Slack answered HTTP 200: ok" {
		t.Fatalf("Notify = %q, %v", answer, err)
	}
	reqs, err := sink.Await(1, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"text":"Message #9 failed","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Message #9 failed*\n550 \u0026lt;user@example.com\u0026gt; rejected\n\n*Event:* Delivery failed\n*Connection:* A\u0026amp;B \u0026lt;smtp\u0026gt; (#2)\n*Log:* #9\n*Time:* 2025-01-02T03:04:05Z"}}]}`
	if got := string(reqs[0].Body); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	if reqs[0].Path != "/services/T000/B000/XXXXsecret" || reqs[0].Header.Get("Content-Type") != "application/json" {
		t.Errorf("request %s %v", reqs[0].Path, reqs[0].Header)
	}
	tests := []struct {
		status        int
		body          string
		wantTemporary bool
	}{
		{http.StatusBadRequest, "invalid_payload", false},
		{http.StatusForbidden, "invalid_token", false},
		{http.StatusNotFound, "no_service", false},
		{http.StatusGone, "channel_is_archived", false},
		{http.StatusTooManyRequests, "rate_limited", true},
		{http.StatusInternalServerError, "rollup_error", true},
	}
	for _, tt := range tests {
		sink.FailNextWith(1, tt.status, nil, tt.body)
		_, err := n.Notify(context.Background(), a)
		if err == nil || core.IsTemporary(err) != tt.wantTemporary || !strings.Contains(err.Error(), tt.body) {
			t.Errorf("%d %s: err = %v, temporary %v", tt.status, tt.body, err, core.IsTemporary(err))
		}
		if err != nil && strings.Contains(err.Error(), "XXXXsecret") {
			t.Errorf("error %q shows the webhook URL", err)
		}
	}
}
