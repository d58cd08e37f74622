package http_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mailsvc/mailsvc/app/alerts"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// The "http-recorder" channel type records alerts; a channel whose mode is
// "refuse" answers with a permanent error quoting its token.
var httpRecorded struct {
	sync.Mutex
	alerts []core.Alert
}

type httpRecorder struct{ ch *core.NotificationChannel }

func (n httpRecorder) Notify(_ context.Context, a core.Alert) (string, error) {
	if n.ch.Settings.String("mode") == "refuse" {
		return "", core.Permanent(errors.New("401 Unauthorized for bot" + n.ch.Settings.String("bot_token")))
	}
	httpRecorded.Lock()
	httpRecorded.alerts = append(httpRecorded.alerts, a)
	httpRecorded.Unlock()
	return "message 17 posted", nil
}

func init() {
	core.RegisterChannelType(core.ChannelType{
		Slug: "http-recorder", Name: "Recorder",
		Fields: []core.Field{
			{Key: "bot_token", Type: core.FieldString, Required: true},
			{Key: "webhook_url", Type: core.FieldURL, Sensitive: true},
			{Key: "mode", Type: core.FieldSelect, Options: []string{"ok", "refuse"}, Default: "ok"},
		},
		New: func(ch *core.NotificationChannel, _ core.NotifierEnv) (core.Notifier, error) {
			return httpRecorder{ch: ch}, nil
		},
	})
}

