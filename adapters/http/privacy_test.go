package http_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/debuglog"
	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// newPrivacyServer serves the log, debug log and personal data routes
// over a real SQLite store and a transcript directory.
func newPrivacyServer(t *testing.T) (*httptest.Server, *store.DB, *debuglog.Transcripts) {
	t.Helper()
	db := storetest.Open(t, testdb.SQLite(t), "wp_")
	s, _ := newAPI()
	transcripts := debuglog.NewTranscripts(t.TempDir(), 0, 0, debuglog.Redactor{}, nil)
	s.Logs, s.Transcripts = &app.Logs{Store: db.Logs()}, transcripts
	s.Privacy = &app.Privacy{Store: db.Privacy(), Transcripts: transcripts}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, db, transcripts
}

// TestPrivacyRoutesBadInput: the usual auth and error shape.
func TestPrivacyRoutesBadInput(t *testing.T) {
	ts, _, _ := newPrivacyServer(t)
	tests := []errorCase{
		{"export without credentials", "GET", "/privacy/export?email=a@example.com", "", "", 401, "rest_not_logged_in", ""},
		{"erase without the capability", "POST", "/privacy/erase", "editor", `{"email":"a@example.com"}`, 403, "rest_forbidden", ""},
		{"export without an address", "GET", "/privacy/export", "admin", "", 422, "validation_error", "email"},
		{"export of a non-address", "GET", "/privacy/export?email=bob", "admin", "", 422, "validation_error", "email"},
		{"export page 0", "GET", "/privacy/export?email=a@example.com&page=0", "admin", "", 422, "validation_error", "page"},
		{"export page not a number", "GET", "/privacy/export?email=a@example.com&page=two", "admin", "", 422, "validation_error", "page"},
		{"erase without an address", "POST", "/privacy/erase", "admin", `{}`, 422, "validation_error", "email"},
		{"erase of a non-address", "POST", "/privacy/erase", "admin", `{"email":"not an address"}`, 422, "validation_error", "email"},
		{"erase with malformed JSON", "POST", "/privacy/erase", "admin", `{"email":`, 400, "bad_request", ""},
		{"erase with an address of the wrong type", "POST", "/privacy/erase", "admin", `{"email":7}`, 400, "bad_request", ""},
	}
	checkErrorCases(t, ts, tests)
}

