package store_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
	"github.com/mailsvc/mailsvc/core"
)

// analyticsTests are the contract tests of what the Pro analytics read
// (analytics.go) and of the roll-ups by source the outcome counter grows
// (source_rollup.go): the outcome totals by connection and by source, the
// log export in keyset pages, and CompactRollups over those roll-ups.
// The provider event parts of these tests are the service store's
// (adapters/store/storetest: analytics.go).
func (s *suite) analyticsTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"SourceRollupsMatchRecordedOutcomes", s.testSourceRollupsMatchOutcomes},
		{"SourceRollupsCountImportedLogs", s.testSourceRollupsImported},
		{"ExportLogsKeysetPages", s.testExportLogs},
		{"RollupsMatchDirectCounts", s.testRollupsMatchDirectCounts},
		{"CompactRollupsKeepsSums", func(t *testing.T) {
			storetest.CompactRollupsKeepsSums(t, s.open(t, s.prefix()).DB, sourceRollup)
		}},
		{"CompactRollupsConcurrent", func(t *testing.T) {
			prefix := s.prefix()
			storetest.CompactRollupsConcurrent(t, func(t *testing.T) *store.DB { return s.open(t, prefix).DB }, sourceRollup)
		}},
		{"PersonalDataEraseKeepsTotals", s.testPersonalDataEraseKeepsTotals},
	}
}

// sourceTotals sums source buckets by source and status ("source/status").
func sourceTotals(t *testing.T, db *proDB, from, to time.Time) map[string]int64 {
	t.Helper()
	bs, err := db.Analytics().SourceBuckets(context.Background(), from, to)
	if err != nil {
		t.Fatalf("SourceBuckets: %v", err)
	}
	out := map[string]int64{}
	for _, b := range bs {
		if !b.Start.Equal(b.Start.Truncate(core.OutcomeBucketSize)) || b.Start.Location() != time.UTC {
			t.Errorf("bucket start %v is not a UTC bucket boundary", b.Start)
		}
		out[b.Source+"/"+b.Status] += b.Count
	}
	return out
}

// sourceRollup is the table of the roll-ups by source, as the service
// store's compaction tests fill and check it besides its own.
var sourceRollup = storetest.ModuleRollup{
	Table: "source_buckets", Key: "source", Keys: [2]string{"woocommerce", "wpforms"},
	Read: "SourceBuckets",
	Sums: func(t *testing.T, db *store.DB, from, to time.Time) any {
		t.Helper()
		sb, err := newProDB(db).Analytics().SourceBuckets(context.Background(), from, to)
		if err != nil {
			t.Fatalf("SourceBuckets: %v", err)
		}
		return sb
	},
	Totals: func(t *testing.T, db *store.DB, from, to time.Time) map[string]int64 {
		return sourceTotals(t, newProDB(db), from, to)
	},
	LogKey: func(l *core.Log) string { return l.Source },
}

