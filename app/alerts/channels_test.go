package alerts_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/alerts"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

func TestChannelValidation(t *testing.T) {
	long := strings.Repeat("n", 192)
	tests := []struct {
		name  string
		in    alerts.ChannelInput
		field string
	}{
		{"name missing", alerts.ChannelInput{Type: ptr("test-recorder"), Settings: map[string]any{"sink": "s"}}, "name"},
		{"name blank", alerts.ChannelInput{Name: ptr("  "), Type: ptr("test-recorder"), Settings: map[string]any{"sink": "s"}}, "name"},
		{"name too long", alerts.ChannelInput{Name: &long, Type: ptr("test-recorder"), Settings: map[string]any{"sink": "s"}}, "name"},
		{"type missing", alerts.ChannelInput{Name: ptr("n")}, "type"},
		{"type unknown", alerts.ChannelInput{Name: ptr("n"), Type: ptr("pigeon")}, "type"},
		{"event unknown", alerts.ChannelInput{Name: ptr("n"), Type: ptr("test-recorder"), Events: &[]string{"connection_down", "lunch_time"}, Settings: map[string]any{"sink": "s"}}, "events"},
		{"required setting missing", alerts.ChannelInput{Name: ptr("n"), Type: ptr("test-recorder")}, "sink"},
		{"unknown setting", alerts.ChannelInput{Name: ptr("n"), Type: ptr("test-recorder"), Settings: map[string]any{"sink": "s", "colour": "red"}}, "colour"},
		{"setting of wrong type", alerts.ChannelInput{Name: ptr("n"), Type: ptr("test-recorder"), Settings: map[string]any{"sink": "s", "connection_id": "seven"}}, "connection_id"},
		{"url not http", alerts.ChannelInput{Name: ptr("n"), Type: ptr("test-recorder"), Settings: map[string]any{"sink": "s", "hook_url": "ftp://example.com/x"}}, "hook_url"},
		{"url to loopback", alerts.ChannelInput{Name: ptr("n"), Type: ptr("test-recorder"), Settings: map[string]any{"sink": "s", "hook_url": "http://127.0.0.1:8080/hook-secret"}}, "hook_url"},
		{"url to private", alerts.ChannelInput{Name: ptr("n"), Type: ptr("test-recorder"), Settings: map[string]any{"sink": "s", "hook_url": "https://10.1.2.3/hook-secret"}}, "hook_url"},
		{"url to link-local", alerts.ChannelInput{Name: ptr("n"), Type: ptr("test-recorder"), Settings: map[string]any{"sink": "s", "hook_url": "http://169.254.169.254/latest"}}, "hook_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			_, err := f.channels.Create(context.Background(), tt.in)
			if core.ErrorCode(err) != core.EINVALID {
				t.Fatalf("Create error %v, want validation_error", err)
			}
			fields := core.ErrorFields(err)
			if fields[tt.field] == "" {
				t.Fatalf("errors %v do not name %q", fields, tt.field)
			}
			if strings.Contains(err.Error(), "hook-secret") {
				t.Fatalf("error %q quotes the URL", err)
			}
			if list, _ := f.store.FindNotificationChannels(context.Background()); len(list) != 0 {
				t.Fatalf("an invalid channel was stored: %+v", list[0])
			}
		})
	}
}

