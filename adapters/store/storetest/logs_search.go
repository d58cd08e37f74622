package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// importOne imports one log with its own creation time.
func importOne(t *testing.T, db LogStore, status string, created time.Time, m core.Message) *core.Log {
	t.Helper()
	l := &core.Log{Status: status, CreatedAt: created, UpdatedAt: created, Message: m, Source: "import"}
	if err := db.ImportLogs(context.Background(), []*core.Log{l}); err != nil {
		t.Fatalf("ImportLogs: %v", err)
	}
	return l
}

func addr(email string) []core.Address { return []core.Address{{Name: "Some One", Email: email}} }

func (s *suite) testSearchRecipientsAndWords(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	day := func(d int) time.Time { return time.Date(2026, 3, d, 9, 0, 0, 0, time.UTC) }
	from := core.Address{Email: "shop@example.com"}
	l1 := importOne(t, db.Logs(), core.StatusDelivered, day(1), core.Message{From: from, To: addr("ann@example.com"), Subject: "Invoice April"})
	l2 := importOne(t, db.Logs(), core.StatusFailed, day(2), core.Message{From: from, To: addr("x@example.com"), Cc: addr("ANN@Example.com"), Subject: "Welcome aboard"})
	l3 := importOne(t, db.Logs(), core.StatusDelivered, day(3), core.Message{From: from, To: addr("x@example.com"), Bcc: addr("ann@example.com"), Subject: "Invoice May"})
	// Sender and reply-to are not recipients; look-alike addresses differ.
	l4 := importOne(t, db.Logs(), core.StatusDelivered, day(4), core.Message{From: core.Address{Email: "ann@example.com"}, ReplyTo: addr("ann@example.com"), To: addr("bob@example.com"), Subject: "Receipt"})
	importOne(t, db.Logs(), core.StatusDelivered, day(5), core.Message{From: from, To: []core.Address{{Email: "xann@example.com"}, {Email: "ann@example.co"}}, Subject: "Look-alikes"})
	l6 := Enqueue(t, db.Logs(), core.Message{From: from, To: []core.Address{{Email: "Ann@Example.COM"}, {Email: "ann@example.com"}}, Subject: "Invoice June"})

	march := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name string
		f    core.LogFilter
		want []*core.Log
	}{
		{"address in to, cc and bcc", core.LogFilter{Search: "ann@example.com"}, []*core.Log{l6, l3, l2, l1}},
		{"address ignores case", core.LogFilter{Search: " ANN@EXAMPLE.COM "}, []*core.Log{l6, l3, l2, l1}},
		{"address and status", core.LogFilter{Search: "ann@example.com", Status: core.StatusDelivered}, []*core.Log{l3, l1}},
		{"address and dates", core.LogFilter{Search: "ann@example.com", CreatedFrom: march(2), CreatedBefore: march(4)}, []*core.Log{l3, l2}},
		{"another address", core.LogFilter{Search: "bob@example.com"}, []*core.Log{l4}},
		{"unknown address", core.LogFilter{Search: "nobody@example.com"}, nil},
		{"subject word", core.LogFilter{Search: "invoice"}, []*core.Log{l6, l3, l1}},
		{"subject word prefix", core.LogFilter{Search: "INVOI"}, []*core.Log{l6, l3, l1}},
		{"subject words", core.LogFilter{Search: "invoice may"}, []*core.Log{l3}},
		{"subject words in any order", core.LogFilter{Search: "May Invoice"}, []*core.Log{l3}},
		{"a short word keeps the term as typed", core.LogFilter{Search: "ice ma"}, nil},
		{"a short word, as typed", core.LogFilter{Search: "invoice ma"}, []*core.Log{l3}},
		{"inside a word is not a word", core.LogFilter{Search: "voice"}, nil},
		{"words, status and dates", core.LogFilter{Search: "invoice", Status: core.StatusDelivered, CreatedFrom: march(2)}, []*core.Log{l3}},
		{"dates only", core.LogFilter{CreatedFrom: march(2), CreatedBefore: march(4)}, []*core.Log{l3, l2}},
		{"status and date", core.LogFilter{Status: core.StatusFailed, CreatedBefore: march(3)}, []*core.Log{l2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs, total, err := db.Logs().FindLogs(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(logs), ids(tt.want)) || total != len(tt.want) {
				t.Fatalf("got %v (total %d), want %v", ids(logs), total, ids(tt.want))
			}
		})
	}
	// A capped count stops one past the cap; the page is still served.
	logs, total, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "ann@example.com", CountUpTo: 2, Limit: 3})
	if err != nil || total != 3 || len(logs) != 3 {
		t.Fatalf("capped: %d logs, total %d (%v); want 3 logs, total 3", len(logs), total, err)
	}
	if _, total, err := db.Logs().FindLogs(ctx, core.LogFilter{CountUpTo: 10}); err != nil || total != 6 {
		t.Fatalf("under the cap: total %d (%v), want 6", total, err)
	}
}