func (s *suite) testSourceRollupsMatchOutcomes(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	from := time.Now().Add(-time.Hour)
	sources := []string{"woocommerce", "contact-form-7", "sendmail", ""}
	var logs []*core.Log
	for i := range 12 {
		l := &core.Log{Message: storetest.Message(i), Source: sources[i%len(sources)]}
		if err := db.Logs().EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		logs = append(logs, l)
	}
	if got := storetest.Claim(t, db.Logs(), "w1", 12, time.Minute); len(got) != 12 {
		t.Fatalf("claimed %d, want 12", len(got))
	}
	conn := int64(3)
	out := func(l *core.Log, status string, del bool) core.LogOutcome {
		return core.LogOutcome{LogID: l.ID, Status: status, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn, Delete: del}
	}
	// Batch 1: delivered, failed, a retry (not final), a delivered log
	// deleted (log_emails off: counted, not kept), an outcome of another
	// owner (not applied) and a log given twice (applied once).
	batch := []core.LogOutcome{
		out(logs[0], core.StatusDelivered, false), // woocommerce
		out(logs[1], core.StatusFailed, false),    // contact-form-7
		out(logs[2], core.StatusQueued, false),    // sendmail, retry
		out(logs[3], core.StatusDelivered, true),  // "", deleted
		out(logs[4], core.StatusDelivered, false), // woocommerce
		out(logs[4], core.StatusFailed, false),    // the same log again: not applied
	}
	n, err := db.Logs().RecordOutcomes(ctx, "w1", batch)
	if err != nil || n != 5 {
		t.Fatalf("RecordOutcomes = %d, %v; want 5", n, err)
	}
	if n, err := db.Logs().RecordOutcomes(ctx, "someone-else", []core.LogOutcome{out(logs[5], core.StatusDelivered, false)}); err != nil || n != 0 {
		t.Fatalf("RecordOutcomes of another owner = %d, %v; want 0", n, err)
	}
	// Batch 2: the rest, final.
	batch = nil
	for i, l := range logs[5:] {
		batch = append(batch, out(l, []string{core.StatusDelivered, core.StatusFailed}[i%2], false))
	}
	if n, err := db.Logs().RecordOutcomes(ctx, "w1", batch); err != nil || n != 7 {
		t.Fatalf("RecordOutcomes batch 2 = %d, %v; want 7", n, err)
	}
	// A recorded log recorded again (no longer sending) counts nothing.
	if n, err := db.Logs().RecordOutcomes(ctx, "w1", []core.LogOutcome{out(logs[0], core.StatusFailed, false)}); err != nil || n != 0 {
		t.Fatalf("RecordOutcomes of a finished log = %d, %v; want 0", n, err)
	}

	to := time.Now().Add(time.Hour)
	got := sourceTotals(t, db, from, to)
	// logs 5..11: 5 cf7? sources[i%4]: 5 cf7, 6 sendmail, 7 "", 8 woo, 9 cf7, 10 sendmail, 11 "".
	// statuses: 5 D, 6 F, 7 D, 8 F, 9 D, 10 F, 11 D.
	want := map[string]int64{
		"woocommerce/delivered":    2, // 0, 4
		"woocommerce/failed":       1, // 8
		"contact-form-7/failed":    1, // 1
		"contact-form-7/delivered": 2, // 5, 9
		"sendmail/failed":          2, // 6, 10
		"/delivered":               3, // 3 (deleted), 7, 11
	}
	if !maps.Equal(got, want) {
		t.Fatalf("source roll-ups = %v, want %v", got, want)
	}
	// The same outcomes as the roll-ups by connection.
	byStatus := map[string]int64{}
	for k, v := range got {
		_, status, _ := strings.Cut(k, "/")
		byStatus[status] += v
	}
	if o := storetest.OutcomeTotals(t, db.DB, from, to); !maps.Equal(o, byStatus) {
		t.Fatalf("outcome roll-ups %v differ from the source roll-ups %v", o, byStatus)
	}
	// Outside the range: nothing.
	if got := sourceTotals(t, db, to, to.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("source roll-ups after the range: %v", got)
	}
}