// TestPrivacyExportAndErasePages: a person with more logs than a page is
// exported over two pages (WordPress's done flag) and erased over two
// calls, a queued message is kept and reported, and afterwards the log
// and debug log routes no longer answer with the address (another
// person's transcript stays).
func TestPrivacyExportAndErasePages(t *testing.T) {
	ts, db, transcripts := newPrivacyServer(t)
	ctx := context.Background()
	const person = "Pat.Doe@example.com"
	var logs []*core.Log
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range app.PrivacyPageSize + 1 {
		logs = append(logs, &core.Log{Status: core.StatusDelivered, CreatedAt: base.Add(time.Duration(i) * time.Minute), Message: core.Message{
			From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Name: "Pat Doe", Email: person}},
			Bcc: []core.Address{{Email: "audit@example.com"}}, Subject: fmt.Sprintf("Receipt %d", i), Text: "Thanks, Pat",
		}})
	}
	logs = append(logs, &core.Log{Status: core.StatusDelivered, CreatedAt: base, Message: core.Message{
		From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "someone@example.com"}}, Subject: "Other", Text: "other",
	}})
	if err := db.Logs().ImportLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	transcripts.SaveTranscript(1, "C: RCPT TO:<"+person+">\nS: 250 ok")
	transcripts.SaveTranscript(1, "C: RCPT TO:<someone@example.com>\nS: 250 ok")
	queued := &core.Log{Message: core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: person}}, Subject: "Soon", Text: "x"}}
	if err := db.Logs().EnqueueLog(ctx, queued); err != nil {
		t.Fatal(err)
	}

	type export struct {
		Data []core.PersonalDataItem `json:"data"`
		Done bool                    `json:"done"`
	}
	exportPage := func(t *testing.T, page int) export {
		t.Helper()
		r := do(t, ts, "GET", fmt.Sprintf("%s/privacy/export?email=%s&page=%d", ns, strings.ToUpper(person), page), "admin", nil)
		if r.Status != 200 {
			t.Fatalf("export page %d: %d %s", page, r.Status, r.Body)
		}
		var e export
		r.json(t, &e)
		return e
	}
	first, second := exportPage(t, 1), exportPage(t, 2)
	if len(first.Data) != app.PrivacyPageSize || first.Done || len(second.Data) != 2 || !second.Done {
		t.Fatalf("pages of %d (done %v) and %d (done %v) items, want %d then 2 and done", len(first.Data), first.Done, len(second.Data), second.Done, app.PrivacyPageSize)
	}
	item := first.Data[0]
	want := map[string]string{"Subject": "Receipt 0", "Status": "delivered", "Your address as": "To", "Other recipients": "1", "Text body": "Thanks, Pat", "Date": "2026-03-01T12:00:00Z"}
	got := map[string]string{}
	for _, d := range item.Data {
		got[d.Name] = d.Value
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("exported %s = %q, want %q (item %+v)", k, got[k], v, item)
		}
	}
	if item.GroupID != "mailsvc-email-log" || item.ItemID != fmt.Sprintf("mailsvc-log-%d", logs[0].ID) || strings.Contains(fmt.Sprint(item), "audit@") {
		t.Errorf("exported item %+v", item)
	}

	type erasure struct {
		ItemsRemoved  bool     `json:"items_removed"`
		ItemsRetained bool     `json:"items_retained"`
		Messages      []string `json:"messages"`
		Done          bool     `json:"done"`
	}
	var calls []erasure
	for page := 1; page <= 5; page++ {
		r := do(t, ts, "POST", ns+"/privacy/erase", "admin", strings.NewReader(fmt.Sprintf(`{"email":%q,"page":%d}`, person, page)))
		if r.Status != 200 {
			t.Fatalf("erase page %d: %d %s", page, r.Status, r.Body)
		}
		var e erasure
		r.json(t, &e)
		calls = append(calls, e)
		if e.Done {
			break
		}
	}
	if len(calls) != 2 || !calls[0].ItemsRemoved || calls[0].Done || calls[0].ItemsRetained ||
		!calls[1].ItemsRemoved || !calls[1].ItemsRetained || len(calls[1].Messages) != 1 || !strings.Contains(calls[1].Messages[0], "waiting to be sent") {
		t.Fatalf("erase answers %+v", calls)
	}

	lower := strings.ToLower(person)
	var left export
	do(t, ts, "GET", ns+"/privacy/export?email="+lower, "admin", nil).json(t, &left)
	if len(left.Data) != 1 || left.Data[0].ItemID != fmt.Sprintf("mailsvc-log-%d", queued.ID) || !left.Done {
		t.Fatalf("export after the erase = %+v, want the queued log only", left)
	}
	// Once the kept message is gone too, no answer names the person.
	if _, err := db.Logs().DeleteLogs(ctx, []int64{queued.ID}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/logs?per_page=100", "/logs?per_page=100&page=2", "/logs?search=receipt&per_page=100",
		"/logs?search=" + lower, fmt.Sprintf("/logs/%d", logs[0].ID), fmt.Sprintf("/logs/%d", logs[app.PrivacyPageSize].ID),
		"/privacy/export?email=" + lower, "/tools/debug-logs",
	} {
		r := do(t, ts, "GET", ns+path, "admin", nil)
		body := strings.ToLower(string(r.Body))
		if r.Status != 200 || strings.Contains(body, lower) || strings.Contains(body, "pat doe") || strings.Contains(body, "thanks, pat") {
			t.Errorf("GET %s = %d, still names the person: %s", path, r.Status, r.Body)
		}
	}
	if list, total, err := transcripts.List(ctx, 0, 0); err != nil || total != 1 || !strings.Contains(list[0].Transcript, "someone@") {
		t.Errorf("transcripts after the erase: %+v (%d, %v), want the other person's", list, total, err)
	}
	if l, err := db.Logs().FindLogByID(ctx, logs[app.PrivacyPageSize+1].ID); err != nil || l.Message.Text != "other" {
		t.Errorf("another person's log = %+v, %v", l, err)
	}
}

var _ api.PrivacyService = (*app.Privacy)(nil)