// bucketSums adds up the roll-ups by connection and status.
func bucketSums(t *testing.T, bs []core.OutcomeBucket) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for i, b := range bs {
		if !b.Start.Equal(b.Start.Truncate(core.OutcomeBucketSize)) || b.Start.Location() != time.UTC {
			t.Fatalf("bucket start %v is not a UTC 15-minute boundary", b.Start)
		}
		if i > 0 && b.Start.Before(bs[i-1].Start) {
			t.Fatalf("buckets out of order: %+v", bs)
		}
		out[fmt.Sprintf("%d/%s", b.ConnectionID, b.Status)] += b.Count
	}
	return out
}

func (s *suite) testOutcomeRollups(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	c1, c2 := int64(1), int64(2)
	var logs []*core.Log
	for i := range 5 {
		logs = append(logs, Enqueue(t, db.Logs(), Message(i)))
	}
	Claim(t, db.Logs(), "w", 10, time.Hour)
	outs := []core.LogOutcome{
		{LogID: logs[0].ID, Status: core.StatusDelivered, Attempts: 1, SentConnectionID: &c1},
		// A temporary failure: a retry, not a final outcome.
		{LogID: logs[1].ID, Status: core.StatusQueued, Attempts: 1, SentConnectionID: &c1},
		{LogID: logs[2].ID, Status: core.StatusFailed, Attempts: 3, SentConnectionID: &c1},
		// Delivered by the fallback connection.
		{LogID: logs[3].ID, Status: core.StatusDelivered, Attempts: 4, UsedFallback: true, SentConnectionID: &c2},
		// Delivered and not kept (log_emails off): still counted.
		{LogID: logs[4].ID, Status: core.StatusDelivered, Attempts: 1, SentConnectionID: &c1, Delete: true},
	}
	if n, err := db.Logs().RecordOutcomes(ctx, "other", outs); err != nil || n != 0 {
		t.Fatalf("non-owner RecordOutcomes = %d, %v", n, err)
	}
	if n, err := db.Logs().RecordOutcomes(ctx, "w", outs); err != nil || n != 5 {
		t.Fatalf("RecordOutcomes = %d, %v", n, err)
	}
	// The retry goes to the fallback connection and is delivered.
	if again := Claim(t, db.Logs(), "w", 10, time.Hour); len(again) != 1 || again[0].ID != logs[1].ID {
		t.Fatalf("retry claim = %v", ids(again))
	}
	if n, err := db.Logs().RecordOutcomes(ctx, "w", []core.LogOutcome{{LogID: logs[1].ID, Status: core.StatusDelivered, Attempts: 2, UsedFallback: true, SentConnectionID: &c2}}); err != nil || n != 1 {
		t.Fatalf("RecordOutcomes retry = %d, %v", n, err)
	}
	// The same outcome again applies to nothing and counts nothing.
	if n, err := db.Logs().RecordOutcomes(ctx, "w", []core.LogOutcome{{LogID: logs[1].ID, Status: core.StatusDelivered, SentConnectionID: &c2}}); err != nil || n != 0 {
		t.Fatalf("RecordOutcomes replay = %d, %v", n, err)
	}
	window := func() (time.Time, time.Time) { return time.Now().Add(-time.Hour), time.Now().Add(time.Hour) }
	want := map[string]int64{"1/delivered": 2, "1/failed": 1, "2/delivered": 2}
	lo, hi := window()
	bs, err := db.Logs().OutcomeBuckets(ctx, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	if got := bucketSums(t, bs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("roll-ups %v, want %v", got, want)
	}

	// Concurrent batches into the same bucket add up exactly.
	var more []*core.Log
	for i := range 40 {
		more = append(more, Enqueue(t, db.Logs(), Message(100+i)))
	}
	c3 := int64(3)
	var wg sync.WaitGroup
	// Each worker claims until it finds nothing: a claim skips the rows
	// another claim holds, so one may come back short (or empty) while
	// the others still hold theirs.
	deliver := func(owner string) bool {
		got, err := db.Logs().ClaimLogs(ctx, owner, 10, time.Hour)
		if err != nil {
			t.Error(err)
			return false
		}
		var outs []core.LogOutcome
		for _, l := range got {
			outs = append(outs, core.LogOutcome{LogID: l.ID, Status: core.StatusDelivered, Attempts: 1, SentConnectionID: &c3})
		}
		if n, err := db.Logs().RecordOutcomes(ctx, owner, outs); err != nil || n != len(outs) {
			t.Errorf("RecordOutcomes %s = %d, %v", owner, n, err)
		}
		return len(got) > 0
	}
	for w := range 4 {
		wg.Go(func() {
			for deliver(fmt.Sprintf("w%d", w)) {
			}
		})
	}
	wg.Wait()
	for deliver("last") {
	}
	want["3/delivered"] = 40
	lo, hi = window()
	bs, err = db.Logs().OutcomeBuckets(ctx, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	if got := bucketSums(t, bs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("roll-ups after concurrent batches %v, want %v", got, want)
	}

	// Deleting and purging logs leaves the history as it is.
	if _, err := db.Logs().DeleteLogs(ctx, ids(more[:5])); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Logs().PurgeLogs(ctx, time.Now().Add(time.Minute), 7); err != nil || n != 39 {
		t.Fatalf("PurgeLogs = %d, %v; want 39", n, err)
	}
	lo, hi = window()
	if bs, err = db.Logs().OutcomeBuckets(ctx, lo, hi); err != nil || fmt.Sprint(bucketSums(t, bs)) != fmt.Sprint(want) {
		t.Fatalf("roll-ups after deleting logs %v (%v), want %v", bucketSums(t, bs), err, want)
	}
	var orphans int
	if err := db.Gorm().Raw("SELECT COUNT(*) FROM `" + db.TableName("log_recipients") + "` WHERE log_id NOT IN (SELECT id FROM `" + db.TableName("logs") + "`)").Scan(&orphans).Error; err != nil || orphans != 0 {
		t.Fatalf("%d recipients rows outlived their logs (%v)", orphans, err)
	}
	if found, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "ann100@example.com"}); err != nil || len(found) != 0 {
		t.Fatalf("a purged log is still found: %v %v", ids(found), err)
	}
}