func (s *suite) testSourceRollupsImported(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	day := time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	d1, d2 := at(9, 20), at(11, 5)
	logs := []*core.Log{
		{Status: core.StatusDelivered, Source: "wpforms", Message: storetest.Message(1), CreatedAt: at(9, 0), UpdatedAt: at(9, 40), DeliveredAt: &d1},
		{Status: core.StatusDelivered, Source: "wpforms", Message: storetest.Message(2), CreatedAt: at(9, 1), DeliveredAt: &d2},
		{Status: core.StatusFailed, Source: "wpforms", Message: storetest.Message(3), CreatedAt: at(10, 0), UpdatedAt: at(10, 14)},
		{Status: core.StatusFailed, Source: "", Message: storetest.Message(4), CreatedAt: at(12, 0)},
	}
	if err := db.Logs().ImportLogs(ctx, logs); err != nil {
		t.Fatalf("ImportLogs: %v", err)
	}
	bs, err := db.Analytics().SourceBuckets(ctx, day, day.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, 0, len(bs))
	for _, b := range bs {
		got = append(got, fmt.Sprintf("%s %s %s %d", b.Start.Format("15:04"), b.Source, b.Status, b.Count))
	}
	want := []string{
		"09:15 wpforms delivered 1", // DeliveredAt 09:20
		"10:00 wpforms failed 1",    // UpdatedAt 10:14
		"11:00 wpforms delivered 1", // DeliveredAt 11:05
		"12:00  failed 1",           // UpdatedAt = CreatedAt
	}
	if !slices.Equal(got, want) {
		t.Fatalf("source buckets after import:\n%q\nwant\n%q", got, want)
	}
	if o := storetest.OutcomeTotals(t, db.DB, day, day.Add(24*time.Hour)); o[core.StatusDelivered] != 2 || o[core.StatusFailed] != 2 {
		t.Fatalf("outcome roll-ups after import: %v", o)
	}
	// The database's sums over a range, per source (and per connection).
	st, err := db.Analytics().SourceTotals(ctx, at(9, 15), at(12, 0))
	if err != nil {
		t.Fatal(err)
	}
	wantST := []analytics.SourceBucket{{Start: at(9, 15), Source: "wpforms", Status: core.StatusDelivered, Count: 2}, {Start: at(9, 15), Source: "wpforms", Status: core.StatusFailed, Count: 1}}
	if !slices.Equal(st, wantST) {
		t.Fatalf("SourceTotals = %+v, want %+v", st, wantST)
	}
	ot, err := db.Analytics().OutcomeTotals(ctx, day, day.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	wantOT := []core.OutcomeBucket{{Start: day, Status: core.StatusDelivered, Count: 2}, {Start: day, Status: core.StatusFailed, Count: 2}}
	if !slices.Equal(ot, wantOT) {
		t.Fatalf("OutcomeTotals = %+v, want %+v", ot, wantOT)
	}
	// A second import adds to the same buckets.
	if err := db.Logs().ImportLogs(ctx, []*core.Log{{Status: core.StatusFailed, Source: "wpforms", Message: storetest.Message(5), CreatedAt: at(10, 1)}}); err != nil {
		t.Fatal(err)
	}
	if got := sourceTotals(t, db, at(10, 0), at(10, 15)); got["wpforms/failed"] != 2 || len(got) != 1 {
		t.Fatalf("10:00 bucket after a second import: %v", got)
	}
}

func (s *suite) testExportLogs(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	day := time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	// Imported out of time order, several at the same instant, one
	// before and one at the end of the range.
	created := []time.Time{
		day.Add(5 * time.Hour), day.Add(time.Hour), day.Add(time.Hour), day.Add(-time.Second),
		day.Add(3 * time.Hour), day.Add(time.Hour), day.Add(24 * time.Hour), day,
	}
	var logs []*core.Log
	conn := int64(4)
	for i, c := range created {
		l := &core.Log{Status: core.StatusFailed, Source: fmt.Sprintf("src%d", i), Message: storetest.Message(i), CreatedAt: c,
			LastError: "=cmd", ProviderMessageID: fmt.Sprintf("pm%d", i)}
		if i == 0 {
			l.Status, l.SentConnectionID = core.StatusDelivered, &conn
		}
		logs = append(logs, l)
	}
	if err := db.Logs().ImportLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	// Expected: in range [day, day+24h), ordered by created_at then id.
	var want []int64
	for _, i := range []int{7, 1, 2, 5, 4, 0} {
		want = append(want, logs[i].ID)
	}
	for _, limit := range []int{1, 2, 4, 100} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			var got []int64
			p := analytics.LogExportPage{From: day, To: day.Add(24 * time.Hour), Limit: limit}
			for pages := 0; ; pages++ {
				if pages > 10 {
					t.Fatalf("paging does not end: %v", got)
				}
				page, err := db.Analytics().ExportLogs(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) > limit {
					t.Fatalf("page of %d rows, limit %d", len(page), limit)
				}
				if len(page) == 0 {
					break
				}
				for _, l := range page {
					got = append(got, l.ID)
				}
				last := page[len(page)-1]
				p.AfterCreatedAt, p.AfterID = last.CreatedAt, last.ID
			}
			if !slices.Equal(got, want) {
				t.Fatalf("exported ids %v, want %v", got, want)
			}
		})
	}
	page, err := db.Analytics().ExportLogs(ctx, analytics.LogExportPage{From: day.Add(5 * time.Hour), To: day.Add(6 * time.Hour)})
	if err != nil || len(page) != 1 {
		t.Fatalf("one-log page = %+v, %v", page, err)
	}
	wantRow := analytics.ExportedLog{ID: logs[0].ID, CreatedAt: day.Add(5 * time.Hour), Status: core.StatusDelivered, ConnectionID: 4,
		Source: "src0", Recipients: `"Ann" <ann0@example.com>`, Subject: "Order 0", LastError: "=cmd", ProviderMessageID: "pm0"}
	if page[0] != wantRow {
		t.Fatalf("exported row %+v, want %+v", page[0], wantRow)
	}
}

