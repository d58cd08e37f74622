package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// testSearchCapped: a search counted up to a cap (as the logs API asks)
// gives the same page and the same capped total whichever way it is
// answered: the newest logs checked one by one (the whole window, or a
// part of it that is too small and hands over to the index), or the
// index alone; a log whose id is not in its creation order (imported
// last, created first) still comes in list order. The terms are a
// subject word, words with a status, and a domain with a status.
func (s *suite) testSearchCapped(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	day := func(d int) time.Time { return time.Date(2026, 5, 1+d, 9, 0, 0, 0, time.UTC) }
	from := core.Address{Email: "shop@example.com"}
	one := func(status string, d int, to, subject string) *core.Log {
		return importOne(t, db.Logs(), status, day(d), core.Message{From: from, To: addr(to), Subject: subject})
	}
	l1 := one(core.StatusFailed, 1, "a@acme.test", "Invoice 1")
	l2 := one(core.StatusDelivered, 2, "b@acme.test", "Invoice 2")
	l3 := one(core.StatusFailed, 3, "c@other.test", "Invoice 3")
	l4 := one(core.StatusFailed, 5, "d@mail.acme.test", "Invoice 4")
	l5 := one(core.StatusFailed, 4, "e@acme.test", "Receipt 5")
	l6 := one(core.StatusFailed, 0, "f@acme.test", "invoices 6") // the highest id, the oldest
	one(core.StatusFailed, 6, "g@acme.testing", "Receipt 7")     // a look-alike domain
	if _, err := db.SearchIndex().RunSearchIndex(ctx); err != nil {
		t.Fatal(err)
	}
	failed := core.StatusFailed
	tests := []struct {
		name      string
		f         core.LogFilter
		want      []*core.Log
		wantTotal int
	}{
		{"a word, first page", core.LogFilter{Search: "invoice", CountUpTo: 10, Limit: 2}, []*core.Log{l4, l3}, 5},
		{"a word, capped", core.LogFilter{Search: "invoice", CountUpTo: 2, Limit: 2}, []*core.Log{l4, l3}, 3},
		{"a word, the last page", core.LogFilter{Search: "invoice", CountUpTo: 10, Limit: 2, Offset: 3}, []*core.Log{l1, l6}, 5},
		{"words", core.LogFilter{Search: "invoice 4", CountUpTo: 10, Limit: 2}, []*core.Log{l4}, 1},
		{"a word and a status", core.LogFilter{Search: "invoice", Status: failed, CountUpTo: 10, Limit: 10}, []*core.Log{l4, l3, l1, l6}, 4},
		{"no match", core.LogFilter{Search: "refund", CountUpTo: 10, Limit: 10}, nil, 0},
		{"a domain and a status", core.LogFilter{Search: "@acme.test", Status: failed, CountUpTo: 10, Limit: 2}, []*core.Log{l4, l5}, 4},
		{"a domain and a status, capped", core.LogFilter{Search: "@acme.test", Status: failed, CountUpTo: 2, Limit: 2}, []*core.Log{l4, l5}, 3},
		{"a domain and a status, the last page", core.LogFilter{Search: "acme.test", Status: failed, CountUpTo: 10, Limit: 2, Offset: 2}, []*core.Log{l1, l6}, 4},
		{"a domain and another status", core.LogFilter{Search: "@acme.test", Status: core.StatusDelivered, CountUpTo: 10, Limit: 10}, []*core.Log{l2}, 1},
	}
	// The window: the whole log, a part too small (then the index), none.
	for _, window := range []int{3000, 2, 0} {
		// Every address part is checked log by log (the dictionary's
		// narrow limits at 0), as a broad domain is.
		db.SearchIndex().SetSearchNarrowLimits(0, 0)
		db.SearchIndex().SetSearchRecentWindow(window)
		for _, tt := range tests {
			logs, total, err := db.Logs().FindLogs(ctx, tt.f)
			if err != nil || !slices.Equal(ids(logs), ids(tt.want)) || total != tt.wantTotal {
				t.Errorf("%s (window %d): %v, total %d, %v; want %v, total %d", tt.name, window, ids(logs), total, err, ids(tt.want), tt.wantTotal)
			}
		}
	}
	t.Run("a word written out of creation order", s.searchWordNewestFirst)
}

// searchWordNewestFirst: a subject word whose logs were written out of
// their creation order (the newest imported first, with the lowest id;
// two created at the same time) is listed newest first, ties by the
// higher id, on every page and counted up to the cap, whether the newest
// logs' window finds it or the full-text index does.
func (s *suite) searchWordNewestFirst(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	at := func(d int) time.Time {
		return time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(d) * time.Hour)
	}
	from := core.Address{Email: "shop@example.com"}
	one := func(d int, subject string) *core.Log {
		return importOne(t, db.Logs(), core.StatusDelivered, at(d), core.Message{From: from, To: addr("a@example.com"), Subject: subject})
	}
	w9 := one(9, "Parcel 9") // the lowest id, the newest
	w3 := one(3, "Parcel 3")
	one(8, "Receipt 8")
	w5 := one(5, "parcel 5")
	w1 := one(1, "Parcel 1")
	w5b := one(5, "Your parcel, 5 again") // the same time as w5, a higher id
	w7 := one(7, "Parcel 7")
	one(10, "Receipt 10") // the newest log, not a match
	order := []*core.Log{w9, w7, w5b, w5, w3, w1}
	tests := []struct {
		name                   string
		offset, limit, countTo int
		wantTotal              int
	}{
		{"first page", 0, 2, 10, 6},
		{"first page, capped", 0, 2, 3, 4},
		{"second page, capped", 2, 2, 3, 4},
		{"the last page", 4, 2, 10, 6},
		{"one page of all", 0, 10, 10, 6},
	}
	for _, window := range []int{3000, 2, 0} {
		db.SearchIndex().SetSearchRecentWindow(window)
		for _, tt := range tests {
			logs, total, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "parcel", Offset: tt.offset, Limit: tt.limit, CountUpTo: tt.countTo})
			want := order[tt.offset:min(tt.offset+tt.limit, len(order))]
			if err != nil || !slices.Equal(ids(logs), ids(want)) || total != tt.wantTotal {
				t.Errorf("%s (window %d): %v, total %d, %v; want %v, total %d", tt.name, window, ids(logs), total, err, ids(want), tt.wantTotal)
			}
		}
	}
}
