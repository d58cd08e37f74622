package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// TallyKey is one row of a 15-minute roll-up by one key (a connection,
// a source) and status, shard aside.
type TallyKey[K cmp.Ordered] struct {
	Start  time.Time
	Key    K
	Status string
}

// Tally groups final outcomes by 15-minute bucket, key and status: what
// one transaction adds to a roll-up kept by 15 minutes
// (TallyTables.Quarter) and by hour and UTC day (TallyTables.Coarse),
// such as the service's roll-ups by connection or the Pro roll-ups by
// source.
type Tally[K cmp.Ordered] map[TallyKey[K]]int64

// TallyTables names the tables a Tally adds to and the statements that
// add to them; NewTallyTables makes it.
type TallyTables struct {
	coarse     string   // the coarse table, with {prefix}
	what       string   // what the roll-ups count, for errors
	insert     string   // the 15-minute upsert up to its rows
	mysqlAdd   string   // its MySQL ending
	sqliteAdd  string   // its SQLite ending
	coarseKeys []string // the key columns of the coarse table
}

// NewTallyTables returns the tables of a roll-up by the column key and
// status: quarter kept by 15 minutes (bucket_start, key, status, shard,
// messages), coarse by hour and UTC day (width_minutes first); what says
// what they count in errors ("outcome" for "add outcome roll-ups").
func NewTallyTables(quarter, coarse, key, what string) TallyTables {
	return TallyTables{
		coarse:     coarse,
		what:       what,
		insert:     `INSERT INTO ` + quarter + ` (bucket_start, ` + key + `, status, shard, messages) VALUES `,
		mysqlAdd:   " ON DUPLICATE KEY UPDATE messages = messages + VALUES(messages)",
		sqliteAdd:  " ON CONFLICT (bucket_start, " + key + ", status, shard) DO UPDATE SET messages = messages + excluded.messages",
		coarseKeys: []string{"width_minutes", "bucket_start", key, "status", "shard"},
	}
}

// outcomeTables are the service's roll-ups by connection.
var outcomeTables = NewTallyTables("{prefix}mailsvc_outcome_buckets", "{prefix}mailsvc_outcome_rollups", "connection_id", "outcome")

// outcomeTally groups final outcomes by bucket, connection and status.
type outcomeTally Tally[int64]

// add counts one message that reached status (delivered or failed, or
// core.OutcomeCountPartial for a delivered one that some recipients did
// not get; other statuses are not final and are ignored) through conn at
// t.
func (o outcomeTally) add(t time.Time, conn *int64, status string) {
	if status != core.StatusDelivered && status != core.StatusFailed && status != core.OutcomeCountPartial {
		return
	}
	k := TallyKey[int64]{Start: t.UTC().Truncate(core.OutcomeBucketSize), Status: status}
	if conn != nil {
		k.Key = *conn
	}
	o[k]++
}

// write adds the tally to the roll-ups by connection (writeTally).
func (o outcomeTally) write(ctx context.Context, db *handle, tx *sql.Tx) error {
	return writeTally(ctx, db, tx, Tally[int64](o), outcomeTables)
}

// RollupShards is how many rows share one counter on MySQL: each batch
// adds to one of them at random, so concurrent RecordOutcomes
// transactions (which hold the row lock until they commit) seldom wait
// for each other. OutcomeBuckets sums the shards. SQLite has one writer
// at a time and uses shard 0 only.
const RollupShards = 8

// Write adds the tally to tables in tx, as writeTally does.
func (t Tally[K]) Write(ctx context.Context, db *DB, tx *sql.Tx, tables TallyTables) error {
	return writeTally(ctx, db.handle, tx, t, tables)
}

// writeTally adds the tally to the 15-minute roll-up table in one
// multi-row upsert, its keys in a fixed order (and, on MySQL, on a random
// shard of RollupShards) so concurrent writers seldom wait for each
// other and lock them in the same order; then to the hour and day
// roll-ups (writeCoarse), on the same shard.
func writeTally[K cmp.Ordered](ctx context.Context, db *handle, tx *sql.Tx, o Tally[K], tables TallyTables) error {
	if len(o) == 0 {
		return nil
	}
	shard := 0
	if db.dialect == DialectMySQL {
		shard = rand.IntN(RollupShards)
	}
	keys := make([]TallyKey[K], 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b TallyKey[K]) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return strings.Compare(a.Status, b.Status)
	})
	var b strings.Builder
	b.WriteString(tables.insert)
	args := make([]any, 0, 5*len(keys))
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("(?,?,?,?,?)")
		args = append(args, k.Start, k.Key, k.Status, shard, o[k])
	}
	if db.dialect == DialectMySQL {
		b.WriteString(tables.mysqlAdd)
	} else {
		b.WriteString(tables.sqliteAdd)
	}
	if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
		return fmt.Errorf("add %s roll-ups: %w", tables.what, err)
	}
	return writeCoarse(ctx, db, tx, o, keys, shard, tables)
}