func newNotificationServer(t testing.TB) (*httptest.Server, *apptest.NotificationStore) {
	t.Helper()
	s, _ := newAPI()
	store := apptest.NewNotificationStore()
	s.Notifications = &alerts.Channels{
		Store: store, Cipher: apptest.Cipher{Key: "k"},
		CheckURL: func(raw string) error {
			if strings.Contains(raw, "127.0.0.1") || strings.Contains(raw, "10.") {
				return errors.New("private address " + raw)
			}
			return nil
		},
		DetectChats: func(_ context.Context, token string) ([]alerts.Chat, error) {
			if token != "123:good" {
				return nil, core.Permanent(errors.New("401 Unauthorized for bot" + token))
			}
			return []alerts.Chat{{ID: -1001, Type: "channel", Title: "Alerts"}, {ID: 5, Type: "private", Title: "Ann"}}, nil
		},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, store
}

func TestNotificationLifecycle(t *testing.T) {
	ts, store := newNotificationServer(t)
	r := do(t, ts, "POST", ns+"/notifications", "admin", strings.NewReader(
		`{"name":"Ops","type":"http-recorder","events":["connection_down"],"settings":{"bot_token":"123:SECRET","webhook_url":"https://hooks.example.com/SECRET-HOOK"}}`))
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var c core.NotificationChannel
	r.json(t, &c)
	if c.ID == 0 || c.Name != "Ops" || !c.IsActive || c.Settings["bot_token"] != core.Mask || c.Settings["webhook_url"] != core.Mask || c.Settings["mode"] != "ok" {
		t.Fatalf("created %+v", c)
	}
	if strings.Contains(string(r.Body), "SECRET") {
		t.Fatalf("create answer leaks a secret: %s", r.Body)
	}
	if raw := store.Raw(c.ID); !(apptest.Cipher{Key: "k"}).IsEncrypted(raw.Settings.String("bot_token")) {
		t.Fatalf("bot_token stored as %q, want ciphertext", raw.Settings.String("bot_token"))
	}

	r = do(t, ts, "GET", ns+"/notifications", "admin", nil)
	var list []core.NotificationChannel
	r.json(t, &list)
	if r.Status != 200 || len(list) != 1 || r.Header.Get("X-WP-Total") != "1" || r.Header.Get("X-WP-TotalPages") != "1" {
		t.Fatalf("list: %d %s headers %v", r.Status, r.Body, r.Header)
	}
	if strings.Contains(string(r.Body), "SECRET") {
		t.Fatalf("list leaks a secret: %s", r.Body)
	}

	r = do(t, ts, "PUT", ns+"/notifications/"+notifID(c.ID), "admin", strings.NewReader(`{"name":"Renamed","is_active":false,"settings":{"bot_token":"********"}}`))
	var up core.NotificationChannel
	r.json(t, &up)
	if r.Status != 200 || up.Name != "Renamed" || up.IsActive || len(up.Events) != 1 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	if plain, _ := (apptest.Cipher{Key: "k"}).Decrypt(store.Raw(c.ID).Settings.String("bot_token")); plain != "123:SECRET" {
		t.Fatalf("the mask replaced the stored token with %q", plain)
	}

	r = do(t, ts, "DELETE", ns+"/notifications/"+notifID(c.ID), "admin", nil)
	if r.Status != 200 || store.Raw(c.ID) != nil {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	for _, tt := range []struct{ method, path, body, code string }{
		{"DELETE", "/notifications/" + notifID(c.ID), "", "not_found"},
		{"PUT", "/notifications/" + notifID(c.ID), `{"name":"x"}`, "not_found"},
		{"PUT", "/notifications/abc", `{"name":"x"}`, ""},
		{"DELETE", "/notifications/0", "", "not_found"},
		{"GET", "/notifications/1", "", "rest_no_route"}, // no such route
	} {
		r := do(t, ts, tt.method, ns+tt.path, "admin", strings.NewReader(tt.body))
		code, status, _ := r.errorCode(t)
		if status != 404 || r.Status != 404 || tt.code != "" && code != tt.code {
			t.Errorf("%s %s: %d %s, want 404 %s", tt.method, tt.path, r.Status, r.Body, tt.code)
		}
	}
	if r := do(t, ts, "GET", ns+"/notifications", "", nil); r.Status != 401 {
		t.Errorf("anonymous list: %d, want 401", r.Status)
	}
}

func TestNotificationBadInput(t *testing.T) {
	ts, store := newNotificationServer(t)
	create := do(t, ts, "POST", ns+"/notifications", "admin", strings.NewReader(`{"name":"Keep","type":"http-recorder","settings":{"bot_token":"t"}}`))
	if create.Status != 201 {
		t.Fatalf("create: %d %s", create.Status, create.Body)
	}
	var kept core.NotificationChannel
	create.json(t, &kept)
	path := "/notifications/" + notifID(kept.ID)
	tests := []struct {
		name, method, path, body string
		status                   int
		field                    string
	}{
		{"malformed json", "POST", "/notifications", `{"name":`, 400, ""},
		{"not an object", "POST", "/notifications", `["x"]`, 400, ""},
		{"name of wrong type", "POST", "/notifications", `{"name":5,"type":"http-recorder"}`, 400, "name"},
		{"events of wrong type", "POST", "/notifications", `{"name":"n","type":"http-recorder","events":"connection_down"}`, 400, "events"},
		{"settings of wrong type", "POST", "/notifications", `{"name":"n","type":"http-recorder","settings":[1]}`, 400, "settings"},
		{"is_active of wrong type", "PUT", path, `{"is_active":"yes"}`, 400, "is_active"},
		{"missing name", "POST", "/notifications", `{"type":"http-recorder","settings":{"bot_token":"t"}}`, 422, "name"},
		{"unknown type", "POST", "/notifications", `{"name":"n","type":"carrier-pigeon"}`, 422, "type"},
		{"unknown event", "POST", "/notifications", `{"name":"n","type":"http-recorder","events":["tea_time"],"settings":{"bot_token":"t"}}`, 422, "events"},
		{"missing setting", "POST", "/notifications", `{"name":"n","type":"http-recorder"}`, 422, "bot_token"},
		{"url not http", "POST", "/notifications", `{"name":"n","type":"http-recorder","settings":{"bot_token":"t","webhook_url":"file:///etc/passwd"}}`, 422, "webhook_url"},
		{"url to private address", "POST", "/notifications", `{"name":"n","type":"http-recorder","settings":{"bot_token":"t","webhook_url":"http://127.0.0.1:9/hook"}}`, 422, "webhook_url"},
		{"update to private address", "PUT", path, `{"settings":{"webhook_url":"https://10.0.0.8/hook"}}`, 422, "webhook_url"},
		{"update to unknown type", "PUT", path, `{"type":"nope"}`, 422, "type"},
		{"update with blank name", "PUT", path, `{"name":"  "}`, 422, "name"},
		{"bulk malformed", "POST", "/notifications/bulk", `{`, 400, ""},
		{"bulk ids of wrong type", "POST", "/notifications/bulk", `{"action":"delete","ids":"1"}`, 400, "ids"},
		{"bulk unknown action", "POST", "/notifications/bulk", `{"action":"explode","ids":[1]}`, 422, "action"},
		{"bulk without ids", "POST", "/notifications/bulk", `{"action":"delete"}`, 422, "ids"},
		{"test malformed", "POST", "/notifications/test", `{"id":`, 400, ""},
		{"test id of wrong type", "POST", "/notifications/test", `{"id":"one"}`, 400, "id"},
		{"test channel of wrong type", "POST", "/notifications/test", `{"channel":"telegram"}`, 400, "channel"},
		{"test nothing", "POST", "/notifications/test", `{}`, 422, "id"},
		{"test unknown id", "POST", "/notifications/test", `{"id":999}`, 404, ""},
		{"test zero id", "POST", "/notifications/test", `{"id":0}`, 404, ""},
		{"test invalid body", "POST", "/notifications/test", `{"channel":{"name":"n","type":"http-recorder"}}`, 422, "bot_token"},
		{"detect malformed", "POST", "/notifications/telegram/detect-chats", `nope`, 400, ""},
		{"detect token of wrong type", "POST", "/notifications/telegram/detect-chats", `{"bot_token":123}`, 400, "bot_token"},
		{"detect without token", "POST", "/notifications/telegram/detect-chats", `{}`, 422, "bot_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, ts, tt.method, ns+tt.path, "admin", strings.NewReader(tt.body))
			code, status, fields := r.errorCode(t)
			if r.Status != tt.status || status != tt.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tt.status)
			}
			want := map[int]string{400: "bad_request", 404: "not_found", 422: "validation_error"}[tt.status]
			if code != want {
				t.Fatalf("code %q, want %q", code, want)
			}
			if tt.field != "" && fields[tt.field] == "" {
				t.Fatalf("errors %v do not name %s", fields, tt.field)
			}
		})
	}
	list, _ := store.FindNotificationChannels(context.Background())
	if len(list) != 1 || list[0].Name != "Keep" || list[0].Settings["webhook_url"] != nil || list[0].Type != "http-recorder" {
		t.Fatalf("bad input changed what is stored: %+v", list)
	}
}

