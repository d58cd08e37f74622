package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// dictionaryHas reports whether the search dictionary holds email.
func dictionaryHas(t *testing.T, db *store.DB, email string) bool {
	t.Helper()
	var n int64
	if err := db.Gorm().Raw("SELECT COUNT(*) FROM `"+db.TableName("search_addresses")+"` WHERE email = ?", email).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// testSearchAddressParts: a search finds logs by a recipient's domain
// (with or without @, subdomains included), by the start of an address
// (local@) and by a part of the local part of at least three characters,
// alongside the subject's words, with the status and date filters; both
// ways of matching (the dictionary's few addresses, or each log checked
// newest first) answer the same; an erased or deleted log is no longer
// found and its addresses leave the dictionary.
func (s *suite) testSearchAddressParts(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	day := func(d int) time.Time { return time.Date(2026, 3, d, 9, 0, 0, 0, time.UTC) }
	from := core.Address{Email: "shop@acme.com"}
	l1 := importOne(t, db.Logs(), core.StatusDelivered, day(1), core.Message{From: from, To: addr("Ann.Lee@ACME.com"), Subject: "Invoice April"})
	l2 := importOne(t, db.Logs(), core.StatusFailed, day(2), core.Message{From: from, To: addr("bob@mail.acme.com"), Subject: "Welcome"})
	// Look-alike domain, sender and Reply-To only: not found by acme.com.
	l3 := importOne(t, db.Logs(), core.StatusDelivered, day(3), core.Message{From: from, Cc: addr("carol@acme.com.au"), ReplyTo: addr("zed@acme.com"), Subject: "Receipt"})
	l4 := importOne(t, db.Logs(), core.StatusDelivered, day(4), core.Message{From: from, To: addr("user5000@example79.test"), Subject: "Order shipped"})
	l5 := importOne(t, db.Logs(), core.StatusFailed, day(5), core.Message{From: from, Bcc: addr("user50001@other.test"), Subject: "Order failed"})
	// The term in the subject only: found by the subject's words.
	l6 := importOne(t, db.Logs(), core.StatusDelivered, day(6), core.Message{From: from, To: addr("dave@zeta.test"), Subject: "Hello user5000"})
	l7 := Enqueue(t, db.Logs(), core.Message{From: from, To: addr("xuser5000x@zeta.test"), Subject: "Pending"})
	_ = l3

	march := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name string
		f    core.LogFilter
		want []*core.Log
	}{
		{"domain, subdomains included", core.LogFilter{Search: "acme.com"}, []*core.Log{l2, l1}},
		{"@domain", core.LogFilter{Search: "@ACME.com"}, []*core.Log{l2, l1}},
		{"@subdomain", core.LogFilter{Search: "@mail.acme.com"}, []*core.Log{l2}},
		{"another domain", core.LogFilter{Search: "example79.test"}, []*core.Log{l4}},
		{"look-alike domain", core.LogFilter{Search: "@acme.com.au"}, []*core.Log{l3}},
		{"unknown domain", core.LogFilter{Search: "@nowhere.test"}, nil},
		{"start of an address, and the subject", core.LogFilter{Search: "user5000"}, []*core.Log{l7, l6, l5, l4}},
		{"whole local part", core.LogFilter{Search: "User5000@"}, []*core.Log{l4}},
		{"local part is not a prefix", core.LogFilter{Search: "5000@"}, nil},
		{"fragment of the local part", core.LogFilter{Search: "ser500"}, []*core.Log{l7, l5, l4}},
		{"three characters", core.LogFilter{Search: "lee"}, []*core.Log{l1}},
		{"a fragment across the @ is not a fragment", core.LogFilter{Search: "lee@acme"}, nil},
		{"two characters search the subject only", core.LogFilter{Search: "ee"}, nil},
		{"two characters of a subject", core.LogFilter{Search: "Wel"}, []*core.Log{l2}},
		{"wildcards are literal", core.LogFilter{Search: "us%5000"}, nil},
		{"fragment and status", core.LogFilter{Search: "user5000", Status: core.StatusFailed}, []*core.Log{l5}},
		{"fragment, status and subject", core.LogFilter{Search: "user5000", Status: core.StatusDelivered}, []*core.Log{l6, l4}},
		{"domain and dates", core.LogFilter{Search: "@acme.com", CreatedFrom: march(2), CreatedBefore: march(5)}, []*core.Log{l2}},
		{"fragment and dates", core.LogFilter{Search: "user5000", CreatedBefore: march(6)}, []*core.Log{l5, l4}},
		{"subject word beside no address", core.LogFilter{Search: "order"}, []*core.Log{l5, l4}},
		{"page two", core.LogFilter{Search: "user5000", Offset: 1, Limit: 2}, []*core.Log{l6, l5}},
	}
	run := func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				logs, total, err := db.Logs().FindLogs(ctx, tt.f)
				if err != nil {
					t.Fatal(err)
				}
				all := tt.want
				if tt.f.Limit > 0 {
					all = []*core.Log{l7, l6, l5, l4} // the page's whole list
				}
				if !slices.Equal(ids(logs), ids(tt.want)) || total != len(all) {
					t.Fatalf("got %v (total %d), want %v (total %d)", ids(logs), total, ids(tt.want), len(all))
				}
			})
		}
		// A capped count stops one past the cap; the page is still served.
		logs, total, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "user5000", CountUpTo: 2, Limit: 1})
		if err != nil || total != 3 || len(logs) != 1 || logs[0].ID != l7.ID {
			t.Fatalf("capped: %v, total %d (%v); want [%d], total 3", ids(logs), total, err, l7.ID)
		}
	}
	t.Run("pieces not written yet", run)
	if _, err := db.SearchIndex().RunSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	t.Run("dictionary", run)
	db.SearchIndex().SetSearchNarrowLimits(0, 0)
	t.Run("each log checked", run)
	db.SearchIndex().SetSearchNarrowLimits(1000, 0)
	t.Run("addresses, then each log checked", run)
	if partial, err := db.Logs().SearchIndexPartial(ctx); err != nil || partial {
		t.Fatalf("SearchIndexPartial = %v, %v; want false", partial, err)
	}

	// Erased: no longer found, and out of the dictionary.
	if _, _, err := db.Privacy().EraseLogsNaming(ctx, "ann.lee@acme.com", "deleted@site.invalid", 100); err != nil {
		t.Fatal(err)
	}
	// Deleted (retention, DELETE /logs): its addresses leave with the
	// background sweep.
	if _, err := db.Logs().DeleteLogs(ctx, []int64{l2.ID}); err != nil {
		t.Fatal(err)
	}
	for _, limits := range [][2]int{{1000, 3000}, {0, 0}} {
		db.SearchIndex().SetSearchNarrowLimits(limits[0], limits[1])
		for _, term := range []string{"lee", "@acme.com", "ann.lee@acme.com", "bob", "mail.acme.com"} {
			if logs, total, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: term}); err != nil || len(logs) != 0 || total != 0 {
				t.Fatalf("%q after erase and delete (limits %v): %v, total %d, %v", term, limits, ids(logs), total, err)
			}
		}
	}
	if dictionaryHas(t, db, "ann.lee@acme.com") {
		t.Fatal("the erased address is still in the search dictionary")
	}
	if _, err := db.SearchIndex().RunSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if dictionaryHas(t, db, "bob@mail.acme.com") {
		t.Fatal("the deleted log's address is still in the search dictionary after the sweep")
	}
	if !dictionaryHas(t, db, "user5000@example79.test") {
		t.Fatal("the sweep removed an address a log still names")
	}
	t.Run("page of a broad term, by log id", s.searchPageByLogID)
}

