package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
	"github.com/mailsvc/mailsvc/core"
)

// The provider events are rolled up as they are recorded (RecordLogEvent,
// in its transaction) into {prefix}mailsvc_event_buckets: per bucket (15
// minutes, hour, UTC day), provider, event, the log's sending connection
// (0 for none) and source, the events and how many of them repeat an
// earlier one. The analytics count events, but also messages: the
// distinct logs that received an event of a kind in a range, which sums
// of buckets cannot give (a message opened on two days is one message).
//
// The events of one log and one kind, ordered by (occurred_at, id), form
// a chain: a "provider chain" per provider (what EventCounts counts) and a
// "kind chain" whatever the provider (what LogEventTallies counts). The
// events of a chain that fall in a range [from, to) are consecutive in
// it, so the messages of the range are its events less those whose
// predecessor in the chain is also in the range:
//
//	messages = events − repeats + crossing
//
// where repeats counts the events of the range that have a predecessor
// at all (kept in the buckets: repeats, kind_repeats) and crossing those
// whose predecessor happened before from. The latter are read from
// {prefix}mailsvc_event_repeats, one row per event that has a predecessor
// (its time and its predecessors' times), by occurred_at: only repeated
// events (a message opened again, a second recipient bouncing) are rows
// there, never the first delivery, bounce or open of a message. An event
// recorded out of order becomes the predecessor of a later one: that
// one's row is updated, and when it had no predecessor before, its
// bucket's repeats grow. The counters only ever grow, so they shard and
// compact like the outcome roll-ups.

// allWidths are the bucket widths of the event roll-ups and the roll-ups
// by site: quarter hours, hours and UTC days.
var allWidths = []int{store.QuarterMinutes, store.HourMinutes, store.DayMinutes}

// The event roll-ups shard their counters like the service's own
// roll-ups: store.CompactRollups folds them too.
func init() {
	store.RegisterRollupTables(
		store.RollupTable{Name: "{prefix}mailsvc_event_buckets", Width: true,
			Keys:     []string{"provider", "event", "connection_id", "source"},
			Counters: []string{"events", "repeats", "kind_repeats"}, Widths: allWidths},
		store.RollupTable{Name: "{prefix}mailsvc_site_event_buckets", Width: true,
			Keys:     []string{"site_id", "provider", "event", "connection_id", "source"},
			Counters: []string{"events", "repeats", "kind_repeats"}, Widths: allWidths},
	)
}

// eventLink is one event of a log's chains: its id, provider and time.
type eventLink struct {
	id       int64
	provider string
	at       time.Time
}

// eventPreds are an event's predecessors in its provider and kind chains
// (nil when it has none).
type eventPreds struct {
	provider, kind *time.Time
}

// chainPreds returns the predecessors of each of links (of one log and
// one event kind), by id.
func chainPreds(links []eventLink) map[int64]eventPreds {
	sorted := slices.Clone(links)
	slices.SortFunc(sorted, func(a, b eventLink) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return int(min(max(a.id-b.id, -1), 1))
	})
	out := make(map[int64]eventPreds, len(sorted))
	last := map[string]*time.Time{}
	var prev *time.Time
	for _, l := range sorted {
		out[l.id] = eventPreds{provider: last[l.provider], kind: prev}
		at := l.at
		last[l.provider], prev = &at, &at
	}
	return out
}

// sameTime reports whether a and b are both nil or the same instant.
func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// eventBucketKey is one row of {prefix}mailsvc_event_buckets, shard aside.
type eventBucketKey struct {
	minutes         int
	start           time.Time
	provider, event string
}

// eventCounters are the counters of one event bucket row.
type eventCounters struct{ events, repeats, kindRepeats int64 }

