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
	"time"

	"github.com/mailsvc/mailsvc/adapters/debuglog"
	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// Drivers for the credential checks: "smtp" logs in over SMTP and accepts
// the password "right"; "httpverifyapi" checks its api_key "good" and
// cannot be reached when it is "down".
type verifyingTransport struct{ ok, reachable bool }

func (verifyingTransport) Send(context.Context, *core.Message) (core.Receipt, error) {
	return core.Receipt{}, nil
}

func (t verifyingTransport) Verify(context.Context) error {
	switch {
	case !t.reachable:
		return core.Temporary(errors.New("dial tcp: connection refused"))
	case !t.ok:
		return core.Permanent(errors.New("535 authentication failed"))
	}
	return nil
}

func init() {
	core.Register(core.Driver{
		Slug: "smtp", Name: "Fake SMTP",
		Fields: []core.Field{{Key: "host", Type: core.FieldString, Required: true}, {Key: "password", Type: core.FieldString}, {Key: "from_email", Type: core.FieldEmail}},
		New: func(c *core.Connection, _ core.DriverEnv) (core.Transport, error) {
			return verifyingTransport{ok: c.Settings.String("password") == "right", reachable: true}, nil
		},
	})
	core.Register(core.Driver{
		Slug: "httpverifyapi", Name: "Fake API",
		Fields: []core.Field{{Key: "api_key", Type: core.FieldString}},
		New: func(c *core.Connection, _ core.DriverEnv) (core.Transport, error) {
			k := c.Settings.String("api_key")
			return verifyingTransport{ok: k == "good", reachable: k != "down"}, nil
		},
	})
}

// sender is a fake app.ImmediateSender: a recipient containing "refuse"
// fails at the provider; anything else is delivered with id "pm-<log id>".
// It goes through the log store's contract: enqueued under a lease, then
// its outcome recorded.
type sender struct{ logs *apptest.LogStore }

func (s sender) SendNow(ctx context.Context, connID int64, msg *core.Message, source string, _ core.OutcomeHostHooks) (*core.Log, error) {
	if msg.From.Email == "" {
		msg.From.Email = "site@example.com"
	}
	if err := msg.Validate(); err != nil {
		return nil, err
	}
	out := core.LogOutcome{Status: core.StatusDelivered, Attempts: 1}
	if strings.Contains(msg.To[0].Email, "refuse") {
		out.Status, out.LastError = core.StatusFailed, "permanent failure: 550 mailbox unavailable"
	}
	l := &core.Log{ConnectionID: &connID, Message: *msg, Source: source}
	if err := settle(ctx, s.logs, l, out); err != nil {
		return nil, err
	}
	return s.logs.FindLogByID(ctx, l.ID)
}

// settle stores l with the outcome's status: queued as it is; sending
// under a lease; delivered or failed through a claim and its recorded
// outcome, as a worker would.
func settle(ctx context.Context, logs *apptest.LogStore, l *core.Log, out core.LogOutcome) error {
	if out.Status == core.StatusQueued {
		return logs.EnqueueLog(ctx, l)
	}
	until := time.Now().Add(time.Hour)
	l.Status, l.LeaseOwner, l.LeaseUntil = core.StatusSending, "route-test", &until
	if err := logs.EnqueueLog(ctx, l); err != nil || out.Status == core.StatusSending {
		return err
	}
	out.LogID = l.ID
	if out.Status == core.StatusDelivered && out.ProviderMessageID == "" {
		out.ProviderMessageID = "pm-" + strconv.FormatInt(l.ID, 10)
	}
	_, err := logs.RecordOutcomes(ctx, "route-test", []core.LogOutcome{out})
	return err
}

type deliveryFixture struct {
	ts          *httptest.Server
	logs        *apptest.LogStore
	conns       *apptest.ConnectionStore
	transcripts *debuglog.Transcripts
	events      *[][]any
}