// OutcomeBuckets returns the roll-up counters of final outcomes whose
// bucket starts in [from, to), ordered by Start (then connection and
// status): one row per bucket, connection and status that counted at
// least one message. The counters are history: they grow in the same
// transaction as RecordOutcomes (and ImportLogs) and deleting logs
// (retention, DELETE /logs) never lowers them.
func (db *LogService) OutcomeBuckets(ctx context.Context, from, to time.Time) ([]core.OutcomeBucket, error) {
	if site := core.SiteScope(ctx); site > 0 {
		return db.siteOutcomeBuckets(ctx, site, from, to)
	}
	return readBuckets(ctx, db.handle, "outcome buckets", "{prefix}mailsvc_outcome_buckets", "connection_id", from, to,
		func(r RowScanner) (core.OutcomeBucket, error) {
			var b core.OutcomeBucket
			err := r.Scan(&b.Start, &b.ConnectionID, &b.Status, &b.Count)
			b.Start = b.Start.UTC()
			return b, err
		})
}

// ReadBuckets returns the rows of a 15-minute roll-up table (such as
// {prefix}mailsvc_outcome_buckets) by the column key and status whose
// bucket starts in [from, to), its shards summed, ordered by start, key
// and status: scan reads each (bucket_start, key, status, count). what
// names the read in errors.
func ReadBuckets[B any](ctx context.Context, db *DB, what, table, key string, from, to time.Time,
	scan func(RowScanner) (B, error)) ([]B, error) {
	return readBuckets(ctx, db.handle, what, table, key, from, to, scan)
}

