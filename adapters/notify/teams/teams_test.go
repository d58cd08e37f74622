package teams

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
	sink.Respond(http.StatusAccepted, "text/plain", "")
	url := sink.URL + "/workflows/abc/triggers/manual/paths/invoke?sig=sigsecret"
	n, err := New(&core.NotificationChannel{Settings: core.Settings{KeyWebhookURL: url}},
		core.NotifierEnv{HTTPClient: netguard.NewClient(true, 5*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	a := core.Alert{Event: core.EventQueueStalled, Title: "Queue stalled", Message: "Oldest message queued 31 minutes ago.",
		At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	answer, err := n.Notify(context.Background(), a)
	if err != nil || answer != "Microsoft Teams answered HTTP 202" {
		t.Fatalf("Notify = %q, %v", answer, err)
	}
	reqs, err := sink.Await(1, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":{"$schema":"http://adaptivecards.io/schemas/adaptive-card.json","type":"AdaptiveCard","version":"1.4","body":[{"type":"TextBlock","text":"Queue stalled","weight":"Bolder","size":"Medium","wrap":true},{"type":"TextBlock","text":"Oldest message queued 31 minutes ago.","wrap":true},{"type":"FactSet","facts":[{"title":"Event","value":"Queue stalled"},{"title":"Time","value":"2025-01-02T03:04:05Z"}]}]}}]}`
	if got := string(reqs[0].Body); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	if reqs[0].RawQuery != "sig=sigsecret" {
		t.Errorf("query %q", reqs[0].RawQuery)
	}
	tests := []struct {
		status        int
		wantTemporary bool
	}{
		{http.StatusBadRequest, false},
		{http.StatusForbidden, false},
		{http.StatusTooManyRequests, true},
		{http.StatusServiceUnavailable, true},
	}
	for _, tt := range tests {
		sink.FailNext(1, tt.status)
		_, err := n.Notify(context.Background(), a)
		if err == nil || core.IsTemporary(err) != tt.wantTemporary {
			t.Errorf("%d: err = %v", tt.status, err)
		}
		if err != nil && strings.Contains(err.Error(), "sigsecret") {
			t.Errorf("error %q shows the webhook URL", err)
		}
	}
}
