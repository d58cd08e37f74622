package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// eventTests are the contract tests of the provider events' tables: the
// webhook replay memory, the events and the logs they move, their
// roll-ups (against counting the events directly, across replicas and by
// site), their host hooks and their part of a personal data erase.
func (s *suite) eventTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"WebhookReplayWindow", s.testWebhookReplayWindow},
		{"LogEventsMoveDeliveredLogs", s.testLogEventsMoveLogs},
		{"PartIDsFindTheirLog", s.testPartIDsFindTheirLog},
		{"EventCountsAndTallies", s.testEventCounts},
		{"EventRollupsMatchDirectCounts", s.testEventRollupsMatchDirectCounts},
		{"EventRollupsExactAcrossReplicas", s.testEventRollupsConcurrent},
		{"SiteEventRollups", s.testSiteEventRollups},
		{"HostHooksWithLogEvents", s.testHostHooksWithLogEvents},
		{"BounceIsNoNewFailure", s.testBounceIsNoNewFailure},
		{"ProviderEventsErasedWithTheirLogs", s.testProviderEventsErased},
	}
}

func (s *suite) testWebhookReplayWindow(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	later := time.Now().Add(time.Hour)
	tests := []struct {
		provider, id string
		expires      time.Time
		want         bool
	}{
		{"mailgun", "tok-1", later, true},
		{"mailgun", "tok-1", later, false}, // a replay
		{"sendgrid", "tok-1", later, true}, // another provider's id space
		{"postmark", "old", time.Now().Add(-time.Minute), true},
		{"postmark", "old", later, true}, // the expired id was forgotten
		{"postmark", "old", later, false},
	}
	for i, tt := range tests {
		got, err := db.Events().RememberWebhookEvent(ctx, tt.provider, tt.id, tt.expires)
		if err != nil || got != tt.want {
			t.Fatalf("#%d RememberWebhookEvent(%s, %s) = %v, %v; want %v", i, tt.provider, tt.id, got, err, tt.want)
		}
	}
	if _, err := db.Events().RememberWebhookEvent(ctx, "mailgun", "", later); err == nil {
		t.Fatal("an empty id was remembered")
	}
}

func (s *suite) testLogEventsMoveLogs(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	a := storetest.DeliveredWithID(t, db.DB, 1, "pm-a")
	b := storetest.DeliveredWithID(t, db.DB, 2, "pm-b")
	queued := storetest.Enqueue(t, db.Logs(), storetest.Message(3))

	ids, err := db.Events().FindLogIDsByProviderMessageIDs(ctx, []string{"pm-a", "pm-b", "pm-unknown", ""})
	if err != nil || len(ids) != 2 || ids["pm-a"] != a.ID || ids["pm-b"] != b.ID {
		t.Fatalf("FindLogIDsByProviderMessageIDs = %v, %v", ids, err)
	}

	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		logID     int64
		event     string
		status    string
		wantMoved bool
		wantStat  string
	}{
		{"open is recorded only", a.ID, events.EventOpened, "", false, core.StatusDelivered},
		{"bounce fails a delivered log", a.ID, events.EventBounced, core.StatusFailed, true, core.StatusFailed},
		{"a queued log keeps its state", queued.ID, events.EventBounced, core.StatusFailed, false, core.StatusQueued},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &events.LogEvent{LogID: tt.logID, Provider: "ses", Event: tt.event, At: at, Detail: map[string]any{"recipient": "x@example.com"}}
			moved, err := db.Events().RecordLogEvent(ctx, ev, tt.status, "bounced: mailbox does not exist")
			if err != nil || moved != tt.wantMoved || ev.ID == 0 {
				t.Fatalf("RecordLogEvent = %v, %v (id %d); want moved %v", moved, err, ev.ID, tt.wantMoved)
			}
			l, err := db.Logs().FindLogByID(ctx, tt.logID)
			if err != nil || l.Status != tt.wantStat {
				t.Fatalf("log status %v (%v), want %s", l, err, tt.wantStat)
			}
			if tt.wantMoved && l.LastError != "bounced: mailbox does not exist" {
				t.Fatalf("last_error %q", l.LastError)
			}
		})
	}
	evs, err := db.Events().FindLogEvents(ctx, a.ID)
	if err != nil || len(evs) != 2 {
		t.Fatalf("FindLogEvents = %v, %v", evs, err)
	}
	if evs[0].Event != events.EventOpened || evs[1].Event != events.EventBounced || !evs[1].At.Equal(at) || evs[1].Detail["recipient"] != "x@example.com" || evs[0].Provider != "ses" {
		t.Fatalf("events %+v", evs)
	}
	if evs, err := db.Events().FindLogEvents(ctx, b.ID); err != nil || len(evs) != 0 {
		t.Fatalf("events of an untouched log: %v, %v", evs, err)
	}
	_, err = db.Events().RecordLogEvent(ctx, &events.LogEvent{LogID: 999999, Provider: "ses", Event: events.EventOpened}, "", "")
	storetest.WantCode(t, err, core.ENOTFOUND)

	// The events go with their log.
	if _, err := db.Logs().DeleteLogs(ctx, []int64{a.ID}); err != nil {
		t.Fatal(err)
	}
	if evs, err := db.Events().FindLogEvents(ctx, a.ID); err != nil || len(evs) != 0 {
		t.Fatalf("events outlived their log: %v, %v", evs, err)
	}
}