func (s *suite) testImportLogs(t *testing.T) {
	ctx := context.Background()
	db := s.logs(t)
	c1 := int64(1)
	at := func(h, m int) time.Time { return time.Date(2026, 3, 1, h, m, 0, 0, time.UTC) }
	d1, d2 := at(10, 7), at(10, 14)
	batch := []*core.Log{
		{Status: core.StatusDelivered, CreatedAt: at(10, 5), DeliveredAt: &d1, SentConnectionID: &c1, Attempts: 1,
			Message: core.Message{From: core.Address{Email: "s@example.com"}, To: addr("old1@example.com"), Subject: "Archived newsletter", Text: "body"},
			History: []core.Attempt{{ConnectionID: 1, At: d1, Outcome: core.OutcomeDelivered}}},
		{Status: core.StatusDelivered, CreatedAt: at(10, 6), UpdatedAt: d2, SentConnectionID: &c1,
			Message: core.Message{From: core.Address{Email: "s@example.com"}, To: addr("old2@example.com"), Subject: "Archived receipt"}},
		{Status: core.StatusFailed, CreatedAt: at(10, 1), UpdatedAt: at(10, 20), LastError: "550 no such user",
			Message: core.Message{From: core.Address{Email: "s@example.com"}, Cc: addr("old3@example.com"), Subject: "Archived bounce"}},
	}
	if err := db.ImportLogs(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for _, l := range batch {
		if l.ID == 0 {
			t.Fatal("ImportLogs set no ID")
		}
	}
	got, err := db.FindLogByID(ctx, batch[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.Equal(at(10, 5)) || got.DeliveredAt == nil || !got.DeliveredAt.Equal(d1) || got.Status != core.StatusDelivered ||
		got.Source != "" || len(got.History) != 1 || got.History[0].LogID != batch[0].ID || got.Message.Text != "body" {
		t.Fatalf("imported log %+v", got)
	}
	bs, err := db.OutcomeBuckets(ctx, at(10, 0), at(10, 30))
	if err != nil {
		t.Fatal(err)
	}
	want := []core.OutcomeBucket{
		{Start: at(10, 0), ConnectionID: 1, Status: core.StatusDelivered, Count: 2},
		{Start: at(10, 15), ConnectionID: 0, Status: core.StatusFailed, Count: 1},
	}
	if fmt.Sprint(bs) != fmt.Sprint(want) {
		t.Fatalf("buckets %+v, want %+v", bs, want)
	}
	if bs, err := db.OutcomeBuckets(ctx, at(10, 15), at(10, 30)); err != nil || len(bs) != 1 || bs[0].Status != core.StatusFailed {
		t.Fatalf("[10:15, 10:30) = %+v, %v", bs, err)
	}
	for search, want := range map[string]int64{"OLD3@example.com": batch[2].ID, "newsletter": batch[0].ID} {
		if found, _, err := db.FindLogs(ctx, core.LogFilter{Search: search}); err != nil || len(found) != 1 || found[0].ID != want {
			t.Fatalf("search %q = %v (%v), want [%d]", search, ids(found), err, want)
		}
	}
	// A queued log cannot be imported, and a bad batch writes nothing.
	bad := []*core.Log{
		{Status: core.StatusDelivered, Message: core.Message{Subject: "fine"}},
		{Status: core.StatusQueued, Message: core.Message{Subject: "would be sent"}},
	}
	WantCode(t, db.ImportLogs(ctx, bad), core.EINVALID)
	if _, total, err := db.FindLogs(ctx, core.LogFilter{}); err != nil || total != 3 {
		t.Fatalf("%d logs after a refused import (%v), want 3", total, err)
	}
}

// testBridgeRowsBackfill: rows written without recipients rows (by the PHP
// bridge when its insert failed, or before the recipients table existed)
// are found once a claim or the idle backfill indexed them.
func (s *suite) testBridgeRowsBackfill(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	raw := func(status, to, subject string) {
		t.Helper()
		now := time.Now().UTC()
		msg := fmt.Sprintf(`{"from":{"email":"wp@example.com"},"to":[{"email":%q}],"bcc":[{"email":"Audit@Example.com"}]}`, to)
		if err := db.Gorm().Exec("INSERT INTO `"+db.TableName("logs")+"` (status, source, recipients, subject, text_body, html_body, message, "+
			"attempts, phase_attempts, used_fallback, simulated, provider_message_id, last_error, next_attempt_at, created_at, updated_at) "+
			"VALUES (?, 'wordpress', ?, ?, '', '', ?, 0, 0, 0, 0, '', '', ?, ?, ?)", status, to, subject, msg, now, now, now).Error; err != nil {
			t.Fatal(err)
		}
	}
	found := func(address string) int {
		t.Helper()
		_, total, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: address})
		if err != nil {
			t.Fatal(err)
		}
		return total
	}
	raw(core.StatusDelivered, "old@example.com", "before the table")
	if n := found("old@example.com"); n != 0 && db.Dialect() == store.DialectMySQL {
		t.Fatalf("found %d before indexing", n)
	}
	// An idle claim indexes older rows.
	if got := Claim(t, db.Logs(), "w", 5, time.Minute); len(got) != 0 {
		t.Fatalf("claimed %v", ids(got))
	}
	if n := found("OLD@example.com"); n != 1 {
		t.Fatalf("found %d after the idle backfill, want 1", n)
	}
	raw(core.StatusQueued, "queued@example.com", "from wp_mail")
	// SQLite finds rows not indexed yet through its pending index; MySQL
	// once the claim (or the backfill) indexed them.
	if n, want := found("queued@example.com"), map[string]int{store.DialectMySQL: 0, store.DialectSQLite: 1}[db.Dialect()]; n != want {
		t.Fatalf("found %d before the claim, want %d", n, want)
	}
	if n := found("ueued@example.com"); n != 0 {
		t.Fatalf("a part of an address found %d", n)
	}
	if got := Claim(t, db.Logs(), "w", 5, time.Minute); len(got) != 1 {
		t.Fatalf("claimed %v", ids(got))
	}
	if n := found("queued@example.com"); n != 1 {
		t.Fatalf("found %d after the claim, want 1", n)
	}
	if n := found("audit@example.com"); n != 2 {
		t.Fatalf("bcc found %d, want 2", n)
	}
	if n, err := db.SearchIndex().IndexLogRecipients(ctx, 100); err != nil || n != 0 {
		t.Fatalf("IndexLogRecipients after everything was indexed = %d, %v", n, err)
	}
}