func TestChannelSecretsEncryptedAndMasked(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	r := newRecorder(t)
	c, err := f.channels.Create(ctx, alerts.ChannelInput{
		Name: ptr("Ops"), Type: ptr("test-recorder"), Events: &[]string{"connection_down", "connection_down"},
		Settings: map[string]any{"sink": r.name, "token": "tok-123456", "hook_url": "https://hooks.example.com/T0/secret-path"},
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if !c.IsActive || !reflect.DeepEqual(c.Events, []string{"connection_down"}) {
		t.Fatalf("created %+v; want active with events deduplicated", c)
	}
	for _, k := range []string{"token", "hook_url"} {
		if c.Settings[k] != core.Mask {
			t.Errorf("answer shows %s = %v, want the mask", k, c.Settings[k])
		}
	}
	if c.Settings["sink"] != r.name {
		t.Errorf("a plain setting was masked: %v", c.Settings["sink"])
	}
	raw := f.store.Raw(c.ID)
	cipher := apptest.Cipher{Key: "k"}
	for k, want := range map[string]string{"token": "tok-123456", "hook_url": "https://hooks.example.com/T0/secret-path"} {
		stored, _ := raw.Settings[k].(string)
		if !cipher.IsEncrypted(stored) {
			t.Fatalf("stored %s = %q is not ciphertext", k, stored)
		}
		if plain, err := cipher.Decrypt(stored); err != nil || plain != want {
			t.Fatalf("stored %s decrypts to %q, %v", k, plain, err)
		}
	}

	// A masked value sent back keeps the secret; nil fields stay as they are.
	up, err := f.channels.Update(ctx, c.ID, alerts.ChannelInput{Settings: map[string]any{"token": core.Mask, "hook_url": core.Mask}})
	if err != nil {
		t.Fatalf("Update with masks: %v", err)
	}
	if up.Name != "Ops" || !reflect.DeepEqual(up.Events, []string{"connection_down"}) {
		t.Fatalf("partial update changed untouched fields: %+v", up)
	}
	if plain, _ := cipher.Decrypt(f.store.Raw(c.ID).Settings.String("token")); plain != "tok-123456" {
		t.Fatalf("mask replaced the stored token with %q", plain)
	}
	// A new value replaces it; null removes it; events [] means all.
	if _, err := f.channels.Update(ctx, c.ID, alerts.ChannelInput{Events: &[]string{}, Settings: map[string]any{"token": "tok-new", "hook_url": nil}}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	raw = f.store.Raw(c.ID)
	if plain, _ := cipher.Decrypt(raw.Settings.String("token")); plain != "tok-new" {
		t.Fatalf("token after update = %q", plain)
	}
	if _, ok := raw.Settings["hook_url"]; ok || len(raw.Events) != 0 {
		t.Fatalf("after update stored %+v; want hook_url removed and no events", raw)
	}
	// Every answer is masked.
	list, err := f.channels.List(ctx)
	if err != nil || len(list) != 1 || list[0].Settings["token"] != core.Mask {
		t.Fatalf("List = %+v, %v; want the channel with its token masked", list, err)
	}
	got, err := f.channels.Get(ctx, c.ID)
	if err != nil || got.Settings["token"] != core.Mask {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	// A new type starts from fresh settings.
	_, err = f.channels.Update(ctx, c.ID, alerts.ChannelInput{Type: ptr("test-room")})
	if fields := core.ErrorFields(err); fields["room"] == "" || fields["token"] != "" {
		t.Fatalf("type change kept the old settings: %v", err)
	}
	if _, err := f.channels.Update(ctx, 999, alerts.ChannelInput{Name: ptr("x")}); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("Update of a missing channel: %v, want not_found", err)
	}
}

func TestChannelDeleteAndBulk(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	r := newRecorder(t)
	a, b, c := f.add(t, r, nil, nil), f.add(t, r, nil, nil), f.add(t, r, nil, nil)

	tests := []struct {
		action string
		ids    []int64
		want   int
		active map[int64]bool
	}{
		{"disable", []int64{a.ID, b.ID, 999}, 2, map[int64]bool{a.ID: false, b.ID: false, c.ID: true}},
		{"enable", []int64{b.ID, b.ID}, 1, map[int64]bool{a.ID: false, b.ID: true, c.ID: true}},
		{"delete", []int64{a.ID, c.ID}, 2, map[int64]bool{b.ID: true}},
	}
	for _, tt := range tests {
		n, err := f.channels.Bulk(ctx, tt.action, tt.ids)
		if err != nil || n != tt.want {
			t.Fatalf("Bulk(%s) = %d, %v; want %d", tt.action, n, err, tt.want)
		}
		list, _ := f.channels.List(ctx)
		got := map[int64]bool{}
		for _, ch := range list {
			got[ch.ID] = ch.IsActive
		}
		if !reflect.DeepEqual(got, tt.active) {
			t.Fatalf("after %s: %v, want %v", tt.action, got, tt.active)
		}
	}
	for _, bad := range []struct {
		action string
		ids    []int64
		field  string
	}{{"explode", []int64{b.ID}, "action"}, {"delete", nil, "ids"}, {"enable", []int64{0}, "ids"}} {
		if _, err := f.channels.Bulk(ctx, bad.action, bad.ids); core.ErrorFields(err)[bad.field] == "" {
			t.Fatalf("Bulk(%q, %v) = %v; want a validation error on %s", bad.action, bad.ids, err, bad.field)
		}
	}
	if err := f.channels.Delete(ctx, b.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := f.channels.Delete(ctx, b.ID); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("second Delete: %v, want not_found", err)
	}
}

func TestTestSend(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	f.channels.TestTimeout = 200 * time.Millisecond // the hanging case ends on it
	ok := newRecorder(t)
	refusing := newRecorder(t)
	refusing.script = []error{core.Permanent(errors.New(`Post "https://api.example.com/bottok-SECRET1/sendMessage": 401 Unauthorized`))}
	hanging := newRecorder(t)
	hanging.hang = true
	okCh := f.add(t, ok, []string{"queue_stalled"}, nil)
	refCh := f.add(t, refusing, nil, core.Settings{"token": "tok-SECRET1"})
	hangCh := f.add(t, hanging, nil, nil)
	// A disabled channel can still be tested.
	if _, err := f.channels.Bulk(ctx, "disable", []int64{okCh.ID}); err != nil {
		t.Fatal(err)
	}

	res, err := f.channels.Test(ctx, alerts.TestInput{ID: &okCh.ID})
	if err != nil || !res.Success || res.Message != "ok from recorder" || res.Error != "" {
		t.Fatalf("Test(ok) = %+v, %v", res, err)
	}
	if a, _ := ok.got(); len(a) != 1 || !a[0].Test || a[0].Event != alerts.EventTest {
		t.Fatalf("recorder got %+v; want one test alert", a)
	}

	res, err = f.channels.Test(ctx, alerts.TestInput{ID: &refCh.ID})
	if err != nil || res.Success || !strings.Contains(res.Error, "401") {
		t.Fatalf("Test(refusing) = %+v, %v; want success false with the reason", res, err)
	}
	if strings.Contains(res.Error, "tok-SECRET1") || strings.Contains(res.Message, "tok-SECRET1") {
		t.Fatalf("test result leaks the token: %+v", res)
	}

	res, err = f.channels.Test(ctx, alerts.TestInput{ID: &hangCh.ID})
	if err != nil || res.Success || !strings.Contains(res.Error, "did not answer") {
		t.Fatalf("Test(hanging) = %+v, %v; want a timeout result", res, err)
	}

	// An unsaved body is validated, then sent; nothing is stored.
	unsaved := newRecorder(t)
	res, err = f.channels.Test(ctx, alerts.TestInput{Channel: &alerts.ChannelInput{
		Name: ptr("draft"), Type: ptr("test-recorder"), Settings: map[string]any{"sink": unsaved.name},
	}})
	if err != nil || !res.Success {
		t.Fatalf("Test(unsaved) = %+v, %v", res, err)
	}
	if a, _ := unsaved.got(); len(a) != 1 {
		t.Fatalf("unsaved channel got %d alerts, want 1", len(a))
	}
	if list, _ := f.store.FindNotificationChannels(ctx); len(list) != 3 {
		t.Fatalf("testing an unsaved channel stored it: %d channels", len(list))
	}

	missing := int64(999)
	errs := []struct {
		name string
		in   alerts.TestInput
		code string
	}{
		{"unknown id", alerts.TestInput{ID: &missing}, core.ENOTFOUND},
		{"nothing to test", alerts.TestInput{}, core.EINVALID},
		{"invalid body", alerts.TestInput{Channel: &alerts.ChannelInput{Name: ptr("x"), Type: ptr("pigeon")}}, core.EINVALID},
		{"private url", alerts.TestInput{Channel: &alerts.ChannelInput{Name: ptr("x"), Type: ptr("test-recorder"), Settings: map[string]any{"sink": "s", "hook_url": "http://192.168.1.1/"}}}, core.EINVALID},
	}
	for _, tt := range errs {
		if _, err := f.channels.Test(ctx, tt.in); core.ErrorCode(err) != tt.code {
			t.Errorf("%s: error %v, want %s", tt.name, err, tt.code)
		}
	}
}

func TestDetectTelegramChats(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	var seen string
	f.channels.DetectChats = func(_ context.Context, token string) ([]alerts.Chat, error) {
		seen = token
		switch token {
		case "good":
			return []alerts.Chat{{ID: -100123, Type: "supergroup", Title: "Ops"}, {ID: 42, Type: "private", Title: "Ann"}}, nil
		case "malformed":
			return nil, core.Permanent(fmt.Errorf("getMe: %w", core.InvalidField("bot_token", "Must be a bot token as @BotFather gives it.")))
		case "down":
			return nil, core.Temporary(errors.New("dial tcp: connection refused for bot" + token))
		}
		return nil, core.Permanent(errors.New("401 Unauthorized for bot" + token))
	}
	chats, err := f.channels.DetectTelegramChats(ctx, " good ")
	if err != nil || len(chats) != 2 || chats[0].Type != "supergroup" || seen != "good" {
		t.Fatalf("DetectTelegramChats(good) = %+v, %v (token seen %q)", chats, err, seen)
	}
	tests := []struct {
		token, code, field string
	}{
		{"", core.EINVALID, "bot_token"},
		{"123:wrong-SECRET", core.EINVALID, "bot_token"},
		{"down", core.EUNAVAILABLE, ""},
		{"malformed", core.EINVALID, "bot_token"},
	}
	for _, tt := range tests {
		_, err := f.channels.DetectTelegramChats(ctx, tt.token)
		if core.ErrorCode(err) != tt.code {
			t.Fatalf("token %q: error %v, want %s", tt.token, err, tt.code)
		}
		if tt.field != "" && core.ErrorFields(err)[tt.field] == "" {
			t.Fatalf("token %q: errors %v do not name %s", tt.token, core.ErrorFields(err), tt.field)
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Fatalf("error %q echoes the token", err)
		}
	}
	if _, err := f.channels.DetectTelegramChats(ctx, "malformed"); !strings.Contains(core.ErrorFields(err)["bot_token"], "@BotFather gives it") {
		t.Fatalf("the detector's own message on bot_token was lost: %v", err)
	}
	if strings.Contains(f.log.String(), "bot"+"down") || strings.Contains(f.log.String(), "SECRET") {
		t.Fatalf("log echoes the token: %s", f.log.String())
	}
	f.channels.DetectChats = nil
	if _, err := f.channels.DetectTelegramChats(ctx, "good"); core.ErrorCode(err) != core.EUNAVAILABLE {
		t.Fatalf("without a detector: %v, want service_unavailable", err)
	}
}