func newDeliveryServer(t *testing.T) deliveryFixture {
	t.Helper()
	conns := apptest.NewConnectionStore()
	hooks := &core.Hooks{}
	var events [][]any
	var mu sync.Mutex
	hooks.AddAction(core.HookTestEmailSent, func(args ...any) { mu.Lock(); events = append(events, args); mu.Unlock() })
	connApp := &app.Connections{Store: conns, Cipher: apptest.Cipher{Key: "k"}, Hooks: hooks}
	settings := &app.Settings{Store: apptest.NewSettingsStore(), Connections: conns}
	logs := apptest.NewLogStore()
	transcripts := debuglog.NewTranscripts(t.TempDir(), 0, 0, debuglog.Redactor{}, nil)
	s := &api.Server{
		Auth:        &tokenAuth{},
		Connections: connApp,
		Settings:    settings,
		Logs:        &app.Logs{Store: logs, Settings: settings},
		Actions:     &app.ConnectionActions{Connections: connApp, Settings: settings, Sender: sender{logs}, Hooks: hooks},
		Transcripts: transcripts,
		Hooks:       hooks,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	ctx := context.Background()
	for _, c := range []struct {
		name, driver string
		active       bool
		settings     map[string]any
	}{
		{"smtp ok", "smtp", true, map[string]any{"host": "mx", "password": "right", "from_email": "owner@example.com"}}, // 1
		{"smtp bad password", "smtp", true, map[string]any{"host": "mx", "password": "wrong"}},                          // 2
		{"inactive", "smtp", false, map[string]any{"host": "mx"}},                                                       // 3
		{"api ok", "httpverifyapi", true, map[string]any{"api_key": "good"}},                                            // 4
		{"api bad", "httpverifyapi", true, map[string]any{"api_key": "bad"}},                                            // 5
		{"api down", "httpverifyapi", true, map[string]any{"api_key": "down"}},                                          // 6
		{"no verifier", "httptestmail", true, map[string]any{"host": "h"}},                                              // 7
	} {
		name, driver, active := c.name, c.driver, c.active
		if _, err := connApp.Create(ctx, app.ConnectionInput{Name: &name, Driver: &driver, IsActive: &active, Settings: c.settings}); err != nil {
			t.Fatal(err)
		}
	}
	return deliveryFixture{ts: ts, logs: logs, conns: conns, transcripts: transcripts, events: &events}
}

func (f deliveryFixture) addLog(t *testing.T, status, to, subject, text string, attachments ...core.Attachment) int64 {
	t.Helper()
	l := &core.Log{Message: core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: to}}, Subject: subject, Text: text, Attachments: attachments}}
	out := core.LogOutcome{Status: status, Attempts: 1}
	if status == core.StatusFailed {
		out.LastError = "permanent failure: 550 no such user"
	}
	if err := settle(context.Background(), f.logs, l, out); err != nil {
		t.Fatal(err)
	}
	return l.ID
}

