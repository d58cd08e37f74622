package watch

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/telegramfake"
	"github.com/mailsvc/mailsvc/test/fakes/webhooksink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestNotificationRoutes drives every Notifications route through the
// built binary: Telegram chat detection and a test alert against the Bot
// API fake, a Slack channel tested against a webhook sink (accepted, then
// refused), update with the secret kept, bulk disable, delete.
func TestNotificationRoutes(t *testing.T) {
	const bot = "4242:AAE-test-bot-secret"
	tg := telegramfake.New(bot)
	defer tg.Close()
	tg.AddMessage(telegramfake.Chat{ID: 1001, Type: "private", FirstName: "Ann", Username: "ann"}, "/start")
	tg.AddMyChatMember(telegramfake.Chat{ID: -2002, Type: "supergroup", Title: "Ops"}, "left", "member")
	tg.AddChannelPost(telegramfake.Chat{ID: -3003, Type: "channel", Title: "Status", Username: "status"}, "hello")
	slack := webhooksink.New()
	defer slack.Close()

	svc := servicetest.Start(t, t.TempDir(), "MAILSVC_TELEGRAM_API_URL="+tg.URL, "MAILSVC_ALLOW_PRIVATE_WEBHOOKS=true")
	admin := servicetest.Basic("admin", svc.AdminPassword())
	do := func(method, path, body string) servicetest.Response {
		return servicetest.Call(t, method, svc.Base+path, body, admin)
	}

	// Chat detection: every kind of chat, the token never echoed.
	r := do("POST", "/notifications/telegram/detect-chats", fmt.Sprintf(`{"bot_token":%q}`, bot))
	var detected struct {
		Chats []struct {
			ID   int64  `json:"id"`
			Type string `json:"type"`
		} `json:"chats"`
	}
	r.JSON(t, &detected)
	kinds := map[int64]string{}
	for _, c := range detected.Chats {
		kinds[c.ID] = c.Type
	}
	if r.Status != 200 || kinds[1001] != "private" || kinds[-2002] != "supergroup" || kinds[-3003] != "channel" {
		t.Fatalf("detect-chats: %d %s", r.Status, r.Body)
	}
	r = do("POST", "/notifications/telegram/detect-chats", `{"bot_token":"4242:wrong"}`)
	if r.Status != 422 || r.Code() != core.EINVALID || strings.Contains(string(r.Body), "4242:wrong") {
		t.Fatalf("detect-chats with a refused token: %d %s", r.Status, r.Body)
	}

	// A Telegram channel, saved, then tested.
	r = do("POST", "/notifications", fmt.Sprintf(`{"name":"ops chat","type":"telegram","events":["delivery_failed"],"settings":{"bot_token":%q,"chat_id":"-2002"}}`, bot))
	var tgCh struct {
		ID       int64          `json:"id"`
		Settings map[string]any `json:"settings"`
	}
	r.JSON(t, &tgCh)
	if r.Status != 201 || tgCh.Settings["bot_token"] != core.Mask || strings.Contains(string(r.Body), "AAE-test-bot-secret") {
		t.Fatalf("create telegram channel: %d %s", r.Status, r.Body)
	}
	r = do("POST", "/notifications/test", fmt.Sprintf(`{"id":%d}`, tgCh.ID))
	if r.Status != 200 || !strings.Contains(string(r.Body), `"success":true`) {
		t.Fatalf("test the telegram channel: %d %s", r.Status, r.Body)
	}
	if sent := tg.Messages(); len(sent) != 1 || sent[0].ChatID != "-2002" || sent[0].Text == "" {
		t.Fatalf("Telegram got %+v", sent)
	}

	// An unsaved Slack channel: accepted, then refused with the reason.
	slackBody := fmt.Sprintf(`{"channel":{"name":"slack","type":"slack","settings":{"webhook_url":%q}}}`, slack.URL+"/services/T0/B0/secret")
	r = do("POST", "/notifications/test", slackBody)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"success":true`) || len(slack.Requests()) != 1 {
		t.Fatalf("test an unsaved slack channel: %d %s (%d requests)", r.Status, r.Body, len(slack.Requests()))
	}
	slack.FailNext(1, http.StatusForbidden)
	r = do("POST", "/notifications/test", slackBody)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"success":false`) || strings.Contains(string(r.Body), "secret") {
		t.Fatalf("test a refusing slack channel: %d %s", r.Status, r.Body)
	}
	if r := do("GET", "/notifications", ""); r.Status != 200 || strings.Count(string(r.Body), `"id"`) != 1 {
		t.Fatalf("an unsaved channel was stored: %s", r.Body)
	}

	// Update keeps the masked secret; bulk disables; delete removes.
	r = do("PUT", fmt.Sprintf("/notifications/%d", tgCh.ID), `{"name":"renamed","settings":{"bot_token":"********","chat_id":"1001"}}`)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"renamed"`) {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	r = do("POST", "/notifications/test", fmt.Sprintf(`{"id":%d}`, tgCh.ID))
	if sent := tg.Messages(); r.Status != 200 || len(sent) != 2 || sent[1].ChatID != "1001" {
		t.Fatalf("after the update the stored token no longer works: %s, %+v", r.Body, sent)
	}
	r = do("POST", "/notifications/bulk", fmt.Sprintf(`{"action":"disable","ids":[%d]}`, tgCh.ID))
	if r.Status != 200 || !strings.Contains(string(r.Body), `"count":1`) {
		t.Fatalf("bulk disable: %d %s", r.Status, r.Body)
	}
	var list []struct {
		IsActive bool `json:"is_active"`
	}
	r = do("GET", "/notifications", "")
	r.JSON(t, &list)
	if len(list) != 1 || list[0].IsActive {
		t.Fatalf("after bulk disable: %s", r.Body)
	}
	for _, bad := range []struct{ method, path, body string }{
		{"POST", "/notifications/bulk", `{"action":"explode","ids":[1]}`},
		{"PUT", "/notifications/9999", `{"name":"x"}`},
		{"DELETE", "/notifications/9999", ""},
		{"POST", "/notifications/test", `{"id":9999}`},
		{"POST", "/notifications/telegram/detect-chats", `{}`},
		{"PUT", fmt.Sprintf("/notifications/%d", tgCh.ID), `{"settings":`},
	} {
		r := do(bad.method, bad.path, bad.body)
		if r.Status != 400 && r.Status != 404 && r.Status != 422 {
			t.Fatalf("%s %s %s: %d %s", bad.method, bad.path, bad.body, r.Status, r.Body)
		}
	}
	if r := do("DELETE", fmt.Sprintf("/notifications/%d", tgCh.ID), ""); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := do("GET", "/notifications", ""); strings.TrimSpace(string(r.Body)) != "[]" {
		t.Fatalf("after delete: %s", r.Body)
	}
	if strings.Contains(svc.Stderr.String(), "AAE-test-bot-secret") {
		t.Fatal("the bot token appears in the service's log")
	}
}