// addEventRollup grows the event roll-ups with added, an event of kind
// event just inserted for a log of site sent through conn (0 for none)
// from source, whose chains held existing before (the log's other events
// of that kind, read under the log's lock). A site other than the main
// one has its events counted in the roll-ups by site too
// ({prefix}mailsvc_site_event_buckets). It runs in RecordLogEvent's
// transaction.
func (db *DB) addEventRollup(ctx context.Context, tx *sql.Tx, site, conn int64, source, event string, existing []eventLink, added eventLink) error {
	before := chainPreds(existing)
	after := chainPreds(append(slices.Clone(existing), added))
	counters := map[eventBucketKey]*eventCounters{}
	count := func(l eventLink, events, repeats, kindRepeats int64) {
		for _, w := range allWidths {
			k := eventBucketKey{w, store.WidthStart(l.at, w), l.provider, event}
			c := counters[k]
			if c == nil {
				c = &eventCounters{}
				counters[k] = c
			}
			c.events += events
			c.repeats += repeats
			c.kindRepeats += kindRepeats
		}
	}
	one := func(p *time.Time) int64 {
		if p != nil {
			return 1
		}
		return 0
	}
	var repeats []store.CounterRow
	for _, l := range append(slices.Clone(existing), added) {
		a, b := after[l.id], before[l.id]
		if l.id == added.id {
			count(l, 1, one(a.provider), one(a.kind))
		} else {
			if sameTime(a.provider, b.provider) && sameTime(a.kind, b.kind) {
				continue
			}
			// Adding an event only gives predecessors: one that had
			// none now repeats.
			count(l, 0, one(a.provider)-one(b.provider), one(a.kind)-one(b.kind))
		}
		if a.provider != nil || a.kind != nil {
			repeats = append(repeats, store.CounterRow{l.id, l.at, l.provider, event, conn, source, store.NullTime(a.provider), store.NullTime(a.kind), max(site, core.MainSiteID)})
		}
	}
	keys := make([]eventBucketKey, 0, len(counters))
	for k := range counters {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b eventBucketKey) int {
		if a.minutes != b.minutes {
			return a.minutes - b.minutes
		}
		if c := a.start.Compare(b.start); c != 0 {
			return c
		}
		return strings.Compare(a.provider, b.provider)
	})
	shard := 0
	if db.base.Dialect() == store.DialectMySQL {
		shard = rand.IntN(store.RollupShards)
	}
	rows := make([]store.CounterRow, 0, len(keys))
	for _, k := range keys {
		c := counters[k]
		rows = append(rows, store.CounterRow{k.minutes, k.start, k.provider, k.event, conn, source, shard, c.events, c.repeats, c.kindRepeats})
	}
	if err := db.base.Rollups().UpsertCounters(ctx, tx, "{prefix}mailsvc_event_buckets",
		[]string{"width_minutes", "bucket_start", "provider", "event", "connection_id", "source", "shard"},
		[]string{"events", "repeats", "kind_repeats"}, rows); err != nil {
		return err
	}
	if site > core.MainSiteID {
		siteRows := make([]store.CounterRow, 0, len(keys))
		for _, k := range keys {
			c := counters[k]
			siteRows = append(siteRows, store.CounterRow{k.minutes, k.start, site, k.provider, k.event, conn, source, shard, c.events, c.repeats, c.kindRepeats})
		}
		if err := db.base.Rollups().UpsertCounters(ctx, tx, "{prefix}mailsvc_site_event_buckets",
			[]string{"width_minutes", "bucket_start", "site_id", "provider", "event", "connection_id", "source", "shard"},
			[]string{"events", "repeats", "kind_repeats"}, siteRows); err != nil {
			return err
		}
	}
	if len(repeats) == 0 {
		return nil
	}
	slices.SortFunc(repeats, func(a, b store.CounterRow) int { return int(min(max(a[0].(int64)-b[0].(int64), -1), 1)) })
	return db.upsertRepeats(ctx, tx, repeats)
}

