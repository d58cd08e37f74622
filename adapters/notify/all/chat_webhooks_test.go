package all

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify/discord"
	"github.com/mailsvc/mailsvc/adapters/notify/notifytest"
	"github.com/mailsvc/mailsvc/adapters/notify/slack"
	"github.com/mailsvc/mailsvc/adapters/notify/teams"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/webhooksink"
)

// TestChatWebhooks: each chat channel type posts its body as JSON to the
// webhook's path and query, answers the service's answer in words, and
// classifies the failures its service answers, the URL's secret kept out
// of the errors. A row per channel type.
func TestChatWebhooks(t *testing.T) {
	// answer is what a webhook answers.
	type answer struct {
		status            int
		contentType, body string
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		new  func(*core.NotificationChannel, core.NotifierEnv) (core.Notifier, error)
		// url is the webhook's path and query under the sink.
		url string
		// answer is the webhook's answer; nil: the sink's own.
		answer              *answer
		alert               core.Alert
		wantAnswer          string
		wantPath, wantQuery string
		wantBody            string
		// more, when set, checks what else the row's type does.
		more     func(t *testing.T, n core.Notifier, sink *webhooksink.Sink, a core.Alert)
		secret   string
		failures []notifytest.Failure
	}{
		{
			name: "slack", new: slack.New, url: "/services/T000/B000/XXXXsecret",
			alert: core.Alert{Event: core.EventDeliveryFailed, ConnectionID: 2, ConnectionName: "A&B <smtp>", LogID: 9,
				Title: "Message #9 failed", Message: "550 <user@example.com> rejected", At: at},
			wantAnswer: "Slack answered HTTP 200: ok",
			wantPath:   "/services/T000/B000/XXXXsecret",
			wantBody:   `{"text":"Message #9 failed","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"*Message #9 failed*\n550 \u0026lt;user@example.com\u0026gt; rejected\n\n*Event:* Delivery failed\n*Connection:* A\u0026amp;B \u0026lt;smtp\u0026gt; (#2)\n*Log:* #9\n*Time:* 2025-01-02T03:04:05Z"}}]}`,
			secret:     "XXXXsecret",
			failures: []notifytest.Failure{
				{Status: http.StatusBadRequest, Body: "invalid_payload", WantBodyInError: true},
				{Status: http.StatusForbidden, Body: "invalid_token", WantBodyInError: true},
				{Status: http.StatusNotFound, Body: "no_service", WantBodyInError: true},
				{Status: http.StatusGone, Body: "channel_is_archived", WantBodyInError: true},
				{Status: http.StatusTooManyRequests, Body: "rate_limited", WantTemporary: true, WantBodyInError: true},
				{Status: http.StatusInternalServerError, Body: "rollup_error", WantTemporary: true, WantBodyInError: true},
			},
		},
		{
			name: "teams", new: teams.New, url: "/workflows/abc/triggers/manual/paths/invoke?sig=sigsecret",
			answer: &answer{http.StatusAccepted, "text/plain", ""},
			alert: core.Alert{Event: core.EventQueueStalled, Title: "Queue stalled", Message: "Oldest message queued 31 minutes ago.",
				At: at},
			wantAnswer: "Microsoft Teams answered HTTP 202",
			wantPath:   "/workflows/abc/triggers/manual/paths/invoke", wantQuery: "sig=sigsecret",
			wantBody: `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":{"$schema":"http://adaptivecards.io/schemas/adaptive-card.json","type":"AdaptiveCard","version":"1.4","body":[{"type":"TextBlock","text":"Queue stalled","weight":"Bolder","size":"Medium","wrap":true},{"type":"TextBlock","text":"Oldest message queued 31 minutes ago.","wrap":true},{"type":"FactSet","facts":[{"title":"Event","value":"Queue stalled"},{"title":"Time","value":"2025-01-02T03:04:05Z"}]}]}}]}`,
			secret:   "sigsecret",
			failures: []notifytest.Failure{
				{Status: http.StatusBadRequest},
				{Status: http.StatusForbidden},
				{Status: http.StatusTooManyRequests, WantTemporary: true},
				{Status: http.StatusServiceUnavailable, WantTemporary: true},
			},
		},
		{
			name: "discord", new: discord.New, url: "/api/webhooks/123/tokensecret?thread_id=77",
			answer: &answer{http.StatusOK, "application/json", `{"id":"1122334455","channel_id":"99","content":"x"}`},
			alert: core.Alert{Event: core.EventConnectionRecovered, ConnectionID: 4, ConnectionName: "Gmail",
				Title: "Gmail recovered @everyone", Message: "Health check passed.", Site: "https://example.com", At: at},
			wantAnswer: "Discord accepted the message (id 1122334455).",
			wantPath:   "/api/webhooks/123/tokensecret", wantQuery: "thread_id=77&wait=true",
			wantBody: `{"content":"Gmail recovered @everyone","embeds":[{"title":"Gmail recovered @everyone","description":"Health check passed.","timestamp":"2025-01-02T03:04:05Z","color":2002494,"fields":[{"name":"Event","value":"Connection recovered","inline":true},{"name":"Connection","value":"Gmail (#4)","inline":true},{"name":"Site","value":"https://example.com","inline":true}]}],"allowed_mentions":{"parse":[]}}`,
			more: func(t *testing.T, n core.Notifier, sink *webhooksink.Sink, a core.Alert) {
				sink.Respond(http.StatusNoContent, "text/plain", "")
				if answer, err := n.Notify(context.Background(), a); err != nil || answer != "Discord answered HTTP 204." {
					t.Errorf("204: Notify = %q, %v", answer, err)
				}
			},
			secret: "tokensecret",
			failures: []notifytest.Failure{
				{Status: http.StatusNotFound, Header: jsonHeader, Body: `{"message": "Unknown Webhook", "code": 10015}`},
				{Status: http.StatusBadRequest, Header: jsonHeader, Body: `{"message": "Cannot send an empty message", "code": 50006}`},
				{Status: http.StatusTooManyRequests, Header: jsonHeader, Body: `{"message": "You are being rate limited.", "retry_after": 1.5, "global": false}`, WantTemporary: true},
				{Status: http.StatusBadGateway, Header: jsonHeader, Body: `bad gateway`, WantTemporary: true},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink, n := notifytest.Start(t, tc.new, tc.url)
			if tc.answer != nil {
				sink.Respond(tc.answer.status, tc.answer.contentType, tc.answer.body)
			}
			req := notifytest.NotifyOnce(t, n, sink, tc.alert, tc.wantAnswer)
			if req.Path != tc.wantPath || req.RawQuery != tc.wantQuery || req.Header.Get("Content-Type") != "application/json" {
				t.Errorf("request %s?%s %v", req.Path, req.RawQuery, req.Header)
			}
			if got := string(req.Body); got != tc.wantBody {
				t.Errorf("body\n got %s\nwant %s", got, tc.wantBody)
			}
			if tc.more != nil {
				tc.more(t, n, sink, tc.alert)
			}
			notifytest.CheckFailures(t, n, sink, tc.alert, tc.secret, tc.failures)
		})
	}
}
