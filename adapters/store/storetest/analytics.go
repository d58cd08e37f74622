package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// analyticsTests are the contract tests of the provider events by time
// the Pro analytics read. The roll-ups by source and by site, the outcome
// totals and the log export are the Pro store's (adapters/pro/store:
// analytics_contract_test.go).
func (s *suite) analyticsTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"EventCountsAndTallies", s.testEventCounts},
		{"EventRollupsMatchDirectCounts", s.testEventRollupsMatchDirectCounts},
		{"EventRollupsExactAcrossReplicas", s.testEventRollupsConcurrent},
	}
}

// outcomeTotals sums the outcome roll-ups by status.
func outcomeTotals(t *testing.T, db *store.DB, from, to time.Time) map[string]int64 {
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

func (s *suite) testEventCounts(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	a := deliveredWithID(t, db, 1, "pm-a") // source "test", connection 1
	b := deliveredWithID(t, db, 2, "pm-b")
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	events := []struct {
		log      *core.Log
		provider string
		event    string
		at       time.Time
	}{
		{a, "sendgrid", core.EventDelivered, base},
		{a, "sendgrid", core.EventOpened, base.Add(time.Minute)},
		{a, "sendgrid", core.EventOpened, base.Add(2 * time.Minute)}, // the same message opened again
		{b, "sendgrid", core.EventBounced, base.Add(3 * time.Minute)},
		{b, "sendgrid", core.EventBounced, base.Add(4 * time.Minute)}, // a second recipient bounced
		{a, "mailgun", core.EventComplained, base.Add(time.Hour)},
		{a, "mailgun", core.EventDelivered, base.Add(-time.Minute)}, // before the range
		{b, "mailgun", core.EventBounced, base.Add(2 * time.Hour)},  // at the end: excluded
	}
	for i, e := range events {
		ev := &core.LogEvent{LogID: e.log.ID, Provider: e.provider, Event: e.event, At: e.at}
		if _, err := db.RecordLogEvent(ctx, ev, "", ""); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	got, err := db.EventCounts(ctx, base, base.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []core.EventCount{
		{Provider: "mailgun", Event: core.EventComplained, Events: 1, Messages: 1},
		{Provider: "sendgrid", Event: core.EventBounced, Events: 2, Messages: 1},
		{Provider: "sendgrid", Event: core.EventDelivered, Events: 1, Messages: 1},
		{Provider: "sendgrid", Event: core.EventOpened, Events: 2, Messages: 1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("EventCounts = %+v, want %+v", got, want)
	}
	tallies, err := db.LogEventTallies(ctx, base, base.Add(2*time.Hour), []string{core.EventBounced, core.EventComplained})
	if err != nil {
		t.Fatal(err)
	}
	wantT := []core.LogEventTally{
		{ConnectionID: 1, Source: "test", Event: core.EventBounced, Messages: 1},
		{ConnectionID: 1, Source: "test", Event: core.EventComplained, Messages: 1},
	}
	if !slices.Equal(tallies, wantT) {
		t.Fatalf("LogEventTallies = %+v, want %+v", tallies, wantT)
	}
	if got, err := db.EventCounts(ctx, base.Add(3*time.Hour), base.Add(4*time.Hour)); err != nil || len(got) != 0 {
		t.Fatalf("EventCounts of an empty range = %v, %v", got, err)
	}
}

// testEventRollupsMatchDirectCounts checks that the range sums of the
// provider events the analytics read (EventCounts, LogEventTallies: days,
// hours and quarter hours of the roll-ups, and the repeated events)
// answer exactly what counting the provider events directly answers, for
// ranges with ragged edges: as the writers leave them, after
// CompactRollups, after migration 11 rebuilt them from the data, and
// after more events arrived out of order on top of the rebuilt ones. The
// outcome totals by connection and by source of the same check are the
// Pro store's (adapters/pro/store: testRollupsMatchDirectCounts).
func (s *suite) testEventRollupsMatchDirectCounts(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	day := time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(11, 3))
	// A random time in [day - 1 day, day + 5 days), to the microsecond.
	randomAt := func() time.Time {
		return day.Add(-24*time.Hour + time.Duration(rng.Int64N(int64(6*24*time.Hour)/1000))*time.Microsecond)
	}
	sources := []string{"woocommerce", "wpforms", "", "sendmail"}
	var logs []*core.Log
	for i := range 240 {
		at := randomAt()
		l := &core.Log{Status: core.StatusDelivered, Source: sources[i%len(sources)], Message: testMessage(i), CreatedAt: at.Add(-time.Minute), UpdatedAt: at}
		if i%3 != 0 {
			conn := int64(1 + i%3)
			l.SentConnectionID = &conn
		}
		switch i % 5 {
		case 0:
			l.Status = core.StatusFailed
		case 1:
			d := at.Add(-30 * time.Second)
			l.DeliveredAt = &d
		}
		logs = append(logs, l)
	}
	if err := db.Logs().ImportLogs(ctx, logs); err != nil {
		t.Fatalf("ImportLogs: %v", err)
	}
	// Provider events on the delivered logs: several kinds, a message's
	// repeated events within a bucket, across days and from a second
	// provider, some at the same instant, recorded in random order.
	type event struct {
		log             int64
		provider, event string
		at              time.Time
	}
	var events []event
	kinds := []string{core.EventDelivered, core.EventOpened, core.EventBounced, core.EventComplained, core.EventClicked}
	for i, l := range logs {
		if l.Status != core.StatusDelivered {
			continue
		}
		provider := []string{"sendgrid", "mailgun"}[i%2]
		for j := range rng.IntN(6) {
			e := event{l.ID, provider, kinds[rng.IntN(len(kinds))], randomAt()}
			if j > 0 && rng.IntN(4) == 0 {
				e.at = events[len(events)-1].at // the same instant again
			}
			if rng.IntN(8) == 0 {
				e.provider = "ses" // another provider reports on the message
			}
			events = append(events, e)
		}
	}
	rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
	record := func(evs []event) {
		t.Helper()
		for i, e := range evs {
			ev := &core.LogEvent{LogID: e.log, Provider: e.provider, Event: e.event, At: e.at}
			if _, err := db.RecordLogEvent(ctx, ev, "", ""); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
	}
	half := len(events) / 2
	record(events[:half])

	h := func(hours, minutes int) time.Time {
		return day.Add(time.Duration(hours)*time.Hour + time.Duration(minutes)*time.Minute)
	}
	ranges := []struct {
		name     string
		from, to time.Time
	}{
		{"ragged both ends", h(7, 45), h(3*24+13, 15)},
		{"one hour", h(10, 0), h(11, 0)},
		{"across midnight, no whole day", h(22, 30), h(25, 15)},
		{"whole days", day, h(3*24, 0)},
		{"not on quarter hours", h(0, 7), h(2*24+5, 3)},
		{"one quarter hour", h(47, 45), h(48, 0)},
		{"everything", h(-48, 0), h(6*24, 0)},
		{"empty", h(5, 0), h(5, 0)},
		{"a previous period", h(-24+7, 45), h(7, 45)},
	}
	check := func(stage string) {
		t.Helper()
		for _, r := range ranges {
			ec, err := db.EventCounts(ctx, r.from, r.to)
			if err != nil {
				t.Fatal(err)
			}
			if want := directEventCounts(t, db, r.from, r.to); !slices.Equal(ec, want) {
				t.Errorf("%s, %s: EventCounts = %+v\nwant %+v", stage, r.name, ec, want)
			}
			asked := []string{core.EventBounced, core.EventComplained, core.EventOpened}
			lt, err := db.LogEventTallies(ctx, r.from, r.to, asked)
			if err != nil {
				t.Fatal(err)
			}
			if want := directTallies(t, db, r.from, r.to, asked); !slices.Equal(lt, want) {
				t.Errorf("%s, %s: LogEventTallies = %+v\nwant %+v", stage, r.name, lt, want)
			}
		}
	}
	check("as written")
	record(events[half:])
	check("more events, out of order")
	if _, err := db.CompactRollups(ctx); err != nil {
		t.Fatalf("CompactRollups: %v", err)
	}
	check("compacted")

	// Migration 11 rebuilds the roll-ups from the 15-minute ones and the
	// provider events (and migration 24 the event roll-ups by site, empty,
	// and the repeated events' site).
	g := db.Gorm()
	for _, table := range []string{"outcome_rollups", "event_buckets", "event_repeats", "site_event_buckets"} {
		if err := g.Exec("DROP TABLE " + db.TableName(table)).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Exec("DELETE FROM "+db.TableName("migrations")+" WHERE version IN (?, ?)", 11, 24).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	check("rebuilt by the migration")
	// Events arriving after the rebuild extend the rebuilt chains.
	var more []event
	for _, e := range events[:40] {
		e.at = e.at.Add(-time.Duration(rng.Int64N(int64(36 * time.Hour))))
		more = append(more, e)
	}
	record(more)
	check("more events after the rebuild")
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

// directEventCounts counts the provider events of [from, to) (rounded up
// to quarter hours) straight from the events table, as EventCounts
// answered before its roll-ups.
func directEventCounts(t *testing.T, db *store.DB, from, to time.Time) []core.EventCount {
	t.Helper()
	qf, qt := quarterRange(from, to)
	rows, err := db.Gorm().Raw(`SELECT provider, event, COUNT(*), COUNT(DISTINCT log_id)
		FROM `+db.TableName("log_events")+` WHERE occurred_at >= ? AND occurred_at < ?
		GROUP BY provider, event ORDER BY provider, event`, qf, qt).Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []core.EventCount{}
	for rows.Next() {
		var c core.EventCount
		if err := rows.Scan(&c.Provider, &c.Event, &c.Events, &c.Messages); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// directTallies counts the distinct logs with one of events in [from,
// to) per connection, source and event, joining the events to their
// logs, as LogEventTallies answered before its roll-ups.
func directTallies(t *testing.T, db *store.DB, from, to time.Time, events []string) []core.LogEventTally {
	t.Helper()
	qf, qt := quarterRange(from, to)
	rows, err := db.Gorm().Raw(`SELECT COALESCE(l.sent_connection_id, 0), l.source, e.event, COUNT(DISTINCT e.log_id)
		FROM `+db.TableName("log_events")+` e JOIN `+db.TableName("logs")+` l ON l.id = e.log_id
		WHERE e.occurred_at >= ? AND e.occurred_at < ? AND e.event IN ?
		GROUP BY COALESCE(l.sent_connection_id, 0), l.source, e.event
		ORDER BY 1, 2, 3`, qf, qt, events).Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []core.LogEventTally{}
	for rows.Next() {
		var c core.LogEventTally
		if err := rows.Scan(&c.ConnectionID, &c.Source, &c.Event, &c.Messages); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// testEventRollupsConcurrent records the provider events of a few
// messages from four handles at once (as replicas receiving webhooks),
// out of order and often for the same message: the event roll-ups then
// answer what counting the events answers.
func (s *suite) testEventRollupsConcurrent(t *testing.T) {
	ctx := context.Background()
	prefix := s.prefix()
	db := s.open(t, prefix)
	day := time.Date(2024, 6, 10, 0, 0, 0, 0, time.UTC)
	var logs []*core.Log
	for i := range 3 {
		at := day.Add(time.Duration(i) * time.Hour)
		conn := int64(1 + i)
		logs = append(logs, &core.Log{Status: core.StatusDelivered, Source: "shop", SentConnectionID: &conn, Message: testMessage(i), CreatedAt: at, UpdatedAt: at})
	}
	if err := db.Logs().ImportLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := range 4 {
		replica := s.open(t, prefix)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 9))
			for i := range 25 {
				ev := &core.LogEvent{LogID: logs[rng.IntN(len(logs))].ID, Provider: []string{"sendgrid", "ses"}[rng.IntN(2)],
					Event: []string{core.EventOpened, core.EventBounced}[i%2],
					At:    day.Add(time.Duration(rng.Int64N(int64(3 * 24 * time.Hour))))}
				if _, err := replica.RecordLogEvent(ctx, ev, "", ""); err != nil {
					errs <- fmt.Errorf("replica %d: %w", r, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := db.CompactRollups(ctx); err != nil {
		t.Fatal(err)
	}
	asked := []string{core.EventOpened, core.EventBounced}
	for _, r := range [][2]time.Time{
		{day, day.Add(3 * 24 * time.Hour)},
		{day.Add(13*time.Hour + 15*time.Minute), day.Add(2*24*time.Hour + 6*time.Hour + 45*time.Minute)},
		{day.Add(24 * time.Hour), day.Add(36 * time.Hour)},
	} {
		ec, err := db.EventCounts(ctx, r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		if want := directEventCounts(t, db, r[0], r[1]); !slices.Equal(ec, want) {
			t.Errorf("%v: EventCounts = %+v\nwant %+v", r, ec, want)
		}
		lt, err := db.LogEventTallies(ctx, r[0], r[1], asked)
		if err != nil {
			t.Fatal(err)
		}
		if want := directTallies(t, db, r[0], r[1], asked); !slices.Equal(lt, want) {
			t.Errorf("%v: LogEventTallies = %+v\nwant %+v", r, lt, want)
		}
	}
}
