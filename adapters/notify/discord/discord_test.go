package discord

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify/notifytest"
	"github.com/mailsvc/mailsvc/core"
)

func TestNotifyBodyAndAnswers(t *testing.T) {
	sink, n := notifytest.Start(t, New, "/api/webhooks/123/tokensecret?thread_id=77")
	sink.Respond(http.StatusOK, "application/json", `{"id":"1122334455","channel_id":"99","content":"x"}`)
	a := core.Alert{Event: core.EventConnectionRecovered, ConnectionID: 4, ConnectionName: "Gmail",
		Title: "Gmail recovered @everyone", Message: "Health check passed.", Site: "https://example.com",
		At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	req := notifytest.NotifyOnce(t, n, sink, a, "Discord accepted the message (id 1122334455).")
	if req.Path != "/api/webhooks/123/tokensecret" || req.RawQuery != "thread_id=77&wait=true" {
		t.Errorf("request %s?%s", req.Path, req.RawQuery)
	}
	want := `{"content":"Gmail recovered @everyone","embeds":[{"title":"Gmail recovered @everyone","description":"Health check passed.","timestamp":"2025-01-02T03:04:05Z","color":2002494,"fields":[{"name":"Event","value":"Connection recovered","inline":true},{"name":"Connection","value":"Gmail (#4)","inline":true},{"name":"Site","value":"https://example.com","inline":true}]}],"allowed_mentions":{"parse":[]}}`
	if got := string(req.Body); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	sink.Respond(http.StatusNoContent, "text/plain", "")
	if answer, err := n.Notify(context.Background(), a); err != nil || answer != "Discord answered HTTP 204." {
		t.Errorf("204: Notify = %q, %v", answer, err)
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	notifytest.CheckFailures(t, n, sink, a, "tokensecret", []notifytest.Failure{
		{Status: http.StatusNotFound, Header: jsonHeader, Body: `{"message": "Unknown Webhook", "code": 10015}`},
		{Status: http.StatusBadRequest, Header: jsonHeader, Body: `{"message": "Cannot send an empty message", "code": 50006}`},
		{Status: http.StatusTooManyRequests, Header: jsonHeader, Body: `{"message": "You are being rate limited.", "retry_after": 1.5, "global": false}`, WantTemporary: true},
		{Status: http.StatusBadGateway, Header: jsonHeader, Body: `bad gateway`, WantTemporary: true},
	})
}
