package storetest

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// rollupCompactTests are the contract tests of CompactRollups: the
// shards of old roll-up counters fold into shard 0, every sum stays the
// same, recent buckets are left alone, and running it again (or from
// several replicas at once, while imports add to old buckets) changes
// nothing more.
func (s *suite) rollupCompactTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"CompactRollupsKeepsSums", func(t *testing.T) { CompactRollupsKeepsSums(t, s.open(t, s.prefix())) }},
		{"CompactRollupsConcurrent", func(t *testing.T) {
			prefix := s.prefix()
			CompactRollupsConcurrent(t, func(t *testing.T) *store.DB { return s.open(t, prefix) })
		}},
	}
}

// ModuleRollup is a module's 15-minute roll-up table that the compaction
// tests fill and check besides the service's outcome_buckets, such as the
// Pro roll-ups by source (adapters/pro/store).
type ModuleRollup struct {
	// Table is its name as DB.TableName takes it ("source_buckets"), Key
	// the column of its key ("source") and Keys two values of that key.
	Table, Key string
	Keys       [2]string
	// Read names the module's read of it ("SourceBuckets"), and Sums
	// returns what that read answers over [from, to): it must be the
	// same after a compaction.
	Read string
	Sums func(t *testing.T, db *store.DB, from, to time.Time) any
	// Totals returns the read's sums over [from, to) by "key/status",
	// and LogKey the key an imported log is counted under.
	Totals func(t *testing.T, db *store.DB, from, to time.Time) map[string]int64
	LogKey func(l *core.Log) string
}

// serviceRollup is the service's own table of the compaction tests, its
// sums read by OutcomeBuckets and OutcomeTotals.
var serviceRollup = ModuleRollup{Table: "outcome_buckets", Key: "connection_id", Keys: [2]string{"1", "2"}}

// rollupRow is one stored roll-up row.
type rollupRow struct {
	Start         time.Time
	Key, Status   string
	Shard, Number int64
}

