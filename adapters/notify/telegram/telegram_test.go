package telegram

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/telegramfake"
)

const token = "123456789:AAHsecret-token_value"

var alert = core.Alert{Event: core.EventDeliveryFailed, ConnectionID: 2, ConnectionName: "SMTP <relay> & co",
	Title: "Message #9 failed", Message: "550 <a@example.com> rejected & bounced", LogID: 9,
	At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}

func notifier(t *testing.T, api, tok, chatID string) core.Notifier {
	t.Helper()
	n, err := New(&core.NotificationChannel{Settings: core.Settings{KeyBotToken: tok, KeyChatID: chatID}},
		core.NotifierEnv{TelegramAPI: api})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNotifySendsEscapedHTML(t *testing.T) {
	fake := telegramfake.New(token)
	defer fake.Close()
	tests := []struct {
		chatID     string
		wantAnswer string
	}{
		{"-1001234567890", "Telegram accepted the message (message_id 1) in chat Alerts."},
		{"@mailsvc_alerts", "Telegram accepted the message (message_id 2) in chat @mailsvc_alerts."},
	}
	for i, tt := range tests {
		answer, err := notifier(t, fake.URL+"/", token, tt.chatID).Notify(context.Background(), alert)
		if err != nil || answer != tt.wantAnswer {
			t.Fatalf("%s: Notify = %q, %v", tt.chatID, answer, err)
		}
		msgs := fake.Messages()
		if len(msgs) != i+1 {
			t.Fatalf("%d messages recorded", len(msgs))
		}
		m := msgs[i]
		wantText := "<b>Message #9 failed</b>\n550 &lt;a@example.com&gt; rejected &amp; bounced\n" +
			"\n<b>Event:</b> Delivery failed\n<b>Connection:</b> SMTP &lt;relay&gt; &amp; co (#2)\n<b>Log:</b> #9\n<b>Time:</b> 2025-01-02T03:04:05Z"
		if m.ChatID != tt.chatID || m.Text != wantText || m.ParseMode != "HTML" || !m.DisableWebPagePreview {
			t.Errorf("message = %+v\nwant text %q", m, wantText)
		}
	}
}

func TestTextFitsTelegramLimit(t *testing.T) {
	fake := telegramfake.New(token)
	defer fake.Close()
	long := alert
	long.Message = strings.Repeat("<&>", 3000)
	text := Text(long)
	if n := len([]rune(text)); n > textLimit {
		t.Fatalf("text has %d characters", n)
	}
	if !strings.Contains(text, "<b>Time:</b>") {
		t.Error("the facts were cut")
	}
	if _, err := notifier(t, fake.URL, token, "42").Notify(context.Background(), long); err != nil {
		t.Fatalf("Telegram refused the cut text: %v", err)
	}
}

func TestNotifyClassifiesTelegramErrors(t *testing.T) {
	fake := telegramfake.New(token)
	defer fake.Close()
	tests := []struct {
		name          string
		setup         func()
		tok           string
		wantTemporary bool
		wantWait      time.Duration
		wantText      string
	}{
		{"flood control", func() { fake.FailNext(1, 429, 12) }, token, true, 12 * time.Second, "Too Many Requests"},
		{"server error", func() { fake.FailNext(1, 502, 0) }, token, true, 0, "502"},
		{"chat not found", func() { fake.FailNext(1, 400, 0) }, token, false, 0, "chat not found"},
		{"kicked", func() { fake.FailNext(1, 403, 0) }, token, false, 0, "kicked"},
		{"unknown token", func() {}, "999:AAHunknown-token", false, 0, "does not accept this bot token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			_, err := notifier(t, fake.URL, tt.tok, "42").Notify(context.Background(), alert)
			if err == nil {
				t.Fatal("Notify succeeded")
			}
			if core.IsTemporary(err) != tt.wantTemporary || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("err = %v (temporary %v)", err, core.IsTemporary(err))
			}
			if wait, _ := notify.RetryAfter(err); wait != tt.wantWait {
				t.Errorf("RetryAfter = %v, want %v", wait, tt.wantWait)
			}
			if strings.Contains(err.Error(), tt.tok) || strings.Contains(err.Error(), "secret-token") {
				t.Errorf("error %q shows the bot token", err)
			}
		})
	}
	// A dead API base: temporary, and the token (in the request path) is
	// not in the error.
	dead := telegramfake.New(token)
	dead.Close()
	_, err := notifier(t, dead.URL, token, "42").Notify(context.Background(), alert)
	if err == nil || !core.IsTemporary(err) || strings.Contains(err.Error(), "secret-token") {
		t.Errorf("dead API: err = %v", err)
	}
}