func TestNotificationBulk(t *testing.T) {
	ts, store := newNotificationServer(t)
	var ids []string
	for range 3 {
		r := do(t, ts, "POST", ns+"/notifications", "admin", strings.NewReader(`{"name":"c","type":"http-recorder","settings":{"bot_token":"t"}}`))
		var c core.NotificationChannel
		r.json(t, &c)
		ids = append(ids, notifID(c.ID))
	}
	tests := []struct {
		body  string
		count int
	}{
		{`{"action":"disable","ids":[` + ids[0] + `,` + ids[1] + `,999]}`, 2},
		{`{"action":"enable","ids":[` + ids[1] + `]}`, 1},
		{`{"action":"delete","ids":[` + ids[0] + `,` + ids[2] + `]}`, 2},
	}
	for _, tt := range tests {
		r := do(t, ts, "POST", ns+"/notifications/bulk", "admin", strings.NewReader(tt.body))
		var out struct {
			Count int `json:"count"`
		}
		r.json(t, &out)
		if r.Status != 200 || out.Count != tt.count {
			t.Fatalf("bulk %s: %d %s, want count %d", tt.body, r.Status, r.Body, tt.count)
		}
	}
	list, _ := store.FindNotificationChannels(context.Background())
	if len(list) != 1 || notifID(list[0].ID) != ids[1] || !list[0].IsActive {
		t.Fatalf("after bulk: %+v; want only the second channel, active", list)
	}
}