// rollupRows returns the rows of a roll-up table ("outcome_buckets") with
// its key column, in key order, with Start in UTC.
func rollupRows(t *testing.T, db *store.DB, table, key string) []rollupRow {
	t.Helper()
	rows, err := db.Gorm().Raw(`SELECT bucket_start, ` + key + `, status, shard, messages FROM ` + db.TableName(table) +
		` ORDER BY bucket_start, ` + key + `, status, shard`).Rows()
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	defer rows.Close()
	var out []rollupRow
	for rows.Next() {
		var r rollupRow
		if err := rows.Scan(&r.Start, &r.Key, &r.Status, &r.Shard, &r.Number); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		r.Start = r.Start.UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	return out
}

// rollupSums returns what OutcomeBuckets answers over [from, to).
func rollupSums(t *testing.T, db *store.DB, from, to time.Time) []core.OutcomeBucket {
	t.Helper()
	ob, err := db.Logs().OutcomeBuckets(context.Background(), from, to)
	if err != nil {
		t.Fatalf("OutcomeBuckets: %v", err)
	}
	return ob
}

// oldShardRows counts the shard rows (shard > 0) whose bucket ended by
// edge in every roll-up table CompactRollups folds (store.RollupTables:
// the service's and any linked module's), at each width: the rows it
// removes.
func oldShardRows(t *testing.T, db *store.DB, edge time.Time) int64 {
	t.Helper()
	var total int64
	for _, tbl := range store.RollupTables() {
		widths := tbl.Widths
		if !tbl.Width || len(widths) == 0 {
			widths = []int{store.QuarterMinutes}
		}
		for _, minutes := range widths {
			cond, args := "", []any{edge.Add(-time.Duration(minutes) * time.Minute)}
			if tbl.Width {
				cond, args = "width_minutes = ? AND ", append([]any{minutes}, args...)
			}
			var n int64
			if err := db.Gorm().Raw(`SELECT COUNT(*) FROM `+db.Expand(tbl.Name)+` WHERE `+cond+`shard > 0 AND bucket_start <= ?`,
				args...).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			total += n
		}
	}
	return total
}

// insertRollup writes one shard row into a roll-up table with its key
// column directly (the writers of SQLite use shard 0 only).
func insertRollup(t *testing.T, db *store.DB, table, key string, r rollupRow) {
	t.Helper()
	if err := db.Gorm().Exec(`INSERT INTO `+db.TableName(table)+` (bucket_start, `+key+`, status, shard, messages) VALUES (?,?,?,?,?)`,
		r.Start, r.Key, r.Status, r.Shard, r.Number).Error; err != nil {
		t.Fatalf("insert into %s: %v", table, err)
	}
}

// CompactRollupsKeepsSums fills the roll-ups of db, a fresh store, with
// sharded counters by hand and by imports, in old and in recent buckets,
// and compacts them: it removes the old shard rows of every roll-up table
// (store.RollupTables), folds them into shard 0 of the service's and the
// modules' tables, keeps every sum the reads answer, leaves the recent
// buckets alone, and a second run does nothing.
func CompactRollupsKeepsSums(t *testing.T, db *store.DB, modules ...ModuleRollup) {
	ctx := context.Background()
	tables := append([]ModuleRollup{serviceRollup}, modules...)
	now := time.Now().UTC()
	cur := now.Truncate(core.OutcomeBucketSize)
	edge := now.Add(-store.RollupCompactAge).Truncate(core.OutcomeBucketSize) // ends less than an hour ago
	old := []time.Time{edge.Add(-core.OutcomeBucketSize), cur.Add(-3 * time.Hour), cur.Add(-48 * time.Hour)}
	recent := []time.Time{edge, cur}
	// Sharded counters by hand in every bucket, one of them without a
	// shard 0 row, plus what ImportLogs writes (sharded on MySQL).
	n := int64(1)
	for _, b := range append(append([]time.Time{}, old...), recent...) {
		for _, tb := range tables {
			keys := tb.Keys
			for _, shard := range []int64{0, 3, 7} {
				insertRollup(t, db, tb.Table, tb.Key, rollupRow{b, keys[0], core.StatusDelivered, shard, n})
				insertRollup(t, db, tb.Table, tb.Key, rollupRow{b, keys[0], core.StatusFailed, shard, n + 1})
				if shard > 0 {
					insertRollup(t, db, tb.Table, tb.Key, rollupRow{b, keys[1], core.StatusDelivered, shard, n + 2})
				}
				n += 3
			}
		}
	}
	for i := range 6 {
		var logs []*core.Log
		for j := range 40 {
			at := cur.Add(-time.Duration(2+j%4) * time.Hour).Add(time.Duration(j) * time.Minute)
			conn := int64(1 + j%2)
			l := &core.Log{Status: core.StatusDelivered, Source: fmt.Sprint("plugin-", j%3), SentConnectionID: &conn,
				Message: Message(i*100 + j), CreatedAt: at, UpdatedAt: at}
			if j%5 == 0 {
				l.Status = core.StatusFailed
			}
			logs = append(logs, l)
		}
		if err := db.Logs().ImportLogs(ctx, logs); err != nil {
			t.Fatalf("ImportLogs: %v", err)
		}
	}
	from, to := cur.Add(-72*time.Hour), cur.Add(time.Hour)
	ob := rollupSums(t, db, from, to)
	sums := make([]any, len(modules))
	for i, m := range modules {
		sums[i] = m.Sums(t, db, from, to)
	}
	before := map[string][]rollupRow{}
	for _, tb := range tables {
		before[tb.Table] = rollupRows(t, db, tb.Table, tb.Key)
	}

	wantRemoved := oldShardRows(t, db, edge)
	got, err := db.Rollups().CompactRollups(ctx)
	if err != nil {
		t.Fatalf("CompactRollups: %v", err)
	}
	if got.RowsRemoved != wantRemoved || got.Keys == 0 {
		t.Errorf("CompactRollups = %+v, want %d rows removed and some keys", got, wantRemoved)
	}
	ob2 := rollupSums(t, db, from, to)
	if !reflect.DeepEqual(ob2, ob) {
		t.Errorf("OutcomeBuckets after compaction:\n%v\nwant\n%v", ob2, ob)
	}
	for i, m := range modules {
		if got := m.Sums(t, db, from, to); !reflect.DeepEqual(got, sums[i]) {
			t.Errorf("%s after compaction:\n%v\nwant\n%v", m.Read, got, sums[i])
		}
	}
	after := map[string][]rollupRow{}
	for _, tb := range tables {
		table := tb.Table
		after[table] = rollupRows(t, db, table, tb.Key)
		var recentBefore, recentAfter []rollupRow
		for _, r := range before[table] {
			if !r.Start.Before(edge) {
				recentBefore = append(recentBefore, r)
			}
		}
		for _, r := range after[table] {
			if !r.Start.Before(edge) {
				recentAfter = append(recentAfter, r)
			} else if r.Shard != 0 {
				t.Errorf("%s: old bucket row %+v still sharded", table, r)
			}
		}
		if len(recentBefore) == 0 || !reflect.DeepEqual(recentAfter, recentBefore) {
			t.Errorf("%s: recent buckets changed:\n%v\nwant\n%v", table, recentAfter, recentBefore)
		}
	}

	again, err := db.Rollups().CompactRollups(ctx)
	if err != nil {
		t.Fatalf("CompactRollups again: %v", err)
	}
	if again != (store.RollupCompaction{}) {
		t.Errorf("CompactRollups again = %+v, want nothing done", again)
	}
	for _, tb := range tables {
		if rows := rollupRows(t, db, tb.Table, tb.Key); !reflect.DeepEqual(rows, after[tb.Table]) {
			t.Errorf("%s changed on a second compaction", tb.Table)
		}
	}
}

// CompactRollupsConcurrent runs CompactRollups on four handles at once
// while imports keep adding to old buckets: every imported outcome is
// counted exactly once in the end, by the service's roll-ups and by the
// modules', and a last run leaves no shard in an old bucket. open returns
// a new handle on one fresh store each time it is called.
func CompactRollupsConcurrent(t *testing.T, open func(t *testing.T) *store.DB, modules ...ModuleRollup) {
	ctx := context.Background()
	db := open(t)
	cur := time.Now().UTC().Truncate(core.OutcomeBucketSize)
	var mu sync.Mutex
	want := map[string]int64{} // status and a module's key/status -> messages
	importBatch := func(seed int) error {
		var logs []*core.Log
		for j := range 50 {
			at := cur.Add(-time.Duration(2+(seed+j)%20) * time.Hour).Add(time.Duration(j) * time.Minute)
			conn := int64(1 + j%3)
			l := &core.Log{Status: core.StatusDelivered, Source: fmt.Sprint("plugin-", (seed+j)%4), SentConnectionID: &conn,
				Message: Message(seed*100 + j), CreatedAt: at, UpdatedAt: at}
			if j%7 == 0 {
				l.Status = core.StatusFailed
			}
			logs = append(logs, l)
		}
		if err := db.Logs().ImportLogs(ctx, logs); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, l := range logs {
			want[l.Status]++
			for _, m := range modules {
				want[m.LogKey(l)+"/"+l.Status]++
			}
		}
		return nil
	}
	for i := range 4 {
		if err := importBatch(i); err != nil {
			t.Fatalf("ImportLogs: %v", err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for r := range 4 {
		replica := open(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				if _, err := replica.Rollups().CompactRollups(ctx); err != nil {
					errs <- fmt.Errorf("replica %d: CompactRollups: %w", r, err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 4; i < 12; i++ {
			if err := importBatch(i); err != nil {
				errs <- fmt.Errorf("ImportLogs: %w", err)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := db.Rollups().CompactRollups(ctx); err != nil {
		t.Fatalf("CompactRollups: %v", err)
	}
	from, to := cur.Add(-48*time.Hour), cur.Add(time.Hour)
	got := OutcomeTotals(t, db, from, to)
	for _, m := range modules {
		maps.Copy(got, m.Totals(t, db, from, to))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("roll-up sums after concurrent compaction = %v, want %v", got, want)
	}
	for _, tb := range append([]ModuleRollup{serviceRollup}, modules...) {
		for _, r := range rollupRows(t, db, tb.Table, tb.Key) {
			if r.Shard != 0 {
				t.Errorf("%s: row %+v still sharded after a last compaction", tb.Table, r)
			}
		}
	}
}

// OutcomeTotals sums the outcome roll-ups by status.
func OutcomeTotals(t *testing.T, db *store.DB, from, to time.Time) map[string]int64 {
	t.Helper()
	bs, err := db.Logs().OutcomeBuckets(context.Background(), from, to)
	if err != nil {
		t.Fatalf("OutcomeBuckets: %v", err)
	}
	out := map[string]int64{}
	for _, b := range bs {
		out[b.Status] += b.Count
	}
	return out
}