func TestDetectChats(t *testing.T) {
	fake := telegramfake.New(token)
	defer fake.Close()
	private := telegramfake.Chat{ID: 7, Type: "private", FirstName: "Ada", LastName: "Lovelace", Username: "ada"}
	group := telegramfake.Chat{ID: -4001, Type: "group", Title: "Ops"}
	super := telegramfake.Chat{ID: -1001234567890, Type: "supergroup", Title: "Ops Team", Username: "opsteam"}
	channel := telegramfake.Chat{ID: -1009876543210, Type: "channel", Title: "Alerts", Username: "mailsvc_alerts"}
	left := telegramfake.Chat{ID: -4002, Type: "group", Title: "Old group"}
	fake.AddMyChatMember(group, "left", "member")
	fake.AddMessage(private, "/start")
	fake.AddMessage(group, "hello bot")
	fake.AddMessage(super, "hi")
	fake.AddEditedMessage(super, "hi!")
	fake.AddMyChatMember(channel, "left", "administrator")
	fake.AddChannelPost(channel, "first post")
	fake.AddMessage(private, "again")
	fake.AddMessage(left, "hi")
	fake.AddMyChatMember(left, "member", "kicked")

	chats, err := DetectChats(context.Background(), nil, fake.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	want := []Chat{
		{ID: -4001, Type: "group", Title: "Ops"},
		{ID: 7, Type: "private", Title: "Ada Lovelace", Username: "ada"},
		{ID: -1001234567890, Type: "supergroup", Title: "Ops Team", Username: "opsteam"},
		{ID: -1009876543210, Type: "channel", Title: "Alerts", Username: "mailsvc_alerts"},
	}
	if !reflect.DeepEqual(chats, want) {
		t.Errorf("chats\n got %+v\nwant %+v", chats, want)
	}
	allowed := fake.AllowedUpdates()
	for _, kind := range []string{"message", "channel_post", "my_chat_member"} {
		found := false
		for _, a := range allowed {
			found = found || a == kind
		}
		if !found {
			t.Errorf("allowed_updates %v lacks %s", allowed, kind)
		}
	}
	// The updates are not confirmed: a second call sees the same chats.
	again, err := DetectChats(context.Background(), nil, fake.URL, token)
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("second call = %+v, %v", again, err)
	}
}

func TestDetectChatsErrors(t *testing.T) {
	fake := telegramfake.New(token)
	defer fake.Close()
	empty, err := DetectChats(context.Background(), nil, fake.URL, token)
	if err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("no updates: %#v, %v (want an empty list)", empty, err)
	}
	tests := []struct {
		name          string
		tok           string
		setup         func()
		wantTokenErr  bool
		wantTemporary bool
	}{
		{"unknown token", "999:AAHunknown-token", func() {}, true, false},
		{"malformed token", "not-a-token-secret", func() {}, true, false},
		{"webhook set", token, func() { fake.SetWebhook(true) }, false, false},
		{"flood", token, func() { fake.FailNext(1, 429, 3) }, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			defer fake.SetWebhook(false)
			_, err := DetectChats(context.Background(), nil, fake.URL, tt.tok)
			if err == nil {
				t.Fatal("DetectChats succeeded")
			}
			if errors.Is(err, ErrBotToken) != tt.wantTokenErr || core.IsTemporary(err) != tt.wantTemporary {
				t.Errorf("err = %v: token error %v, temporary %v", err, errors.Is(err, ErrBotToken), core.IsTemporary(err))
			}
			if tt.wantTokenErr {
				if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)[KeyBotToken] == "" {
					t.Errorf("err = %v, want a validation error on %s", err, KeyBotToken)
				}
			}
			if strings.Contains(err.Error(), tt.tok) {
				t.Errorf("error %q shows the bot token", err)
			}
		})
	}
}
