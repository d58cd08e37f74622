package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// testSearchDictionaryInTheBackground: taking a message in (an enqueue,
// an import) writes nothing to the address dictionary, yet the message is found by domain,
// prefix and fragment at once (from its own addresses rows); the
// background enters the logs by id and stops before a row whose
// addresses are not written yet (a bridge row not indexed), the logs past
// it still found, and before a recent gap in the ids; an address
// rewritten on a log the background has passed (an erase) enters at
// once.
func (s *suite) testSearchDictionaryInTheBackground(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	from := core.Address{Email: "shop@example.com"}
	find := func(term string) []int64 {
		t.Helper()
		logs, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: term})
		if err != nil {
			t.Fatal(err)
		}
		return ids(logs)
	}
	want := func(term string, logs ...int64) {
		t.Helper()
		if got := find(term); !slices.Equal(got, logs) {
			t.Fatalf("search %q = %v, want %v", term, got, logs)
		}
	}
	l1 := importOne(t, db.Logs(), core.StatusDelivered, time.Now().UTC().Add(-time.Hour), core.Message{From: from, To: addr("Ann.Lee@acme.test"), Subject: "one"})
	l0 := Enqueue(t, db.Logs(), core.Message{From: from, To: addr("zoe@zeta.test"), Subject: "zero"})
	for _, email := range []string{"ann.lee@acme.test", "zoe@zeta.test"} {
		if dictionaryHas(t, db, email) {
			t.Fatalf("taking a log in wrote %s in the dictionary", email)
		}
	}
	want("zeta.test", l0.ID)
	for _, term := range []string{"acme.test", "@acme.test", "ann.lee@", "n.le"} {
		want(term, l1.ID)
	}

	// A row queued by the bridge, its addresses not written yet, then a
	// log after it.
	now := time.Now().UTC()
	if err := db.Gorm().Exec("INSERT INTO `"+db.TableName("logs")+"` (status, source, recipients, subject, text_body, html_body, message, "+
		"attempts, phase_attempts, used_fallback, simulated, provider_message_id, last_error, next_attempt_at, created_at, updated_at) "+
		"VALUES (?, 'wordpress', ?, 'two', '', '', ?, 0, 0, 0, 0, '', '', ?, ?, ?)", core.StatusDelivered, "queued@beta.test",
		`{"from":{"email":"wp@example.com"},"to":[{"email":"queued@beta.test"}]}`, now, now, now).Error; err != nil {
		t.Fatal(err)
	}
	var bridged int64
	if err := db.Gorm().Raw("SELECT MAX(id) FROM `" + db.TableName("logs") + "`").Scan(&bridged).Error; err != nil {
		t.Fatal(err)
	}
	l3 := Enqueue(t, db.Logs(), core.Message{From: from, To: addr("cara@gamma.test"), Subject: "three"})
	if _, err := db.SearchIndex().RunSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if !dictionaryHas(t, db, "ann.lee@acme.test") {
		t.Fatal("the background did not enter the first log's address")
	}
	if dictionaryHas(t, db, "cara@gamma.test") {
		t.Fatal("the background passed a log whose addresses are not written yet")
	}
	want("acme.test", l1.ID)
	want("gamma.test", l3.ID)
	want("car", l3.ID)

	// The searches indexed the bridge row first (SearchIndexPartial).
	if n, err := db.SearchIndex().IndexLogRecipients(ctx, 100); err != nil {
		t.Fatalf("IndexLogRecipients = %d, %v", n, err)
	}
	want("beta.test", bridged)
	if _, err := db.SearchIndex().RunSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	for _, email := range []string{"queued@beta.test", "cara@gamma.test"} {
		if !dictionaryHas(t, db, email) {
			t.Fatalf("%s not in the dictionary once the bridge row was indexed", email)
		}
	}
	want("gamma.test", l3.ID)
	want("beta.test", bridged)

	// An erase rewrites a log the background has passed: the new
	// address is found at once.
	if _, _, err := db.Privacy().EraseLogsNaming(ctx, "ann.lee@acme.test", "erased@site.invalid", 100); err != nil {
		t.Fatal(err)
	}
	if !dictionaryHas(t, db, "erased@site.invalid") {
		t.Fatal("the erase's address is not in the dictionary")
	}
	want("site.invalid", l1.ID)
	want("acme.test")

	// A gap in the ids next to a young log may be a log still being
	// written: the background stops before it; the logs past it are
	// still found.
	g1 := Enqueue(t, db.Logs(), core.Message{From: from, To: addr("g1@gap.test"), Subject: "g1"})
	g2 := Enqueue(t, db.Logs(), core.Message{From: from, To: addr("g2@gap.test"), Subject: "g2"})
	g3 := Enqueue(t, db.Logs(), core.Message{From: from, To: addr("g3@gap.test"), Subject: "g3"})
	if _, err := db.Logs().DeleteLogs(ctx, []int64{g2.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SearchIndex().IndexLogRecipients(ctx, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SearchIndex().RunSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if !dictionaryHas(t, db, "g1@gap.test") || dictionaryHas(t, db, "g3@gap.test") {
		t.Fatal("the background did not stop at the young gap in the ids")
	}
	want("gap.test", g3.ID, g1.ID)
}