func TestLogRoutes(t *testing.T) {
	f := newDeliveryServer(t)
	delivered := f.addLog(t, core.StatusDelivered, "bob@example.com", "Invoice 42", "Your invoice body", core.Attachment{Filename: "inv.pdf", ContentType: "application/pdf", Data: []byte("%PDF-binary\x00\x01")})
	failed := f.addLog(t, core.StatusFailed, "carol@example.com", "Welcome", "hello carol")
	queued := f.addLog(t, core.StatusQueued, "dave@example.com", "Reset", "reset link")
	f.addLog(t, core.StatusSending, "erin@example.com", "Digest", "weekly digest")

	huge := `{"ids":[` + strings.Repeat("1,", 1<<20) + `1]}`
	tests := []struct {
		name, method, path, body string
		status                   int
		code, field              string
		check                    func(t *testing.T, r reply)
	}{
		{"list all", "GET", "/logs", "", 200, "", "", func(t *testing.T, r reply) {
			var logs []map[string]any
			r.json(t, &logs)
			if len(logs) != 4 || r.Header.Get("X-WP-Total") != "4" || r.Header.Get("X-WP-TotalPages") != "1" {
				t.Fatalf("%d logs, headers %v", len(logs), r.Header)
			}
			if strings.Contains(string(r.Body), "Your invoice body") {
				t.Fatal("list carries bodies")
			}
		}},
		{"list by status", "GET", "/logs?status=failed", "", 200, "", "", func(t *testing.T, r reply) {
			var logs []core.Log
			r.json(t, &logs)
			if len(logs) != 1 || logs[0].ID != failed {
				t.Fatalf("got %+v", logs)
			}
		}},
		{"search a subject word", "GET", "/logs?search=INVOI", "", 200, "", "", func(t *testing.T, r reply) {
			var logs []core.Log
			r.json(t, &logs)
			if len(logs) != 1 || logs[0].ID != delivered {
				t.Fatalf("got %+v", logs)
			}
		}},
		{"search a recipient", "GET", "/logs?search=DAVE@example.com", "", 200, "", "", func(t *testing.T, r reply) {
			var logs []core.Log
			r.json(t, &logs)
			if len(logs) != 1 || logs[0].ID != queued {
				t.Fatalf("got %+v", logs)
			}
		}},
		{"paging", "GET", "/logs?per_page=3&page=2", "", 200, "", "", func(t *testing.T, r reply) {
			var logs []core.Log
			r.json(t, &logs)
			if len(logs) != 1 || r.Header.Get("X-WP-TotalPages") != "2" || logs[0].ID != delivered {
				t.Fatalf("got %d, headers %v", len(logs), r.Header)
			}
		}},
		{"unknown status", "GET", "/logs?status=bounced", "", 422, "validation_error", "status", nil},
		{"bad per_page", "GET", "/logs?per_page=0", "", 422, "validation_error", "per_page", nil},
		{"bad page", "GET", "/logs?page=x", "", 422, "validation_error", "page", nil},
		{"stats", "GET", "/logs/queue/stats", "", 200, "", "", func(t *testing.T, r reply) {
			var st core.QueueStats
			r.json(t, &st)
			if st != (core.QueueStats{Queued: 1, Sending: 1, Failed: 1, Delivered: 1}) {
				t.Fatalf("stats %+v", st)
			}
		}},
		{"one log with body, attachments without bytes", "GET", "/logs/" + strconv.FormatInt(delivered, 10), "", 200, "", "", func(t *testing.T, r reply) {
			var d struct {
				ID          int64                `json:"id"`
				Message     core.Message         `json:"message"`
				Attachments []app.AttachmentInfo `json:"attachments"`
			}
			r.json(t, &d)
			if d.ID != delivered || d.Message.Text != "Your invoice body" || len(d.Attachments) != 1 || d.Attachments[0].Size != 13 || d.Attachments[0].Filename != "inv.pdf" {
				t.Fatalf("detail %+v", d)
			}
			if strings.Contains(string(r.Body), "PDF-binary") || strings.Contains(string(r.Body), "JVBER") {
				t.Fatal("attachment bytes in the response")
			}
		}},
		{"unknown log", "GET", "/logs/999", "", 404, "not_found", "", nil},
		{"non-numeric id", "GET", "/logs/abc", "", 404, "not_found", "", nil},
		{"queue is not an id", "GET", "/logs/queue", "", 404, "not_found", "", nil},
		{"resend one queued", "POST", "/logs/" + strconv.FormatInt(queued, 10) + "/resend", "", 422, "validation_error", "status", nil},
		{"resend one unknown", "POST", "/logs/999/resend", "", 404, "not_found", "", nil},
		{"resend one failed", "POST", "/logs/" + strconv.FormatInt(failed, 10) + "/resend", "", 200, "", "", func(t *testing.T, r reply) {
			if l, _ := f.logs.FindLogByID(context.Background(), failed); l.Status != core.StatusQueued {
				t.Fatalf("status %s", l.Status)
			}
		}},
		{"bulk resend", "POST", "/logs/resend", `{"ids":[` + strconv.FormatInt(delivered, 10) + `,` + strconv.FormatInt(queued, 10) + `,999]}`, 200, "", "", func(t *testing.T, r reply) {
			var out map[string]int
			r.json(t, &out)
			if out["resent"] != 1 {
				t.Fatalf("resent %v", out)
			}
		}},
		{"bulk resend no ids", "POST", "/logs/resend", `{"ids":[]}`, 422, "validation_error", "ids", nil},
		{"bulk resend negative id", "POST", "/logs/resend", `{"ids":[-1]}`, 422, "validation_error", "ids", nil},
		{"bulk resend ids wrong type", "POST", "/logs/resend", `{"ids":"1,2"}`, 400, "bad_request", "ids", nil},
		{"bulk resend malformed", "POST", "/logs/resend", `{"ids":[1`, 400, "bad_request", "", nil},
		{"bulk resend huge", "POST", "/logs/resend", huge, 400, "bad_request", "", nil},
		{"bulk delete not an object", "DELETE", "/logs", `[1,2]`, 400, "bad_request", "", nil},
		{"bulk delete fractional id", "DELETE", "/logs", `{"ids":[1.5]}`, 400, "bad_request", "ids", nil},
		{"delete one unknown", "DELETE", "/logs/999", "", 404, "not_found", "", nil},
		{"delete one", "DELETE", "/logs/" + strconv.FormatInt(queued, 10), "", 200, "", "", func(t *testing.T, r reply) {
			if _, err := f.logs.FindLogByID(context.Background(), queued); core.ErrorCode(err) != core.ENOTFOUND {
				t.Fatalf("still there: %v", err)
			}
		}},
		{"bulk delete", "DELETE", "/logs", `{"ids":[` + strconv.FormatInt(delivered, 10) + `,` + strconv.FormatInt(failed, 10) + `,999]}`, 200, "", "", func(t *testing.T, r reply) {
			var out map[string]int
			r.json(t, &out)
			if out["deleted"] != 2 {
				t.Fatalf("deleted %v", out)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, f.ts, tt.method, ns+tt.path, "admin", strings.NewReader(tt.body))
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if tt.code != "" {
				code, status, fields := r.errorCode(t)
				if code != tt.code || status != tt.status {
					t.Fatalf("error %s/%d: %s", code, status, r.Body)
				}
				if tt.field != "" && fields[tt.field] == "" {
					t.Fatalf("no message for %s: %s", tt.field, r.Body)
				}
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func TestTestEmailAndConnectionActions(t *testing.T) {
	f := newDeliveryServer(t)
	type result struct {
		Success           bool   `json:"success"`
		Message           string `json:"message"`
		LogID             int64  `json:"log_id"`
		Status            string `json:"status"`
		ProviderMessageID string `json:"provider_message_id"`
		To                string `json:"to"`
	}
	tests := []struct {
		name, path, body string
		status           int
		code, field      string
		want             *result
	}{
		{"test email delivered", "/test-email", `{"to":"x@example.com","connection_id":1,"subject":"Hi"}`, 200, "", "", &result{Success: true, Status: "delivered", ProviderMessageID: "pm-1", To: "x@example.com"}},
		{"test email refused by provider", "/test-email", `{"to":"refuse@example.com","connection_id":1}`, 200, "", "", &result{Success: false, Status: "failed", To: "refuse@example.com"}},
		{"test email bad address", "/test-email", `{"to":"not an address","connection_id":1}`, 422, "validation_error", "to", nil},
		{"test email missing to", "/test-email", `{"connection_id":1}`, 422, "validation_error", "to", nil},
		{"test email missing connection", "/test-email", `{"to":"x@example.com"}`, 422, "validation_error", "connection_id", nil},
		{"test email unknown connection", "/test-email", `{"to":"x@example.com","connection_id":99}`, 422, "validation_error", "connection_id", nil},
		{"test email inactive connection", "/test-email", `{"to":"x@example.com","connection_id":3}`, 422, "validation_error", "connection_id", nil},
		{"test email connection as string", "/test-email", `{"to":"x@example.com","connection_id":"1"}`, 400, "bad_request", "connection_id", nil},
		{"test email to as number", "/test-email", `{"to":5,"connection_id":1}`, 400, "bad_request", "to", nil},
		{"test email malformed", "/test-email", `{"to":`, 400, "bad_request", "", nil},
		{"test email huge subject", "/test-email", `{"to":"x@example.com","connection_id":1,"subject":"` + strings.Repeat("s", 2000) + `"}`, 422, "validation_error", "subject", nil},
		{"test email huge body", "/test-email", `{"to":"` + strings.Repeat("a", 2<<20) + `"}`, 400, "bad_request", "", nil},
		{"connection test to the connection's from email", "/connections/1/test", ``, 200, "", "", &result{Success: true, Status: "delivered", To: "owner@example.com"}},
		{"connection test explicit to", "/connections/1/test", `{"to":"y@example.com"}`, 200, "", "", &result{Success: true, Status: "delivered", To: "y@example.com"}},
		{"connection test no recipient anywhere", "/connections/2/test", `{}`, 422, "validation_error", "to", nil},
		{"connection test unknown", "/connections/99/test", `{}`, 404, "not_found", "", nil},
		{"connection test inactive", "/connections/3/test", `{"to":"y@example.com"}`, 422, "validation_error", "connection_id", nil},
		{"connection test bad to", "/connections/1/test", `{"to":"nope"}`, 422, "validation_error", "to", nil},
		{"connection test to wrong type", "/connections/1/test", `{"to":[]}`, 400, "bad_request", "to", nil},
		{"verify smtp ok", "/connections/1/verify-credentials", ``, 200, "", "", &result{Success: true}},
		{"verify smtp wrong password", "/connections/2/verify-credentials", ``, 200, "", "", &result{Success: false}},
		{"verify smtp on an api driver", "/connections/4/verify-credentials", ``, 422, "validation_error", "driver", nil},
		{"verify smtp unknown", "/connections/99/verify-credentials", ``, 404, "not_found", "", nil},
		{"verify api ok", "/connections/4/verify-api-credentials", ``, 200, "", "", &result{Success: true}},
		{"verify api rejected", "/connections/5/verify-api-credentials", ``, 200, "", "", &result{Success: false}},
		{"verify api unreachable", "/connections/6/verify-api-credentials", ``, 200, "", "", &result{Success: false}},
		{"verify api on smtp", "/connections/1/verify-api-credentials", ``, 422, "validation_error", "driver", nil},
		{"verify api without verifier", "/connections/7/verify-api-credentials", ``, 422, "validation_error", "driver", nil},
		{"verify api bad id", "/connections/x/verify-api-credentials", ``, 404, "not_found", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, f.ts, "POST", ns+tt.path, "admin", strings.NewReader(tt.body))
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", r.Status, tt.status, r.Body)
			}
			if tt.code != "" {
				code, _, fields := r.errorCode(t)
				if code != tt.code || (tt.field != "" && fields[tt.field] == "") {
					t.Fatalf("error %.300s", r.Body)
				}
				return
			}
			var got result
			r.json(t, &got)
			if got.Success != tt.want.Success || got.Message == "" || got.Status != tt.want.Status || got.To != tt.want.To ||
				(tt.want.ProviderMessageID != "" && got.ProviderMessageID != tt.want.ProviderMessageID) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if strings.Contains(string(r.Body), "right") || strings.Contains(string(r.Body), "good") {
				t.Fatalf("secret in response: %s", r.Body)
			}
			if tt.want.Status != "" {
				l, err := f.logs.FindLogByID(context.Background(), got.LogID)
				if err != nil || l.Status != got.Status || l.Source != app.SourceTest {
					t.Fatalf("log %+v %v", l, err)
				}
			}
		})
	}
	// Two successful connection tests fired the event with (connection, recipient, log id).
	if len(*f.events) != 2 {
		t.Fatalf("events %v", *f.events)
	}
	ev := (*f.events)[0]
	if ev[0] != int64(1) || ev[1] != "owner@example.com" || ev[2].(int64) < 1 {
		t.Fatalf("event args %v", ev)
	}
}

func TestDebugLogRoutes(t *testing.T) {
	f := newDeliveryServer(t)
	for i := int64(1); i <= 3; i++ {
		f.transcripts.SaveTranscript(i, "S: 220 hi\nC: AUTH PLAIN c2VjcmV0\nS: 235 ok\n")
	}
	r := do(t, f.ts, "GET", ns+"/tools/debug-logs?per_page=2", "admin", nil)
	var list []core.Transcript
	r.json(t, &list)
	if r.Status != 200 || len(list) != 2 || r.Header.Get("X-WP-Total") != "3" || r.Header.Get("X-WP-TotalPages") != "2" || list[0].ConnectionID != 3 {
		t.Fatalf("list %d %+v %v", r.Status, list, r.Header)
	}
	if strings.Contains(string(r.Body), "c2VjcmV0") {
		t.Fatal("AUTH credentials served")
	}
	if r := do(t, f.ts, "GET", ns+"/tools/debug-logs?page=0", "admin", nil); r.Status != 422 {
		t.Fatalf("page=0 answered %d", r.Status)
	}
	if r := do(t, f.ts, "DELETE", ns+"/tools/debug-logs", "editor", nil); r.Status != 403 {
		t.Fatalf("editor clear answered %d", r.Status)
	}
	r = do(t, f.ts, "DELETE", ns+"/tools/debug-logs", "admin", nil)
	var out map[string]int
	r.json(t, &out)
	if r.Status != 200 || out["deleted"] != 3 {
		t.Fatalf("clear %d %s", r.Status, r.Body)
	}
	r = do(t, f.ts, "GET", ns+"/tools/debug-logs", "admin", nil)
	if r.Status != 200 || strings.TrimSpace(string(r.Body)) != "[]" || r.Header.Get("X-WP-Total") != "0" {
		t.Fatalf("after clear %d %s", r.Status, r.Body)
	}
}

func TestDeliveryRoutesNeedCapability(t *testing.T) {
	f := newDeliveryServer(t)
	for _, rt := range [][2]string{
		{"GET", "/logs"}, {"GET", "/logs/queue/stats"}, {"GET", "/logs/1"}, {"POST", "/logs/resend"}, {"POST", "/logs/1/resend"},
		{"DELETE", "/logs/1"}, {"DELETE", "/logs"}, {"POST", "/test-email"}, {"POST", "/connections/1/test"},
		{"POST", "/connections/1/verify-credentials"}, {"POST", "/connections/1/verify-api-credentials"},
		{"GET", "/tools/debug-logs"}, {"DELETE", "/tools/debug-logs"},
	} {
		if r := do(t, f.ts, rt[0], ns+rt[1], "", nil); r.Status != 401 {
			t.Errorf("%s %s anonymous: %d", rt[0], rt[1], r.Status)
		}
		if r := do(t, f.ts, rt[0], ns+rt[1], "editor", nil); r.Status != 403 {
			t.Errorf("%s %s editor: %d", rt[0], rt[1], r.Status)
		}
	}
}