func (s *suite) testEventCounts(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	a := storetest.DeliveredWithID(t, db.DB, 1, "pm-a") // source "test", connection 1
	b := storetest.DeliveredWithID(t, db.DB, 2, "pm-b")
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	recorded := []struct {
		log      *core.Log
		provider string
		event    string
		at       time.Time
	}{
		{a, "sendgrid", events.EventDelivered, base},
		{a, "sendgrid", events.EventOpened, base.Add(time.Minute)},
		{a, "sendgrid", events.EventOpened, base.Add(2 * time.Minute)}, // the same message opened again
		{b, "sendgrid", events.EventBounced, base.Add(3 * time.Minute)},
		{b, "sendgrid", events.EventBounced, base.Add(4 * time.Minute)}, // a second recipient bounced
		{a, "mailgun", events.EventComplained, base.Add(time.Hour)},
		{a, "mailgun", events.EventDelivered, base.Add(-time.Minute)}, // before the range
		{b, "mailgun", events.EventBounced, base.Add(2 * time.Hour)},  // at the end: excluded
	}
	for i, e := range recorded {
		ev := &events.LogEvent{LogID: e.log.ID, Provider: e.provider, Event: e.event, At: e.at}
		if _, err := db.Events().RecordLogEvent(ctx, ev, "", ""); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	got, err := db.Events().EventCounts(ctx, base, base.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []analytics.EventCount{
		{Provider: "mailgun", Event: events.EventComplained, Events: 1, Messages: 1},
		{Provider: "sendgrid", Event: events.EventBounced, Events: 2, Messages: 1},
		{Provider: "sendgrid", Event: events.EventDelivered, Events: 1, Messages: 1},
		{Provider: "sendgrid", Event: events.EventOpened, Events: 2, Messages: 1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("EventCounts = %+v, want %+v", got, want)
	}
	tallies, err := db.Events().LogEventTallies(ctx, base, base.Add(2*time.Hour), []string{events.EventBounced, events.EventComplained})
	if err != nil {
		t.Fatal(err)
	}
	wantT := []analytics.LogEventTally{
		{ConnectionID: 1, Source: "test", Event: events.EventBounced, Messages: 1},
		{ConnectionID: 1, Source: "test", Event: events.EventComplained, Messages: 1},
	}
	if !slices.Equal(tallies, wantT) {
		t.Fatalf("LogEventTallies = %+v, want %+v", tallies, wantT)
	}
	if got, err := db.Events().EventCounts(ctx, base.Add(3*time.Hour), base.Add(4*time.Hour)); err != nil || len(got) != 0 {
		t.Fatalf("EventCounts of an empty range = %v, %v", got, err)
	}
}

// directEventCounts counts the provider events of [from, to) (rounded up
// to quarter hours) straight from the events table, as EventCounts
// answered before its roll-ups.
func directEventCounts(t *testing.T, db *proDB, from, to time.Time) []analytics.EventCount {
	t.Helper()
	qf, qt := quarterRange(from, to)
	rows, err := db.Gorm().Raw(`SELECT provider, event, COUNT(*), COUNT(DISTINCT log_id)
		FROM `+db.TableName("log_events")+` WHERE occurred_at >= ? AND occurred_at < ?
		GROUP BY provider, event ORDER BY provider, event`, qf, qt).Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []analytics.EventCount{}
	for rows.Next() {
		var c analytics.EventCount
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
func directTallies(t *testing.T, db *proDB, from, to time.Time, kinds []string) []analytics.LogEventTally {
	t.Helper()
	qf, qt := quarterRange(from, to)
	rows, err := db.Gorm().Raw(`SELECT COALESCE(l.sent_connection_id, 0), l.source, e.event, COUNT(DISTINCT e.log_id)
		FROM `+db.TableName("log_events")+` e JOIN `+db.TableName("logs")+` l ON l.id = e.log_id
		WHERE e.occurred_at >= ? AND e.occurred_at < ? AND e.event IN ?
		GROUP BY COALESCE(l.sent_connection_id, 0), l.source, e.event
		ORDER BY 1, 2, 3`, qf, qt, kinds).Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []analytics.LogEventTally{}
	for rows.Next() {
		var c analytics.LogEventTally
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
		logs = append(logs, &core.Log{Status: core.StatusDelivered, Source: "shop", SentConnectionID: &conn, Message: storetest.Message(i), CreatedAt: at, UpdatedAt: at})
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
				ev := &events.LogEvent{LogID: logs[rng.IntN(len(logs))].ID, Provider: []string{"sendgrid", "ses"}[rng.IntN(2)],
					Event: []string{events.EventOpened, events.EventBounced}[i%2],
					At:    day.Add(time.Duration(rng.Int64N(int64(3 * 24 * time.Hour))))}
				if _, err := replica.Events().RecordLogEvent(ctx, ev, "", ""); err != nil {
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
	if _, err := db.Rollups().CompactRollups(ctx); err != nil {
		t.Fatal(err)
	}
	asked := []string{events.EventOpened, events.EventBounced}
	for _, r := range [][2]time.Time{
		{day, day.Add(3 * 24 * time.Hour)},
		{day.Add(13*time.Hour + 15*time.Minute), day.Add(2*24*time.Hour + 6*time.Hour + 45*time.Minute)},
		{day.Add(24 * time.Hour), day.Add(36 * time.Hour)},
	} {
		ec, err := db.Events().EventCounts(ctx, r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		if want := directEventCounts(t, db, r[0], r[1]); !slices.Equal(ec, want) {
			t.Errorf("%v: EventCounts = %+v\nwant %+v", r, ec, want)
		}
		lt, err := db.Events().LogEventTallies(ctx, r[0], r[1], asked)
		if err != nil {
			t.Fatal(err)
		}
		if want := directTallies(t, db, r[0], r[1], asked); !slices.Equal(lt, want) {
			t.Errorf("%v: LogEventTallies = %+v\nwant %+v", r, lt, want)
		}
	}
}

// testHostHooksWithLogEvents: a provider event's host hooks are written
// in its transaction (none when it fails), RecordHostHooks writes on its
// own, and PruneHostHooks deletes rows older than the cut.
func (s *suite) testHostHooksWithLogEvents(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	var notified atomic.Int32
	db.HostHooks().NotifyHostHooks(func() { notified.Add(1) })
	l := storetest.DeliveredWithID(t, db.DB, 1, "pm-a")
	hook := core.HostHook{Name: core.HookWebhookReceived, Args: []any{"ses", "bounced", l.ID, "pm-a", "x@example.com", map[string]any{"k": "v"}}}
	ev := &events.LogEvent{LogID: l.ID + 100, Provider: "ses", Event: events.EventBounced, HostHooks: []core.HostHook{hook}}
	if _, err := db.Events().RecordLogEvent(ctx, ev, core.StatusFailed, "bounced"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("RecordLogEvent of a missing log: %v", err)
	}
	if got := storetest.Outbox(t, db.DB); len(got) != 0 || notified.Load() != 0 {
		t.Fatalf("a failed event wrote %v", got)
	}
	ev.LogID = l.ID
	if _, err := db.Events().RecordLogEvent(ctx, ev, core.StatusFailed, "bounced"); err != nil {
		t.Fatal(err)
	}
	if err := db.HostHooks().RecordHostHooks(ctx, []core.HostHook{{Name: core.HookWebhookSES, Args: []any{map[string]any{"notificationType": "Bounce"}, "arn:topic"}}}); err != nil {
		t.Fatal(err)
	}
	got := storetest.Outbox(t, db.DB)
	if len(got) != 2 || got[0].Hook != core.HookWebhookReceived || got[0].Args[4] != "x@example.com" || got[1].Hook != core.HookWebhookSES || got[1].Args[1] != "arn:topic" {
		t.Fatalf("outbox = %v", got)
	}
	if notified.Load() != 2 {
		t.Fatalf("notified %d times, want twice", notified.Load())
	}
	if n, err := db.HostHooks().PruneHostHooks(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneHostHooks of nothing old = %d, %v", n, err)
	}
	if n, err := db.HostHooks().PruneHostHooks(ctx, time.Now().Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("PruneHostHooks = %d, %v; want 2", n, err)
	}
}

// testPartIDsFindTheirLog: each provider id of a message sent in several
// parts (the further ids recorded with its outcome) finds its log, as
// the plain provider message id of another log finds that one.
func (s *suite) testPartIDsFindTheirLog(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	plain := storetest.DeliveredWithID(t, db.DB, 1, "pm-plain")
	l := storetest.Enqueue(t, db.Logs(), storetest.Message(2))
	storetest.Claim(t, db.Logs(), "w", 10, time.Minute)
	conn := int64(1)
	rs := core.RecipientOutcomes{
		{Email: "a@example.com", Status: core.RecipientDelivered},
		{Email: "b@example.com", Status: core.RecipientRefused, Reply: "550 5.1.1 Mailbox unavailable"},
	}
	n, err := db.Logs().RecordOutcomes(ctx, "w", []core.LogOutcome{{
		LogID: l.ID, Status: core.StatusDelivered, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn,
		ProviderMessageID: "pm-part1", ProviderMessageIDs: []string{"pm-part1", "pm-part2"}, Recipients: rs,
		History: []core.Attempt{{LogID: l.ID, ConnectionID: conn, At: time.Now(), Outcome: core.OutcomeDelivered, ProviderMessageID: "pm-part1"}},
	}})
	if err != nil || n != 1 {
		t.Fatalf("RecordOutcomes = %d, %v", n, err)
	}
	ids, err := db.Events().FindLogIDsByProviderMessageIDs(ctx, []string{"pm-part1", "pm-part2", "pm-plain"})
	if err != nil || len(ids) != 3 || ids["pm-part1"] != l.ID || ids["pm-part2"] != l.ID || ids["pm-plain"] != plain.ID {
		t.Fatalf("FindLogIDsByProviderMessageIDs = %v, %v", ids, err)
	}
}

// testEventRollupsMatchDirectCounts checks that the range sums of the
// provider events (EventCounts, LogEventTallies: days, hours and quarter
// hours of the roll-ups, and the repeated events) answer exactly what
// counting the provider events directly answers, for ranges with ragged
// edges: as the writers leave them, after more events arrived out of
// order, after CompactRollups, after the Pro migration 3 rebuilt them
// from the events (as the service's migration 11 did before), and after
// more events arrived out of order on top of the rebuilt ones.
func (s *suite) testEventRollupsMatchDirectCounts(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	day := time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(11, 3))
	logs, randomAt := importRandomLogs(t, db, day, rng)
	// Provider events on the delivered logs: several kinds, a message's
	// repeated events within a bucket, across days and from a second
	// provider, some at the same instant, recorded in random order.
	type event struct {
		log             int64
		provider, event string
		at              time.Time
	}
	var evs []event
	kinds := []string{events.EventDelivered, events.EventOpened, events.EventBounced, events.EventComplained, events.EventClicked}
	for i, l := range logs {
		if l.Status != core.StatusDelivered {
			continue
		}
		provider := []string{"sendgrid", "mailgun"}[i%2]
		for j := range rng.IntN(6) {
			e := event{l.ID, provider, kinds[rng.IntN(len(kinds))], randomAt()}
			if j > 0 && rng.IntN(4) == 0 {
				e.at = evs[len(evs)-1].at // the same instant again
			}
			if rng.IntN(8) == 0 {
				e.provider = "ses" // another provider reports on the message
			}
			evs = append(evs, e)
		}
	}
	rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	record := func(list []event) {
		t.Helper()
		for i, e := range list {
			ev := &events.LogEvent{LogID: e.log, Provider: e.provider, Event: e.event, At: e.at}
			if _, err := db.Events().RecordLogEvent(ctx, ev, "", ""); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
	}
	half := len(evs) / 2
	record(evs[:half])

	ranges := raggedRanges(day)
	check := func(stage string) {
		t.Helper()
		for _, r := range ranges {
			ec, err := db.Events().EventCounts(ctx, r.from, r.to)
			if err != nil {
				t.Fatal(err)
			}
			if want := directEventCounts(t, db, r.from, r.to); !slices.Equal(ec, want) {
				t.Errorf("%s, %s: EventCounts = %+v\nwant %+v", stage, r.name, ec, want)
			}
			asked := []string{events.EventBounced, events.EventComplained, events.EventOpened}
			lt, err := db.Events().LogEventTallies(ctx, r.from, r.to, asked)
			if err != nil {
				t.Fatal(err)
			}
			if want := directTallies(t, db, r.from, r.to, asked); !slices.Equal(lt, want) {
				t.Errorf("%s, %s: LogEventTallies = %+v\nwant %+v", stage, r.name, lt, want)
			}
		}
	}
	check("as written")
	record(evs[half:])
	check("more events, out of order")
	if _, err := db.Rollups().CompactRollups(ctx); err != nil {
		t.Fatalf("CompactRollups: %v", err)
	}
	check("compacted")

	// The Pro migration 3 rebuilds the event roll-ups from the provider
	// events, as the service's migration 11 did before (the roll-ups by
	// site empty, the repeated events' site the main one).
	g := db.Gorm()
	for _, table := range []string{"event_buckets", "event_repeats", "site_event_buckets"} {
		if err := g.Exec("DROP TABLE " + db.TableName(table)).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Exec("DELETE FROM "+db.TableName("pro_migrations")+" WHERE version = ?", 3).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	check("rebuilt by the migration")
	// Events arriving after the rebuild extend the rebuilt chains.
	var more []event
	for _, e := range evs[:40] {
		e.at = e.at.Add(-time.Duration(rng.Int64N(int64(36 * time.Hour))))
		more = append(more, e)
	}
	record(more)
	check("more events after the rebuild")
}

// testSiteEventRollups records the provider events of three sites of a
// network and reads the event roll-ups under each site's scope: each site
// counts its own events and messages (the main site as the network's
// less the other sites'), also once the roll-ups are compacted.
func (s *suite) testSiteEventRollups(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	from := time.Now().Add(-time.Hour)
	plan := sitePlan
	logs := recordSitePlan(t, db, 7)
	// Provider events: site 2's first message opened twice, site
	// 1's once, site 3's first bounced.
	for _, e := range []struct {
		log   *core.Log
		event string
	}{{logs[2][0], events.EventOpened}, {logs[2][0], events.EventOpened}, {logs[1][0], events.EventOpened}, {logs[3][0], events.EventBounced}} {
		if _, err := db.Events().RecordLogEvent(ctx, &events.LogEvent{LogID: e.log.ID, Provider: "sendgrid", Event: e.event, At: time.Now()}, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	to := time.Now().Add(time.Hour)
	check := func(when string) {
		t.Helper()
		for site := range plan {
			sctx := core.WithSiteScope(ctx, site)
			ec, err := db.Events().EventCounts(sctx, from, to)
			if err != nil {
				t.Fatalf("%s: site %d EventCounts: %v", when, site, err)
			}
			counted := map[string][2]int64{}
			for _, c := range ec {
				counted[c.Event] = [2]int64{c.Events, c.Messages}
			}
			want := map[int64]map[string][2]int64{
				1: {events.EventOpened: {1, 1}},
				2: {events.EventOpened: {2, 1}},
				3: {events.EventBounced: {1, 1}},
			}[site]
			if fmt.Sprint(counted) != fmt.Sprint(want) {
				t.Errorf("%s: site %d events %v, want %v", when, site, counted, want)
			}
			tallies, err := db.Events().LogEventTallies(sctx, from, to, []string{events.EventOpened, events.EventBounced})
			if err != nil {
				t.Fatalf("%s: site %d LogEventTallies: %v", when, site, err)
			}
			for _, tl := range tallies {
				if tl.Messages != 1 || tl.Source != fmt.Sprintf("plugin-%d", site) {
					t.Errorf("%s: site %d tally %+v", when, site, tl)
				}
			}
		}
	}
	check("recorded")
	if _, err := db.Rollups().CompactRollups(ctx); err != nil {
		t.Fatal(err)
	}
	check("compacted")
}

// testBounceIsNoNewFailure: a delivered log moved to failed by a
// provider's bounce is no new failure for the alert thresholds (the
// failure marks count outcomes recorded by the workers only).
func (s *suite) testBounceIsNoNewFailure(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	before := time.Now().Add(-time.Second)
	l := storetest.DeliveredWithID(t, db.DB, 1, "pm-a")
	if moved, err := db.Events().RecordLogEvent(ctx, &events.LogEvent{LogID: l.ID, Provider: "ses", Event: events.EventBounced, At: time.Now()},
		core.StatusFailed, "bounced"); err != nil || !moved {
		t.Fatalf("RecordLogEvent = %v, %v", moved, err)
	}
	n, err := db.Logs().CountFailedLogs(ctx, before, time.Now().Add(time.Second))
	if err != nil || n != 0 {
		t.Fatalf("CountFailedLogs after a bounce = %d, %v; want 0", n, err)
	}
}

// testProviderEventsErased: erasing an address from the logs removes the
// provider events of those logs whose detail names it (any case), in the
// erase's transaction, and keeps the others.
func (s *suite) testProviderEventsErased(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	const bob = "bob@example.com"
	welcome := storetest.Enqueue(t, db.Logs(), core.Message{From: core.Address{Email: "shop@example.com"},
		To: []core.Address{{Name: "Bob Stone", Email: bob}}, Cc: []core.Address{{Name: "Carol", Email: "carol@example.com"}},
		Subject: "Welcome", Text: "Hi Bob"})
	if got := storetest.Claim(t, db.Logs(), "w", 10, time.Minute); len(got) != 1 {
		t.Fatalf("claimed %d, want 1", len(got))
	}
	conn := int64(1)
	if n, err := db.Logs().RecordOutcomes(ctx, "w", []core.LogOutcome{{
		LogID: welcome.ID, Status: core.StatusDelivered, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn, ProviderMessageID: "pm-w",
		History: []core.Attempt{{LogID: welcome.ID, ConnectionID: conn, At: time.Now(), Outcome: core.OutcomeDelivered}},
	}}); err != nil || n != 1 {
		t.Fatalf("RecordOutcomes = %d, %v", n, err)
	}
	for _, ev := range []*events.LogEvent{
		{LogID: welcome.ID, Provider: "ses", Event: events.EventDelivered, Detail: map[string]any{"recipient": "Bob@example.com"}},
		{LogID: welcome.ID, Provider: "ses", Event: events.EventOpened, Detail: map[string]any{"recipient": "carol@example.com"}},
	} {
		if _, err := db.Events().RecordLogEvent(ctx, ev, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	if erased, _, err := db.Privacy().EraseLogsNaming(ctx, "Bob@Example.com", core.ErasedAddress, 10); err != nil || erased != 1 {
		t.Fatalf("EraseLogsNaming = %d, %v; want 1", erased, err)
	}
	evs, err := db.Events().FindLogEvents(ctx, welcome.ID)
	if err != nil || len(evs) != 1 || evs[0].Detail["recipient"] != "carol@example.com" {
		t.Fatalf("events after the erase = %+v, %v; want carol's only", evs, err)
	}
}
