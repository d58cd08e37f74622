package http_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// TestLogSearchPartialHeader: while the search's address index is still
// being filled (logs from before it), a search by domain, prefix or
// fragment says so with X-Mailsvc-Search-Partial: true and finds the logs
// already indexed; an exact address or subject words search does not depend on
// it and is never flagged; once the background backfill is done the
// header goes and every log is found.
func TestLogSearchPartialHeader(t *testing.T) {
	ts, db, _ := newPrivacyServer(t)
	ctx := context.Background()
	old := &core.Log{Status: core.StatusDelivered, CreatedAt: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), Message: core.Message{
		From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "ann@acme.com"}}, Subject: "Old invoice"}}
	if err := db.Logs().ImportLogs(ctx, []*core.Log{old}); err != nil {
		t.Fatal(err)
	}
	// As schema 19 finds a log written before it: not in the dictionary,
	// the backfill's target past it.
	for _, q := range []string{
		"DELETE FROM `" + db.TableName("search_grams") + "`",
		"DELETE FROM `" + db.TableName("search_addresses") + "`",
		"UPDATE `" + db.TableName("search_progress") + "` SET done_up_to = 0, target = " + "(SELECT MAX(id) FROM `" + db.TableName("logs") + "`) WHERE name = 'addresses'",
	} {
		if err := db.Gorm().Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	fresh := &core.Log{Status: core.StatusDelivered, CreatedAt: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), Message: core.Message{
		From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "bob@acme.com"}}, Subject: "New invoice"}}
	if err := db.Logs().ImportLogs(ctx, []*core.Log{fresh}); err != nil {
		t.Fatal(err)
	}
	search := func(t *testing.T, term string) (string, int) {
		t.Helper()
		r := do(t, ts, "GET", ns+"/logs?search="+url.QueryEscape(term), "admin", strings.NewReader(""))
		var logs []core.Log
		r.json(t, &logs)
		if r.Status != 200 {
			t.Fatalf("search %q: status %d", term, r.Status)
		}
		return r.Header.Get("X-Mailsvc-Search-Partial"), len(logs)
	}
	tests := []struct {
		term          string
		partial       string
		before, after int
	}{
		{"@acme.com", "true", 1, 2},
		{"acme.com", "true", 1, 2},
		{"ann", "true", 0, 1},
		{"ann@", "true", 0, 1},
		{"ann@acme.com", "", 1, 1},
		// A word is also a fragment of addresses: flagged too.
		{"invoice", "true", 2, 2},
		{"old invoice", "", 1, 1},
		// Under three characters: the subject only.
		{"an", "", 0, 0},
	}
	for _, tt := range tests {
		if partial, n := search(t, tt.term); partial != tt.partial || n != tt.before {
			t.Errorf("before the backfill, %q: partial %q, %d logs; want %q, %d", tt.term, partial, n, tt.partial, tt.before)
		}
	}
	if _, err := db.SearchIndex().RunSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		if partial, n := search(t, tt.term); partial != "" || n != tt.after {
			t.Errorf("after the backfill, %q: partial %q, %d logs; want none, %d", tt.term, partial, n, tt.after)
		}
	}
}