// upsertRepeats writes rows of {prefix}mailsvc_event_repeats (event_id,
// occurred_at, provider, event, connection_id, source, provider_prev_at,
// kind_prev_at, site_id), replacing the predecessors of a row that exists.
func (db *DB) upsertRepeats(ctx context.Context, tx *sql.Tx, rows []store.CounterRow) error {
	var b strings.Builder
	b.WriteString(`INSERT INTO {prefix}mailsvc_event_repeats
		(event_id, occurred_at, provider, event, connection_id, source, provider_prev_at, kind_prev_at, site_id) VALUES `)
	args := make([]any, 0, 9*len(rows))
	for i, r := range rows {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("(?,?,?,?,?,?,?,?,?)")
		args = append(args, r...)
	}
	if db.base.Dialect() == store.DialectMySQL {
		b.WriteString(" ON DUPLICATE KEY UPDATE provider_prev_at = VALUES(provider_prev_at), kind_prev_at = VALUES(kind_prev_at)")
	} else {
		b.WriteString(" ON CONFLICT (event_id) DO UPDATE SET provider_prev_at = excluded.provider_prev_at, kind_prev_at = excluded.kind_prev_at")
	}
	if _, err := tx.ExecContext(ctx, db.base.Expand(b.String()), args...); err != nil {
		return fmt.Errorf("record repeated provider events: %w", err)
	}
	return nil
}

// eventLinks reads a log's events of one kind, for addEventRollup.
func (db *DB) eventLinks(ctx context.Context, tx *sql.Tx, logID int64, event string) ([]eventLink, error) {
	rows, err := tx.QueryContext(ctx, db.base.Expand(`SELECT id, provider, occurred_at FROM {prefix}mailsvc_log_events
		WHERE log_id = ? AND event = ?`), logID, event)
	if err != nil {
		return nil, fmt.Errorf("read the log's provider events: %w", err)
	}
	defer rows.Close()
	var out []eventLink
	for rows.Next() {
		var l eventLink
		if err := rows.Scan(&l.id, &l.provider, &l.at); err != nil {
			return nil, fmt.Errorf("read the log's provider events: %w", err)
		}
		l.at = l.at.UTC()
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the log's provider events: %w", err)
	}
	return out, nil
}

