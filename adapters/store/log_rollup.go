package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// bucketKey is one row of {prefix}mailsvc_outcome_buckets.
type bucketKey struct {
	Start        time.Time
	ConnectionID int64
	Status       string
}

// outcomeTally groups final outcomes by bucket, connection and status.
type outcomeTally map[bucketKey]int64

// add counts one message that reached status (delivered or failed, or
// core.OutcomeCountPartial for a delivered one that some recipients did
// not get; other statuses are not final and are ignored) through conn at
// t.
func (o outcomeTally) add(t time.Time, conn *int64, status string) {
	if status != core.StatusDelivered && status != core.StatusFailed && status != core.OutcomeCountPartial {
		return
	}
	k := bucketKey{Start: t.UTC().Truncate(core.OutcomeBucketSize), Status: status}
	if conn != nil {
		k.ConnectionID = *conn
	}
	o[k]++
}

// RollupShards is how many rows share one counter on MySQL: each batch
// adds to one of them at random, so concurrent RecordOutcomes
// transactions (which hold the row lock until they commit) seldom wait
// for each other. OutcomeBuckets sums the shards. SQLite has one writer
// at a time and uses shard 0 only.
const RollupShards = 8

// write adds the tally to the roll-up table: one multi-row upsert, its
// keys in a fixed order so concurrent writers lock them in the same order;
// then to the hour and day roll-ups (writeCoarse), on the same shard.
func (o outcomeTally) write(ctx context.Context, db *handle, tx *sql.Tx) error {
	if len(o) == 0 {
		return nil
	}
	shard := 0
	if db.dialect == DialectMySQL {
		shard = rand.IntN(RollupShards)
	}
	keys := make([]bucketKey, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b bucketKey) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		if a.ConnectionID != b.ConnectionID {
			return int(min(max(a.ConnectionID-b.ConnectionID, -1), 1))
		}
		return strings.Compare(a.Status, b.Status)
	})
	var b strings.Builder
	b.WriteString(`INSERT INTO {prefix}mailsvc_outcome_buckets (bucket_start, connection_id, status, shard, messages) VALUES `)
	args := make([]any, 0, 5*len(keys))
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("(?,?,?,?,?)")
		args = append(args, k.Start, k.ConnectionID, k.Status, shard, o[k])
	}
	if db.dialect == DialectMySQL {
		b.WriteString(" ON DUPLICATE KEY UPDATE messages = messages + VALUES(messages)")
	} else {
		b.WriteString(" ON CONFLICT (bucket_start, connection_id, status, shard) DO UPDATE SET messages = messages + excluded.messages")
	}
	if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
		return fmt.Errorf("add outcome roll-ups: %w", err)
	}
	return o.writeCoarse(ctx, db, tx, keys, shard)
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
	out := []core.OutcomeBucket{}
	err := EachRow(ctx, db.sqlDB, "outcome buckets", db.expand(`SELECT bucket_start, connection_id, status, SUM(messages)
		FROM {prefix}mailsvc_outcome_buckets WHERE bucket_start >= ? AND bucket_start < ?
		GROUP BY bucket_start, connection_id, status
		ORDER BY bucket_start, connection_id, status`),
		[]any{from.UTC().Truncate(time.Microsecond), to.UTC().Truncate(time.Microsecond)}, func(r RowScanner) error {
			var b core.OutcomeBucket
			if err := r.Scan(&b.Start, &b.ConnectionID, &b.Status, &b.Count); err != nil {
				return err
			}
			b.Start = b.Start.UTC()
			out = append(out, b)
			return nil
		})
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

// UpsertCounters adds rows to the counters of table in multi-row
// upserts of at most idChunk rows: keyCols (the primary key, shard
// included) then counterCols name each row's values; a row whose key
// exists adds its counters to it. Callers pass rows in primary-key
// order, so concurrent writers lock them in the same order.
func (db *handle) UpsertCounters(ctx context.Context, tx *sql.Tx, table string, keyCols, counterCols []string, rows []CounterRow) error {
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
	for part := range slices.Chunk(rows, IDChunk) {
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
// roll-ups by connection, on shard.
func (o outcomeTally) writeCoarse(ctx context.Context, db *handle, tx *sql.Tx, keys []bucketKey, shard int) error {
	type coarseKey struct {
		minutes int
		start   time.Time
		conn    int64
		status  string
	}
	sums := map[coarseKey]int64{}
	var order []coarseKey
	for _, w := range CoarseWidths {
		for _, k := range keys {
			ck := coarseKey{w, WidthStart(k.Start, w), k.ConnectionID, k.Status}
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
		if c := a.start.Compare(b.start); c != 0 {
			return c
		}
		if a.conn != b.conn {
			return int(min(max(a.conn-b.conn, -1), 1))
		}
		return strings.Compare(a.status, b.status)
	})
	rows := make([]CounterRow, 0, len(order))
	for _, k := range order {
		rows = append(rows, CounterRow{k.minutes, k.start, k.conn, k.status, shard, sums[k]})
	}
	return db.UpsertCounters(ctx, tx, "{prefix}mailsvc_outcome_rollups",
		[]string{"width_minutes", "bucket_start", "connection_id", "status", "shard"}, []string{"messages"}, rows)
}