// testRollupsMatchDirectCounts checks that the range sums the analytics
// read (OutcomeTotals, SourceTotals: days, hours and quarter hours of the
// roll-ups) answer exactly what counting the logs directly answers, for
// ranges with ragged edges: as the writers leave them, after
// CompactRollups, and after the migrations rebuilt them from the
// 15-minute roll-ups (the service's version 11 the hour and day roll-ups
// by connection, this package's version 4 those by source). The provider
// event part of this check is the service store's
// (adapters/store/storetest: testEventRollupsMatchDirectCounts).
func (s *suite) testRollupsMatchDirectCounts(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	day := time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(11, 3))
	importRandomLogs(t, db, day, rng)

	ranges := raggedRanges(day)
	check := func(stage string) {
		t.Helper()
		for _, r := range ranges {
			ot, err := db.Analytics().OutcomeTotals(ctx, r.from, r.to)
			if err != nil {
				t.Fatal(err)
			}
			if want := directOutcomes(t, db, r.from, r.to); !slices.Equal(ot, want) {
				t.Errorf("%s, %s: OutcomeTotals = %+v\nwant %+v", stage, r.name, ot, want)
			}
			// The dashboard's 15-minute buckets sum to the same.
			var fromBuckets []core.OutcomeBucket
			sums := map[[2]string]int64{}
			bs, err := db.Logs().OutcomeBuckets(ctx, r.from, r.to)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bs {
				sums[[2]string{fmt.Sprint(b.ConnectionID), b.Status}] += b.Count
			}
			for _, b := range ot {
				fromBuckets = append(fromBuckets, core.OutcomeBucket{Start: b.Start, ConnectionID: b.ConnectionID, Status: b.Status, Count: sums[[2]string{fmt.Sprint(b.ConnectionID), b.Status}]})
			}
			if !slices.Equal(fromBuckets, ot) || len(sums) != len(ot) {
				t.Errorf("%s, %s: OutcomeBuckets sum to %v, OutcomeTotals %+v", stage, r.name, sums, ot)
			}
			st, err := db.Analytics().SourceTotals(ctx, r.from, r.to)
			if err != nil {
				t.Fatal(err)
			}
			if want := directSources(t, db, r.from, r.to); !slices.Equal(st, want) {
				t.Errorf("%s, %s: SourceTotals = %+v\nwant %+v", stage, r.name, st, want)
			}
		}
	}
	check("as written")
	if _, err := db.Rollups().CompactRollups(ctx); err != nil {
		t.Fatalf("CompactRollups: %v", err)
	}
	check("compacted")

	// The service's migration 11 rebuilds the hour and day roll-ups by
	// connection from the 15-minute ones, this package's migration 3 the
	// provider event roll-ups from the events (those by site, empty) and
	// its migration 4 those by source (and the roll-ups by site, empty).
	g := db.Gorm()
	for _, table := range []string{"outcome_rollups", "source_rollups", "event_buckets", "event_repeats", "site_rollups", "site_event_buckets"} {
		if err := g.Exec("DROP TABLE " + db.TableName(table)).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Exec("DELETE FROM "+db.TableName("migrations")+" WHERE version IN (?, ?)", 11, 24).Error; err != nil {
		t.Fatal(err)
	}
	if err := g.Exec("DELETE FROM "+db.TableName("pro_migrations")+" WHERE version IN (?, ?)", 3, 4).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	check("rebuilt by the migration")
}

// outcomeAt returns when a log's final outcome counts in the roll-ups: a
// delivered log at its delivered_at (else updated_at), a failed one at
// its updated_at.
func outcomeAt(status string, updated time.Time, delivered *time.Time) time.Time {
	if status == core.StatusDelivered && delivered != nil {
		return *delivered
	}
	return updated
}

// quarterRange returns from and to rounded up to 15-minute boundaries:
// the buckets starting in [from, to) are the times in the result.
func quarterRange(from, to time.Time) (time.Time, time.Time) {
	ceil := func(t time.Time) time.Time {
		tt := t.UTC().Truncate(core.OutcomeBucketSize)
		if tt.Before(t) {
			tt = tt.Add(core.OutcomeBucketSize)
		}
		return tt
	}
	return ceil(from), ceil(to)
}

// finalLog is a log with a final status: its status, sending connection
// (0 for none), source and outcome time.
type finalLog struct {
	status, source string
	conn           int64
	at             time.Time
}

