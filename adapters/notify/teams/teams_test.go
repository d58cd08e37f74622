package teams

import (
	"net/http"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify/notifytest"
	"github.com/mailsvc/mailsvc/core"
)

func TestNotifyBodyAndAnswers(t *testing.T) {
	sink, n := notifytest.Start(t, New, "/workflows/abc/triggers/manual/paths/invoke?sig=sigsecret")
	sink.Respond(http.StatusAccepted, "text/plain", "")
	a := core.Alert{Event: core.EventQueueStalled, Title: "Queue stalled", Message: "Oldest message queued 31 minutes ago.",
		At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	req := notifytest.NotifyOnce(t, n, sink, a, "Microsoft Teams answered HTTP 202")
	want := `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":{"$schema":"http://adaptivecards.io/schemas/adaptive-card.json","type":"AdaptiveCard","version":"1.4","body":[{"type":"TextBlock","text":"Queue stalled","weight":"Bolder","size":"Medium","wrap":true},{"type":"TextBlock","text":"Oldest message queued 31 minutes ago.","wrap":true},{"type":"FactSet","facts":[{"title":"Event","value":"Queue stalled"},{"title":"Time","value":"2025-01-02T03:04:05Z"}]}]}}]}`
	if got := string(req.Body); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	if req.RawQuery != "sig=sigsecret" {
		t.Errorf("query %q", req.RawQuery)
	}
	notifytest.CheckFailures(t, n, sink, a, "sigsecret", []notifytest.Failure{
		{Status: http.StatusBadRequest},
		{Status: http.StatusForbidden},
		{Status: http.StatusTooManyRequests, WantTemporary: true},
		{Status: http.StatusServiceUnavailable, WantTemporary: true},
	})
}
