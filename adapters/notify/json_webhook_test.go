package notify_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/adapters/notify/notifytest"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/webhooksink"
)

func TestWebhookURLType(t *testing.T) {
	ct := notify.WebhookURLType("chat", "Chat", "Hook URL", "Paste it here.", nil)
	f := ct.Field(notify.KeyWebhookURL)
	if ct.Slug != "chat" || ct.Name != "Chat" || f == nil || !f.Required || !f.Sensitive || f.Type != core.FieldURL || f.Label != "Hook URL" || f.Help != "Paste it here." {
		t.Fatalf("channel type %+v, field %+v", ct, f)
	}
	tests := []struct {
		url     string
		wantBad bool
	}{
		{"https://hooks.example.com/x", false},
		{"ftp://hooks.example.com/x", true},
		{"https:///no-host", true},
	}
	for _, tt := range tests {
		errs := ct.Validate(core.Settings{notify.KeyWebhookURL: tt.url})
		if (errs[notify.KeyWebhookURL] != "") != tt.wantBad {
			t.Errorf("Validate(%q) = %v, want bad %v", tt.url, errs, tt.wantBad)
		}
	}
}

func TestJSONWebhook(t *testing.T) {
	env := notifytest.Env()
	type payload struct {
		Event string `json:"event"`
	}
	body := func(a core.Alert) payload { return payload{Event: a.Event} }
	if _, err := notify.NewJSONWebhook(&core.NotificationChannel{Settings: core.Settings{}}, env, "Chat", body); core.ErrorFields(err)[notify.KeyWebhookURL] == "" {
		t.Fatalf("no URL: err = %v, want a field error on %s", err, notify.KeyWebhookURL)
	}
	sink := webhooksink.New()
	defer sink.Close()
	url := sink.URL + "/hooks/hooksecret"
	n, err := notify.NewJSONWebhook(&core.NotificationChannel{Settings: core.Settings{notify.KeyWebhookURL: url}}, env, "Chat", body)
	if err != nil {
		t.Fatal(err)
	}
	a := core.Alert{Event: core.EventQueueStalled}
	tests := []struct {
		name          string
		status        int
		answerBody    string
		custom        func(*notify.Response) string
		wantAnswer    string
		wantErr       string
		wantTemporary bool
	}{
		{name: "answer with a body", status: 200, answerBody: "ok", wantAnswer: "Chat answered HTTP 200: ok"},
		{name: "answer without a body", status: 202, wantAnswer: "Chat answered HTTP 202"},
		{name: "answer naming the URL", status: 200, answerBody: "posted to " + url, wantAnswer: "Chat answered HTTP 200: posted to " + core.Mask},
		{name: "own answer", status: 200, answerBody: "{}", custom: func(r *notify.Response) string { return "custom " + r.Summary() }, wantAnswer: "custom {}"},
		{name: "refused", status: 403, answerBody: "no " + url, wantErr: "Chat answered HTTP 403: no " + core.Mask},
		{name: "rate limited", status: 429, answerBody: "slow down", wantErr: "Chat answered HTTP 429: slow down", wantTemporary: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink.Respond(tt.status, "text/plain", tt.answerBody)
			n.Answer = tt.custom
			answer, err := n.Notify(context.Background(), a)
			if tt.wantErr != "" {
				if err == nil || !strings.HasSuffix(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "hooksecret") || core.IsTemporary(err) != tt.wantTemporary {
					t.Fatalf("Notify = %q, %v (temporary %v); want an error ending %q", answer, err, core.IsTemporary(err), tt.wantErr)
				}
				return
			}
			if err != nil || answer != tt.wantAnswer {
				t.Fatalf("Notify = %q, %v; want %q", answer, err, tt.wantAnswer)
			}
		})
	}
	reqs := sink.Requests()
	if len(reqs) != len(tests) || string(reqs[0].Body) != `{"event":"queue_stalled"}` || reqs[0].Header.Get("Content-Type") != "application/json" || reqs[0].Method != http.MethodPost {
		t.Errorf("%d requests, first %+v", len(reqs), reqs[0])
	}
}
