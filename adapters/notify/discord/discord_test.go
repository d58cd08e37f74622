package discord

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
	sink.Respond(http.StatusOK, "application/json", `{"id":"1122334455","channel_id":"99","content":"x"}`)
	url := sink.URL + "/api/webhooks/123/tokensecret?thread_id=77"
	n, err := New(&core.NotificationChannel{Settings: core.Settings{KeyWebhookURL: url}},
		core.NotifierEnv{HTTPClient: netguard.NewClient(true, 5*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	a := core.Alert{Event: core.EventConnectionRecovered, ConnectionID: 4, ConnectionName: "Gmail",
		Title: "Gmail recovered @everyone", Message: "Health check passed.", Site: "https://example.com",
		At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	answer, err := n.Notify(context.Background(), a)
	if err != nil || answer != "Discord accepted the message (id 1122334455)." {
		t.Fatalf("Notify = %q, %v", answer, err)
	}
	reqs, err := sink.Await(1, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if reqs[0].Path != "/api/webhooks/123/tokensecret" || reqs[0].RawQuery != "thread_id=77&wait=true" {
		t.Errorf("request %s?%s", reqs[0].Path, reqs[0].RawQuery)
	}
	want := `{"content":"Gmail recovered @everyone","embeds":[{"title":"Gmail recovered @everyone","description":"Health check passed.","timestamp":"2025-01-02T03:04:05Z","color":2002494,"fields":[{"name":"Event","value":"Connection recovered","inline":true},{"name":"Connection","value":"Gmail (#4)","inline":true},{"name":"Site","value":"https://example.com","inline":true}]}],"allowed_mentions":{"parse":[]}}`
	if got := string(reqs[0].Body); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	sink.Respond(http.StatusNoContent, "text/plain", "")
	if answer, err := n.Notify(context.Background(), a); err != nil || answer != "Discord answered HTTP 204." {
		t.Errorf("204: Notify = %q, %v", answer, err)
	}
	tests := []struct {
		status        int
		body          string
		wantTemporary bool
	}{
		{http.StatusNotFound, `{"message": "Unknown Webhook", "code": 10015}`, false},
		{http.StatusBadRequest, `{"message": "Cannot send an empty message", "code": 50006}`, false},
		{http.StatusTooManyRequests, `{"message": "You are being rate limited.", "retry_after": 1.5, "global": false}`, true},
		{http.StatusBadGateway, `bad gateway`, true},
	}
	for _, tt := range tests {
		sink.FailNextWith(1, tt.status, http.Header{"Content-Type": {"application/json"}}, tt.body)
		_, err := n.Notify(context.Background(), a)
		if err == nil || core.IsTemporary(err) != tt.wantTemporary {
			t.Errorf("%d: err = %v", tt.status, err)
		}
		if err != nil && strings.Contains(err.Error(), "tokensecret") {
			t.Errorf("error %q shows the webhook URL", err)
		}
	}
}