func TestNotificationTestAndDetect(t *testing.T) {
	ts, store := newNotificationServer(t)
	r := do(t, ts, "POST", ns+"/notifications", "admin", strings.NewReader(`{"name":"ok","type":"http-recorder","settings":{"bot_token":"t"}}`))
	var okCh core.NotificationChannel
	r.json(t, &okCh)
	r = do(t, ts, "POST", ns+"/notifications", "admin", strings.NewReader(`{"name":"refuses","type":"http-recorder","settings":{"bot_token":"999:SECRET","mode":"refuse"}}`))
	var refCh core.NotificationChannel
	r.json(t, &refCh)

	type result struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	tests := []struct {
		name, body string
		success    bool
		want       string
	}{
		{"stored channel", `{"id":` + notifID(okCh.ID) + `}`, true, "message 17 posted"},
		{"refusing channel", `{"id":` + notifID(refCh.ID) + `}`, false, "401 Unauthorized"},
		{"unsaved channel", `{"channel":{"name":"draft","type":"http-recorder","settings":{"bot_token":"x"}}}`, true, "message 17 posted"},
		{"stored channel with unsaved edits", `{"id":` + notifID(refCh.ID) + `,"channel":{"settings":{"mode":"ok","bot_token":"********"}}}`, true, "message 17 posted"},
	}
	for _, tt := range tests {
		r := do(t, ts, "POST", ns+"/notifications/test", "admin", strings.NewReader(tt.body))
		var res result
		r.json(t, &res)
		if r.Status != 200 || res.Success != tt.success || !strings.Contains(res.Message+res.Error, tt.want) {
			t.Fatalf("%s: %d %s", tt.name, r.Status, r.Body)
		}
		if strings.Contains(string(r.Body), "SECRET") {
			t.Fatalf("%s: answer leaks the token: %s", tt.name, r.Body)
		}
	}
	if list, _ := store.FindNotificationChannels(context.Background()); len(list) != 2 || list[1].Settings.String("mode") != "refuse" {
		t.Fatalf("a test send changed what is stored: %+v", list)
	}
	httpRecorded.Lock()
	n := len(httpRecorded.alerts)
	allTest := true
	for _, a := range httpRecorded.alerts {
		allTest = allTest && a.Test
	}
	httpRecorded.Unlock()
	if n < 3 || !allTest {
		t.Fatalf("recorded %d alerts (all test: %v), want 3 test alerts", n, allTest)
	}

	r = do(t, ts, "POST", ns+"/notifications/telegram/detect-chats", "admin", strings.NewReader(`{"bot_token":"123:good"}`))
	var chats struct {
		Chats []alerts.Chat `json:"chats"`
	}
	r.json(t, &chats)
	if r.Status != 200 || len(chats.Chats) != 2 || chats.Chats[0].ID != -1001 || chats.Chats[0].Type != "channel" {
		t.Fatalf("detect: %d %s", r.Status, r.Body)
	}
	r = do(t, ts, "POST", ns+"/notifications/telegram/detect-chats", "admin", strings.NewReader(`{"bot_token":"123:BAD-SECRET"}`))
	if code, _, fields := r.errorCode(t); r.Status != 422 || code != "validation_error" || fields["bot_token"] == "" {
		t.Fatalf("detect with a bad token: %d %s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), "BAD-SECRET") {
		t.Fatalf("detect answer echoes the token: %s", r.Body)
	}
}

func notifID(n int64) string { return strconv.FormatInt(n, 10) }