// EventCounts counts the provider events that happened in [from, to)
// (by the provider's time), per provider and event, ordered by provider
// and event: Events every event, Messages the distinct logs. from and to
// are rounded up to 15-minute bucket boundaries, as for the service's OutcomeTotals.
// It reads the event roll-ups (days, hours and quarter hours, see
// store.RollupSpans) and the repeated events of the range whose predecessor
// is older than from; events of logs deleted since still count.
func (svc *EventService) EventCounts(ctx context.Context, from, to time.Time) ([]analytics.EventCount, error) {
	db := svc.db
	type key struct{ provider, event string }
	sums := map[key]*analytics.EventCount{}
	err := db.eventSums(ctx, from, to, nil, "provider, event", "SUM(events) - SUM(repeats)", "provider_prev_at",
		func(rows *sql.Rows, crossing bool, sign int64) error {
			var k key
			var events, messages int64
			dest := []any{&k.provider, &k.event}
			if !crossing {
				dest = append(dest, &events)
			}
			if err := rows.Scan(append(dest, &messages)...); err != nil {
				return err
			}
			c := sums[k]
			if c == nil {
				c = &analytics.EventCount{Provider: k.provider, Event: k.event}
				sums[k] = c
			}
			c.Events += sign * events
			c.Messages += sign * messages
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("count provider events: %w", err)
	}
	out := make([]analytics.EventCount, 0, len(sums))
	for _, c := range sums {
		if c.Events > 0 {
			out = append(out, *c)
		}
	}
	slices.SortFunc(out, func(a, b analytics.EventCount) int {
		if c := strings.Compare(a.Provider, b.Provider); c != 0 {
			return c
		}
		return strings.Compare(a.Event, b.Event)
	})
	return out, nil
}

// LogEventTallies counts the distinct logs that received one of events in
// [from, to) (rounded up to 15-minute boundaries), per event, sending
// connection (0 when none) and source, ordered by those. Like
// EventCounts it reads the event roll-ups and the repeated events whose
// predecessor (of any provider) is older than from.
func (svc *EventService) LogEventTallies(ctx context.Context, from, to time.Time, events []string) ([]analytics.LogEventTally, error) {
	db := svc.db
	out := []analytics.LogEventTally{}
	if len(events) == 0 {
		return out, nil
	}
	type key struct {
		conn          int64
		source, event string
	}
	sums := map[key]int64{}
	err := db.eventSums(ctx, from, to, events, "connection_id, source, event", "SUM(events) - SUM(kind_repeats)", "kind_prev_at",
		func(rows *sql.Rows, crossing bool, sign int64) error {
			var k key
			var messages int64
			if err := rows.Scan(&k.conn, &k.source, &k.event, &messages); err != nil {
				return err
			}
			sums[k] += sign * messages
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("count logs with provider events: %w", err)
	}
	for k, n := range sums {
		if n > 0 {
			out = append(out, analytics.LogEventTally{ConnectionID: k.conn, Source: k.source, Event: k.event, Messages: n})
		}
	}
	slices.SortFunc(out, func(a, b analytics.LogEventTally) int {
		if a.ConnectionID != b.ConnectionID {
			return int(min(max(a.ConnectionID-b.ConnectionID, -1), 1))
		}
		if c := strings.Compare(a.Source, b.Source); c != 0 {
			return c
		}
		return strings.Compare(a.Event, b.Event)
	})
	return out, nil
}

// eventSums runs the two reads of EventCounts and LogEventTallies over
// the buckets starting in [from, to) (rounded up to 15 minutes), of
// events only when not nil, grouped by group: the roll-ups (group, then,
// for EventCounts' provider grouping, SUM(events), then messages) and
// the crossing repeats (group, COUNT(*)) whose predecessor column prev
// is before from. scan reads one row of either, whose figures count
// sign times. Under a site scope (core.SiteScope) a site other than the
// main one reads its roll-ups by site ({prefix}mailsvc_site_event_buckets), the main site
// the network's less the other sites'; the crossing repeats are the
// site's.
func (db *DB) eventSums(ctx context.Context, from, to time.Time, events []string, group, messages, prev string,
	scan func(rows *sql.Rows, crossing bool, sign int64) error) error {
	from, to = store.CeilTime(from.UTC(), core.OutcomeBucketSize), store.CeilTime(to.UTC(), core.OutcomeBucketSize)
	cond, args, ok := store.SpanWhere(store.RollupSpans(from, to), func(int) bool { return true }, true)
	if !ok {
		return nil
	}
	var kinds string
	var kindArgs []any
	if events != nil {
		kinds = " AND event IN (" + strings.TrimSuffix(strings.Repeat("?,", len(events)), ",") + ")"
		for _, e := range events {
			kindArgs = append(kindArgs, e)
		}
	}
	cols := group + ", " + messages
	if events == nil {
		cols = group + ", SUM(events), " + messages
	}
	type query struct {
		sql      string
		args     []any
		crossing bool
		sign     int64
	}
	site := core.SiteScope(ctx)
	var queries []query
	if site == 0 || site == core.MainSiteID {
		queries = append(queries, query{`SELECT ` + cols + ` FROM {prefix}mailsvc_event_buckets WHERE ` + cond + kinds + ` GROUP BY ` + group,
			append(slices.Clone(args), kindArgs...), false, 1})
	}
	repeatsSite, repeatsArgs := "", []any{}
	if site > 0 {
		siteCond, sign := " AND site_id = ?", int64(1)
		if site == core.MainSiteID {
			siteCond, sign = " AND site_id <> ?", -1
		}
		queries = append(queries, query{`SELECT ` + cols + ` FROM {prefix}mailsvc_site_event_buckets WHERE ` + cond + siteCond + kinds + ` GROUP BY ` + group,
			append(append(slices.Clone(args), site), kindArgs...), false, sign})
		repeatsSite, repeatsArgs = " AND site_id = ?", []any{site}
	}
	queries = append(queries, query{`SELECT ` + group + `, COUNT(*) FROM {prefix}mailsvc_event_repeats
			WHERE occurred_at >= ? AND occurred_at < ? AND ` + prev + ` < ?` + repeatsSite + kinds + ` GROUP BY ` + group,
		append(append([]any{from, to, from}, repeatsArgs...), kindArgs...), true, 1})
	for _, q := range queries {
		rows, err := db.base.SQL().QueryContext(ctx, db.base.Expand(q.sql), q.args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			if err := scan(rows, q.crossing, q.sign); err != nil {
				rows.Close()
				return err
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