// finalLogs reads every log with a final status.
func finalLogs(t *testing.T, db *proDB) []finalLog {
	t.Helper()
	rows, err := db.Gorm().Raw(`SELECT status, COALESCE(sent_connection_id, 0), source, updated_at, delivered_at FROM `+
		db.TableName("logs")+` WHERE status IN (?, ?)`, core.StatusDelivered, core.StatusFailed).Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []finalLog
	for rows.Next() {
		var r finalLog
		var upd time.Time
		var del *time.Time
		if err := rows.Scan(&r.status, &r.conn, &r.source, &upd, &del); err != nil {
			t.Fatal(err)
		}
		r.at = outcomeAt(r.status, upd, del)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// directCounts counts the logs' final outcomes whose 15-minute bucket
// starts in [from, to) (the buckets the range sums read) under the key
// each gives (its count zero), and returns the keys with counted setting
// their counts, in the order of compare.
func directCounts[B comparable](t *testing.T, db *proDB, from, to time.Time, key func(finalLog) B,
	counted func(B, int64) B, compare func(a, b B) int) []B {
	t.Helper()
	qf, qt := quarterRange(from, to)
	sums := map[B]int64{}
	for _, l := range finalLogs(t, db) {
		if b := l.at.UTC().Truncate(core.OutcomeBucketSize); !b.Before(qf) && b.Before(qt) {
			sums[key(l)]++
		}
	}
	out := []B{}
	for k, n := range sums {
		out = append(out, counted(k, n))
	}
	slices.SortFunc(out, compare)
	return out
}

// directOutcomes counts the logs' final outcomes whose 15-minute bucket
// starts in [from, to) per connection and status, as OutcomeTotals
// answers.
func directOutcomes(t *testing.T, db *proDB, from, to time.Time) []core.OutcomeBucket {
	t.Helper()
	return directCounts(t, db, from, to,
		func(l finalLog) core.OutcomeBucket {
			return core.OutcomeBucket{Start: from.UTC(), ConnectionID: l.conn, Status: l.status}
		},
		func(b core.OutcomeBucket, n int64) core.OutcomeBucket { b.Count = n; return b },
		func(a, b core.OutcomeBucket) int {
			if a.ConnectionID != b.ConnectionID {
				return int(a.ConnectionID - b.ConnectionID)
			}
			return strings.Compare(a.Status, b.Status)
		})
}

// directSources counts the same per source and status, as SourceTotals
// answers.
func directSources(t *testing.T, db *proDB, from, to time.Time) []analytics.SourceBucket {
	t.Helper()
	return directCounts(t, db, from, to,
		func(l finalLog) analytics.SourceBucket {
			return analytics.SourceBucket{Start: from.UTC(), Source: l.source, Status: l.status}
		},
		func(b analytics.SourceBucket, n int64) analytics.SourceBucket { b.Count = n; return b },
		func(a, b analytics.SourceBucket) int {
			if c := strings.Compare(a.Source, b.Source); c != 0 {
				return c
			}
			return strings.Compare(a.Status, b.Status)
		})
}

// testPersonalDataEraseKeepsTotals erases the personal data of an
// address named by delivered and failed logs: the outcome totals the
// analytics read are the same as before (the erase rewrites logs, never
// the roll-ups). The rest of the erase is the service store's contract
// (adapters/store/storetest: testPersonalDataFindAndErase).
func (s *suite) testPersonalDataEraseKeepsTotals(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	const bob = "bob@example.com"
	conn := int64(1)
	for i, status := range []string{core.StatusDelivered, core.StatusFailed, core.StatusDelivered} {
		m := storetest.Message(i)
		if i < 2 {
			m.To = []core.Address{{Name: "Bob", Email: bob}}
		}
		l := &core.Log{Message: m, Source: "test"}
		if err := db.Logs().EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		if got := storetest.Claim(t, db.Logs(), "w", 10, time.Minute); len(got) != 1 {
			t.Fatalf("claimed %d logs, want 1", len(got))
		}
		if n, err := db.Logs().RecordOutcomes(ctx, "w", []core.LogOutcome{{LogID: l.ID, Status: status, Attempts: 1, PhaseAttempts: 1,
			SentConnectionID: &conn}}); err != nil || n != 1 {
			t.Fatalf("RecordOutcomes = %d, %v", n, err)
		}
	}
	day := time.Now().UTC().Truncate(24 * time.Hour)
	totals := func() []core.OutcomeBucket {
		t.Helper()
		ot, err := db.Analytics().OutcomeTotals(ctx, day.Add(-24*time.Hour), day.Add(48*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return ot
	}
	totalsBefore := totals()
	if len(totalsBefore) == 0 {
		t.Fatal("no outcome totals before the erase")
	}
	sourcesBefore, err := db.Analytics().SourceTotals(ctx, day.Add(-24*time.Hour), day.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if erased, pending, err := db.Privacy().EraseLogsNaming(ctx, "Bob@Example.com", core.ErasedAddress, 10); err != nil || erased != 2 || pending != 0 {
		t.Fatalf("erase = %d erased, %d pending, %v; want 2, 0", erased, pending, err)
	}
	if got := totals(); !reflect.DeepEqual(got, totalsBefore) {
		t.Errorf("outcome totals changed: %+v, were %+v", got, totalsBefore)
	}
	if got, err := db.Analytics().SourceTotals(ctx, day.Add(-24*time.Hour), day.Add(48*time.Hour)); err != nil || !reflect.DeepEqual(got, sourcesBefore) {
		t.Errorf("source totals changed: %+v (%v), were %+v", got, err, sourcesBefore)
	}
}