// searchPageByLogID: a broad term without filters whose count the
// dictionary side has already capped reads only its page, from the
// recipients rows with the highest log ids; logs whose ids are not in
// their creation order (an imported log, newer than logs written after
// it) still come in list order, as the other ways give them.
func (s *suite) searchPageByLogID(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	day := func(d int) time.Time { return time.Date(2026, 4, d, 9, 0, 0, 0, time.UTC) }
	from := core.Address{Email: "shop@acme.com"}
	one := func(d int, to string) *core.Log {
		return importOne(t, db.Logs(), core.StatusDelivered, day(d), core.Message{From: from, To: addr(to), Subject: "Receipt"})
	}
	a1 := one(1, "xabcx1@t.test")
	one(2, "nomatch@t.test")
	a2 := one(3, "abc2@t.test")
	a3 := one(10, "yabc3@t.test") // newer than the matches written after it
	a4 := one(5, "abc4@t.test")
	one(11, "other@t.test") // newer, not a match, id above a3's
	a5 := one(4, "abc5@t.test")
	if _, err := db.SearchIndex().RunSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	order := []*core.Log{a3, a4, a5, a2, a1}
	tests := []struct {
		name          string
		offset, limit int
	}{
		{"first page, a match created out of id order", 0, 2},
		{"second page", 1, 2},
		{"one", 0, 1},
		{"third page", 2, 1},
	}
	// The count stops at 4 (more than 3): (1000, 3) gives the dictionary
	// side 4 logs, enough to cap it without reading the logs.
	for _, limits := range [][2]int{{1000, 3000}, {1000, 3}} {
		db.SearchIndex().SetSearchNarrowLimits(limits[0], limits[1])
		for _, tt := range tests {
			logs, total, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "abc", Offset: tt.offset, Limit: tt.limit, CountUpTo: 3})
			want := order[tt.offset : tt.offset+tt.limit]
			if err != nil || !slices.Equal(ids(logs), ids(want)) || total != 4 {
				t.Fatalf("%s (limits %v): %v, total %d, %v; want %v, total 4", tt.name, limits, ids(logs), total, err, ids(want))
			}
		}
	}
}

