package http_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

// TestLogListFilters covers GET /logs's dates, search kinds, capped totals
// and bad input.
func TestLogListFilters(t *testing.T) {
	f := newDeliveryServer(t)
	ctx := context.Background()
	day := func(d int) time.Time { return time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC) }
	// Imported logs keep their times: March 1, 2 and 3, noon UTC.
	var ids []int64
	for i, to := range []string{"ann@example.com", "bob@example.com", "ann@example.com"} {
		l := &core.Log{Status: core.StatusDelivered, CreatedAt: day(i + 1), Message: core.Message{
			From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "x@example.com"}},
			Bcc: []core.Address{{Email: to}}, Subject: "Receipt " + strconv.Itoa(i+1),
		}}
		if i == 1 {
			l.Status = core.StatusFailed
		}
		if err := f.logs.ImportLogs(ctx, []*core.Log{l}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	list := func(t *testing.T, r reply) []int64 {
		t.Helper()
		var logs []core.Log
		r.json(t, &logs)
		var got []int64
		for _, l := range logs {
			got = append(got, l.ID)
		}
		return got
	}
	tests := []struct {
		name, query string
		status      int
		field       string
		want        []int64
	}{
		{"from a date", "date_from=2026-03-02", 200, "", []int64{ids[2], ids[1]}},
		{"to a date includes that day", "date_to=2026-03-02", 200, "", []int64{ids[1], ids[0]}},
		{"one day", "date_from=2026-03-02&date_to=2026-03-02", 200, "", []int64{ids[1]}},
		{"RFC 3339 bounds, both inclusive", "date_from=2026-03-01T12:00:00Z&date_to=2026-03-02T12:00:00Z", 200, "", []int64{ids[1], ids[0]}},
		{"offset time", "date_from=2026-03-03T13:00:00%2B02:00", 200, "", []int64{ids[2]}},
		{"status and dates", "status=failed&date_from=2026-03-01", 200, "", []int64{ids[1]}},
		{"bcc recipient, any case, with dates", "search=ANN@example.com&date_to=2026-03-02", 200, "", []int64{ids[0]}},
		{"subject word", "search=receipt", 200, "", []int64{ids[2], ids[1], ids[0]}},
		{"subject words", "search=receipt+3", 200, "", []int64{ids[2]}},
		{"not a date", "date_from=yesterday", 422, "date_from", nil},
		{"not a date either", "date_to=2026-13-01", 422, "date_to", nil},
		{"range ends before it starts", "date_from=2026-03-03&date_to=2026-03-02", 422, "date_to", nil},
		{"RFC 3339 range ends before it starts", "date_from=2026-03-03T10:00:00Z&date_to=2026-03-03T09:59:59Z", 422, "date_to", nil},
		{"bad date and bad status", "date_from=x&status=nope", 422, "status", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, f.ts, "GET", ns+"/logs?"+tt.query, "admin", strings.NewReader(""))
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if tt.status != 200 {
				code, _, fields := r.errorCode(t)
				if code != "validation_error" || fields[tt.field] == "" {
					t.Fatalf("error %s, fields %v", code, fields)
				}
				return
			}
			got := list(t, r)
			if len(got) != len(tt.want) || r.Header.Get("X-WP-Total") != strconv.Itoa(len(tt.want)) || r.Header.Get("X-Mailsvc-Total-Capped") != "" {
				t.Fatalf("got %v headers %v, want %v", got, r.Header, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
	// Bad input wrote nothing.
	if st, _ := f.logs.QueueStats(ctx); st.Delivered+st.Failed+st.Queued+st.Sending != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// TestLogListCappedTotal: past app.LogCountCap matches the total is
// capped and flagged, and the pages after the cap still answer.
func TestLogListCappedTotal(t *testing.T) {
	f := newDeliveryServer(t)
	ctx := context.Background()
	n := app.LogCountCap + 5
	batch := make([]*core.Log, 0, n)
	for i := range n {
		batch = append(batch, &core.Log{Status: core.StatusDelivered, CreatedAt: time.Unix(int64(1_700_000_000+i), 0),
			Message: core.Message{From: core.Address{Email: "s@example.com"}, To: []core.Address{{Email: "r@example.com"}}, Subject: "Bulk"}})
	}
	if err := f.logs.ImportLogs(ctx, batch); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query        string
		total, pages string
		capped       string
		items        int
		firstID      int64
	}{
		{"per_page=100", strconv.Itoa(app.LogCountCap), "100", "true", 100, batch[n-1].ID},
		// The last page counts far enough to see the end: exact again.
		{"per_page=100&page=101", "10005", "101", "", 5, batch[4].ID},
		{"per_page=10&page=1000", "10000", "1000", "true", 10, batch[n-1-9990].ID},
		{"per_page=100&search=r@example.com&date_from=2023-11-14T22:13:20Z&date_to=2023-11-14T22:13:29Z", "10", "1", "", 10, batch[9].ID},
		{"per_page=100&status=failed", "0", "0", "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := do(t, f.ts, "GET", ns+"/logs?"+tt.query, "admin", strings.NewReader(""))
			var logs []core.Log
			r.json(t, &logs)
			if r.Status != 200 || r.Header.Get("X-WP-Total") != tt.total || r.Header.Get("X-WP-TotalPages") != tt.pages ||
				r.Header.Get("X-Mailsvc-Total-Capped") != tt.capped || len(logs) != tt.items {
				t.Fatalf("status %d, %d items, headers %v", r.Status, len(logs), r.Header)
			}
			if tt.items > 0 && logs[0].ID != tt.firstID {
				t.Fatalf("first id %d, want %d", logs[0].ID, tt.firstID)
			}
		})
	}
}

// TestLogBodyDetailAndResend covers the log body fields of GET
// /logs/{id}, PUT /settings log_body, and the refused resends: 409 with
// the reason for a redacted log and for a log without a body, 200 for a
// whole one.
func TestLogBodyDetailAndResend(t *testing.T) {
	f := newDeliveryServer(t)
	ctx := context.Background()
	link := "http://example.test/wp-login.php?action=rp&key=L1veKey&login=bob"
	m := core.Message{From: core.Address{Email: "site@example.com"}, To: []core.Address{{Email: "bob@example.com"}}, Subject: "Reset", Text: "Visit " + link}
	final := func(body *core.KeptBody) int64 {
		l := &core.Log{Message: m, Source: "wp_mail"}
		if err := f.logs.EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		if _, err := f.logs.ClaimLogs(ctx, "w", 1, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := f.logs.RecordOutcomes(ctx, "w", []core.LogOutcome{{LogID: l.ID, Status: core.StatusDelivered, Body: body}}); err != nil {
			t.Fatal(err)
		}
		return l.ID
	}
	redacted := final(&core.KeptBody{Mode: core.LogBodyRedacted, Text: "Visit [kept]", Changed: true, Redacted: 1})
	none := final(&core.KeptBody{Mode: core.LogBodyNone, Changed: true})
	whole := final(&core.KeptBody{Mode: core.LogBodyRedacted})
	pending := &core.Log{Message: m, Source: "wp_mail"}
	if err := f.logs.EnqueueLog(ctx, pending); err != nil {
		t.Fatal(err)
	}

	var detail struct {
		BodyMode        string `json:"body_mode"`
		RedactedCount   int    `json:"redacted_count"`
		AttachmentsKept bool   `json:"attachments_kept"`
		Message         struct {
			Text string `json:"text"`
		} `json:"message"`
	}
	r := do(t, f.ts, "GET", ns+"/logs/"+strconv.FormatInt(redacted, 10), "admin", nil)
	r.json(t, &detail)
	if detail.BodyMode != "redacted" || detail.RedactedCount != 1 || !detail.AttachmentsKept || detail.Message.Text != "Visit [kept]" {
		t.Errorf("redacted log detail = %+v", detail)
	}
	// A queued log is shown as its mode will keep it: no live link on
	// screen, while the queue still holds the whole message.
	r = do(t, f.ts, "GET", ns+"/logs/"+strconv.FormatInt(pending.ID, 10), "admin", nil)
	r.json(t, &detail)
	if strings.Contains(string(r.Body), "L1veKey") || detail.RedactedCount != 1 || detail.BodyMode != "" {
		t.Errorf("queued log detail shows %s", r.Body)
	}
	if stored, _ := f.logs.FindLogByID(ctx, pending.ID); stored.Message.Text != m.Text {
		t.Errorf("viewing a queued log changed it: %q", stored.Message.Text)
	}
	if r := do(t, f.ts, "PUT", ns+"/settings", "admin", strings.NewReader(`{"log_body":"full"}`)); r.Status != 200 {
		t.Fatalf("PUT log_body: %d %s", r.Status, r.Body)
	}
	r = do(t, f.ts, "GET", ns+"/logs/"+strconv.FormatInt(pending.ID, 10), "admin", nil)
	if !strings.Contains(string(r.Body), "L1veKey") {
		t.Errorf("log_body full: the queued log is shown without its body: %s", r.Body)
	}

	tests := []struct {
		name   string
		id     int64
		status int
		reason string
	}{
		{"redacted", redacted, 409, "this message held a one-time link that was not kept"},
		{"no body", none, 409, "keeps no body"},
		{"whole", whole, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, f.ts, "POST", ns+"/logs/"+strconv.FormatInt(tt.id, 10)+"/resend", "admin", strings.NewReader(""))
			if r.Status != tt.status || !strings.Contains(string(r.Body), tt.reason) {
				t.Fatalf("resend: %d %s; want %d with %q", r.Status, r.Body, tt.status, tt.reason)
			}
			if tt.status == 409 {
				if code, _, _ := r.errorCode(t); code != "conflict" {
					t.Errorf("code %s, want conflict", code)
				}
			}
		})
	}
	r = do(t, f.ts, "POST", ns+"/logs/resend", "admin", strings.NewReader(`{"ids":[`+strconv.FormatInt(redacted, 10)+`,`+strconv.FormatInt(none, 10)+`]}`))
	if r.Status != 200 || !strings.Contains(string(r.Body), `"resent":0`) {
		t.Errorf("bulk resend of logs that are not whole: %d %s", r.Status, r.Body)
	}
}