func readBuckets[B any](ctx context.Context, db *handle, what, table, key string, from, to time.Time,
	scan func(RowScanner) (B, error)) ([]B, error) {
	out := []B{}
	err := EachRow(ctx, db.sqlDB, what, db.expand(`SELECT bucket_start, `+key+`, status, SUM(messages)
		FROM `+table+` WHERE bucket_start >= ? AND bucket_start < ?
		GROUP BY bucket_start, `+key+`, status
		ORDER BY bucket_start, `+key+`, status`),
		[]any{from.UTC().Truncate(time.Microsecond), to.UTC().Truncate(time.Microsecond)}, AppendRows(&out, scan))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Beside the 15-minute buckets every roll-up is also kept by the hour and
// by the UTC day (the width_minutes column of {prefix}mailsvc_outcome_rollups,
// {prefix}mailsvc_source_rollups and {prefix}mailsvc_event_buckets,
// adapters/pro/store), written
// in the same upsert transaction as the 15-minute rows. A range read then
// takes its whole days from the day rows, the whole hours at its edges
// from the hour rows and only what is left from 15-minute rows: about 30
// day rows plus at most 46 hour and 6 quarter-hour rows per key for 30
// days in any time zone, instead of 2,880 buckets.

// Widths of the roll-up buckets, in minutes.
const (
	QuarterMinutes = 15
	HourMinutes    = 60
	DayMinutes     = 24 * 60
)

// CoarseWidths are the widths written beside the 15-minute buckets.
var CoarseWidths = []int{HourMinutes, DayMinutes}

// WidthStart returns the start of the bucket of the given width (in
// minutes, a divisor of a UTC day) that t falls in.
func WidthStart(t time.Time, minutes int) time.Time {
	return t.UTC().Truncate(time.Duration(minutes) * time.Minute)
}

// CeilTime rounds t up to a multiple of d.
func CeilTime(t time.Time, d time.Duration) time.Time {
	tt := t.Truncate(d)
	if tt.Before(t) {
		tt = tt.Add(d)
	}
	return tt
}

// RollupSpan is the buckets of one width (in minutes) that start in [from, to).
type RollupSpan struct {
	Minutes  int
	From, To time.Time
}

// RollupSpans splits the 15-minute buckets that start in [from, to) into
// whole UTC days, whole hours at the edges and the quarter hours left:
// at most one span of days, two of hours and four of quarter hours, none
// empty, together covering exactly those buckets.
func RollupSpans(from, to time.Time) []RollupSpan {
	q := core.OutcomeBucketSize
	from, to = CeilTime(from.UTC(), q), CeilTime(to.UTC(), q)
	var out []RollupSpan
	add := func(minutes int, a, b time.Time) {
		if a.Before(b) {
			out = append(out, RollupSpan{minutes, a, b})
		}
	}
	hours := func(a, b time.Time) {
		h0, h1 := CeilTime(a, time.Hour), b.Truncate(time.Hour)
		if !h0.Before(h1) {
			add(QuarterMinutes, a, b)
			return
		}
		add(QuarterMinutes, a, h0)
		add(HourMinutes, h0, h1)
		add(QuarterMinutes, h1, b)
	}
	d0, d1 := CeilTime(from, 24*time.Hour), to.Truncate(24*time.Hour)
	if !d0.Before(d1) {
		hours(from, to)
		return out
	}
	hours(from, d0)
	add(DayMinutes, d0, d1)
	hours(d1, to)
	return out
}

// SpanWhere returns the condition selecting the buckets of spans whose
// width is accepted by keep, and its arguments; with width false the
// table has no width_minutes column (the 15-minute tables). ok is false
// when no span is kept.
func SpanWhere(spans []RollupSpan, keep func(minutes int) bool, width bool) (cond string, args []any, ok bool) {
	var parts []string
	for _, s := range spans {
		if !keep(s.Minutes) {
			continue
		}
		if width {
			parts = append(parts, "(width_minutes = ? AND bucket_start >= ? AND bucket_start < ?)")
			args = append(args, s.Minutes)
		} else {
			parts = append(parts, "(bucket_start >= ? AND bucket_start < ?)")
		}
		args = append(args, s.From, s.To)
	}
	if len(parts) == 0 {
		return "", nil, false
	}
	return "(" + strings.Join(parts, " OR ") + ")", args, true
}

// IsQuarter and isCoarse sort spans between the 15-minute tables and
// the tables of coarser widths.
func IsQuarter(minutes int) bool { return minutes == QuarterMinutes }
func IsCoarse(minutes int) bool  { return minutes != QuarterMinutes }

// CounterRow is one row of a roll-up upsert: its key columns' values
// (shard included), then its counters'.
type CounterRow []any

// UpsertCounters adds rows to the counters of table inside tx, a
// module's transaction (its own roll-ups), as upsertCounters does.
func (db *RollupService) UpsertCounters(ctx context.Context, tx *sql.Tx, table string, keyCols, counterCols []string, rows []CounterRow) error {
	return db.upsertCounters(ctx, tx, table, keyCols, counterCols, rows)
}

// upsertCounters adds rows to the counters of table in multi-row
// upserts of at most idChunk rows: keyCols (the primary key, shard
// included) then counterCols name each row's values; a row whose key
// exists adds its counters to it. Callers pass rows in primary-key
// order, so concurrent writers lock them in the same order.
func (db *handle) upsertCounters(ctx context.Context, tx *sql.Tx, table string, keyCols, counterCols []string, rows []CounterRow) error {
	cols := append(append([]string{}, keyCols...), counterCols...)
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	var set []string
	for _, c := range counterCols {
		if db.dialect == DialectMySQL {
			set = append(set, c+" = "+c+" + VALUES("+c+")")
		} else {
			set = append(set, c+" = "+c+" + excluded."+c)
		}
	}
	for part := range slices.Chunk(rows, idChunk) {
		var b strings.Builder
		b.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
		args := make([]any, 0, len(cols)*len(part))
		for i, r := range part {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(row)
			args = append(args, r...)
		}
		if db.dialect == DialectMySQL {
			b.WriteString(" ON DUPLICATE KEY UPDATE ")
		} else {
			b.WriteString(" ON CONFLICT (" + strings.Join(keyCols, ", ") + ") DO UPDATE SET ")
		}
		b.WriteString(strings.Join(set, ", "))
		if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
			return fmt.Errorf("add to %s: %w", table, err)
		}
	}
	return nil
}

// writeCoarse adds the tally, already sorted as keys, to the hour and day
// roll-ups of tables, on shard.
func writeCoarse[K cmp.Ordered](ctx context.Context, db *handle, tx *sql.Tx, o Tally[K], keys []TallyKey[K], shard int, tables TallyTables) error {
	type coarseKey struct {
		minutes int
		key     TallyKey[K]
	}
	sums := map[coarseKey]int64{}
	var order []coarseKey
	for _, w := range CoarseWidths {
		for _, k := range keys {
			ck := coarseKey{w, TallyKey[K]{WidthStart(k.Start, w), k.Key, k.Status}}
			if _, seen := sums[ck]; !seen {
				order = append(order, ck)
			}
			sums[ck] += o[k]
		}
	}
	slices.SortFunc(order, func(a, b coarseKey) int {
		if a.minutes != b.minutes {
			return a.minutes - b.minutes
		}
		if c := a.key.Start.Compare(b.key.Start); c != 0 {
			return c
		}
		if c := cmp.Compare(a.key.Key, b.key.Key); c != 0 {
			return c
		}
		return strings.Compare(a.key.Status, b.key.Status)
	})
	rows := make([]CounterRow, 0, len(order))
	for _, k := range order {
		rows = append(rows, CounterRow{k.minutes, k.key.Start, k.key.Key, k.key.Status, shard, sums[k]})
	}
	return db.upsertCounters(ctx, tx, tables.coarse, tables.coarseKeys, []string{"messages"}, rows)
}