// testSearchBackfill: logs from before the dictionary (here: its rows
// removed and the backfill set back, as schema 25 finds an existing log)
// make a search by address part partial, and the background backfill
// completes it, resumable batch by batch.
func (s *suite) testSearchBackfill(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var want []*core.Log
	for i := range 5 {
		l := importOne(t, db.Logs(), core.StatusDelivered, day.Add(time.Duration(i)*time.Hour), core.Message{From: core.Address{Email: "shop@acme.com"}, To: addr("old" + string(rune('a'+i)) + "@acme.com"), Subject: "Old"})
		want = append([]*core.Log{l}, want...)
	}
	g := db.Gorm()
	for _, q := range []string{
		"DELETE FROM `" + db.TableName("search_grams") + "`",
		"DELETE FROM `" + db.TableName("search_addresses") + "`",
		"UPDATE `" + db.TableName("search_progress") + "` SET done_up_to = 0, target = (SELECT MAX(id) FROM `" + db.TableName("logs") + "`) WHERE name = 'addresses'",
	} {
		if err := g.Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	if partial, err := db.Logs().SearchIndexPartial(ctx); err != nil || !partial {
		t.Fatalf("SearchIndexPartial before the backfill = %v, %v; want true", partial, err)
	}
	// A new log is found at once; the older ones not yet.
	l := importOne(t, db.Logs(), core.StatusDelivered, day.Add(10*time.Hour), core.Message{From: core.Address{Email: "shop@acme.com"}, To: addr("new@acme.com"), Subject: "New"})
	if logs, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "@acme.com"}); err != nil || !slices.Equal(ids(logs), []int64{l.ID}) {
		t.Fatalf("before the backfill: %v (%v), want [%d]", ids(logs), err, l.ID)
	}
	// The exact address search never depended on the dictionary.
	if logs, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "olda@acme.com"}); err != nil || len(logs) != 1 {
		t.Fatalf("exact address before the backfill: %v (%v)", ids(logs), err)
	}
	if n, err := db.SearchIndex().IndexSearchAddresses(ctx); err != nil || n == 0 {
		t.Fatalf("IndexSearchAddresses = %d, %v; want a step done", n, err)
	}
	if _, err := db.SearchIndex().RunSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if partial, err := db.Logs().SearchIndexPartial(ctx); err != nil || partial {
		t.Fatalf("SearchIndexPartial after the backfill = %v, %v; want false", partial, err)
	}
	logs, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "@acme.com"})
	if err != nil || !slices.Equal(ids(logs), append([]int64{l.ID}, ids(want)...)) {
		t.Fatalf("after the backfill: %v (%v)", ids(logs), err)
	}
	if logs, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "ldc"}); err != nil || len(logs) != 1 {
		t.Fatalf("fragment after the backfill: %v (%v)", ids(logs), err)
	}
	if n, err := db.SearchIndex().IndexSearchAddresses(ctx); err != nil || n != 0 {
		t.Fatalf("IndexSearchAddresses when done = %d, %v; want 0", n, err)
	}
}
