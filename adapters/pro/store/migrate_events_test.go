package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// eventState is what the event tables answer: the counts of a range,
// the tallies, a log's events and the number of roll-up rows.
type eventState struct {
	counts  []analytics.EventCount
	tallies []analytics.LogEventTally
	logs    int
	rows    int64
}

// readEventState reads db's event tables around day.
func readEventState(t *testing.T, db *proDB, day time.Time, logID int64) eventState {
	t.Helper()
	ctx := context.Background()
	from, to := day.Add(-time.Hour), day.Add(3*24*time.Hour)
	var st eventState
	var err error
	if st.counts, err = db.Events().EventCounts(ctx, from, to); err != nil {
		t.Fatal(err)
	}
	if st.tallies, err = db.Events().LogEventTallies(ctx, from, to, []string{events.EventOpened, events.EventBounced}); err != nil {
		t.Fatal(err)
	}
	evs, err := db.Events().FindLogEvents(ctx, logID)
	if err != nil {
		t.Fatal(err)
	}
	st.logs = len(evs)
	for _, table := range []string{"event_buckets", "event_repeats"} {
		var n int64
		if err := db.Gorm().Raw("SELECT COUNT(*) FROM " + db.TableName(table)).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		st.rows += n
	}
	return st
}

// TestUpgradeKeepsEventTables upgrades databases as earlier builds left
// the provider event tables (made by the service's own migrations 6, 8,
// 9, 11 and 24) to this build, whose Pro version 3 makes them:
//
//   - migrated by an earlier build to the end: the tables and their rows
//     are kept, nothing is counted twice, the replay memory remembers;
//   - migrated to a version from 11 to 23: the repeated events lack their
//     site column and there are no roll-ups by site; version 3 adds both
//     and keeps the rest;
//   - migrated to a version from 6 to 10: events recorded, no roll-ups;
//     version 3 builds them from the events, as migration 11 did.
//
// A second start changes nothing, and the Pro history records version 3.
func TestUpgradeKeepsEventTables(t *testing.T) {
	for _, tc := range []struct {
		name string
		dsn  func(testing.TB) string
	}{
		{"sqlite", testdb.SQLite},
		{"mysql", testdb.MySQL},
	} {
		for _, up := range []struct {
			name string
			// drop is what the earlier build's database lacks.
			drop    []string
			noSite  bool // the repeated events have no site column
			rebuilt bool // the roll-ups are built by the upgrade
		}{
			{name: "migrated to the end"},
			{name: "migrated to version 23", drop: []string{"site_event_buckets"}, noSite: true},
			{name: "migrated to version 10", drop: []string{"event_buckets", "event_repeats", "site_event_buckets"}, rebuilt: true},
		} {
			t.Run(tc.name+"/"+up.name, func(t *testing.T) {
				ctx := context.Background()
				s := newSuite(tc.dsn(t))
				prefix := s.prefix()
				db := s.open(t, prefix)
				day := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
				a := storetest.DeliveredWithID(t, db.DB, 1, "pm-a")
				b := storetest.DeliveredWithID(t, db.DB, 2, "pm-b")
				for i, e := range []struct {
					log   *core.Log
					event string
					at    time.Time
				}{
					{a, events.EventOpened, day},
					{a, events.EventOpened, day.Add(time.Hour)},      // opened again
					{a, events.EventOpened, day.Add(26 * time.Hour)}, // and the next day
					{b, events.EventBounced, day.Add(time.Minute)},
					{b, events.EventOpened, day.Add(-2 * time.Hour)}, // before the range
				} {
					if _, err := db.Events().RecordLogEvent(ctx, &events.LogEvent{LogID: e.log.ID, Provider: "ses", Event: e.event, At: e.at}, "", ""); err != nil {
						t.Fatalf("event %d: %v", i, err)
					}
				}
				if fresh, err := db.Events().RememberWebhookEvent(ctx, "ses", "ev-1", time.Now().Add(time.Hour)); err != nil || !fresh {
					t.Fatalf("RememberWebhookEvent = %v, %v", fresh, err)
				}
				want := readEventState(t, db, day, a.ID)
				if len(want.counts) == 0 || want.logs != 3 || want.rows == 0 {
					t.Fatalf("the events before the upgrade: %+v", want)
				}

				// The database as the earlier build left it.
				g := db.Gorm()
				for _, table := range up.drop {
					if err := g.Exec("DROP TABLE " + db.TableName(table)).Error; err != nil {
						t.Fatal(err)
					}
				}
				if up.noSite {
					if err := g.Exec("ALTER TABLE " + db.TableName("event_repeats") + " DROP COLUMN site_id").Error; err != nil {
						t.Fatal(err)
					}
				}
				if err := g.Exec("DELETE FROM "+db.TableName("pro_migrations")+" WHERE version = ?", 3).Error; err != nil {
					t.Fatal(err)
				}

				for i := range 2 {
					again := s.open(t, prefix)
					got := readEventState(t, again, day, a.ID)
					if up.rebuilt && i == 0 {
						// Rebuilt unsharded: fewer rows on MySQL, the same sums.
						want.rows = got.rows
					}
					if !slices.Equal(got.counts, want.counts) || !slices.Equal(got.tallies, want.tallies) ||
						got.logs != want.logs || got.rows != want.rows {
						t.Fatalf("start %d: the events after the upgrade %+v, want %+v", i+1, got, want)
					}
					if fresh, err := again.Events().RememberWebhookEvent(ctx, "ses", "ev-1", time.Now().Add(time.Hour)); err != nil || fresh {
						t.Fatalf("start %d: a remembered id is new again: %v, %v", i+1, fresh, err)
					}
					var versions []int
					if err := again.Gorm().Table(again.TableName("pro_migrations")).Order("version").
						Pluck("version", &versions).Error; err != nil || !slices.Equal(versions, []int{1, 2, 3, 4}) {
						t.Fatalf("start %d: recorded Pro versions: %v %v", i+1, err, versions)
					}
				}
				// The site column and the roll-ups by site are there: a
				// site's repeated event is counted under its scope.
				if err := db.Logs().EnqueueLog(ctx, &core.Log{SiteID: 2, Source: "s2", Message: storetest.Message(3)}); err != nil {
					t.Fatal(err)
				}
				logs := storetest.Claim(t, db.Logs(), "w", 10, time.Minute)
				if len(logs) != 1 {
					t.Fatalf("claimed %d, want the site's log", len(logs))
				}
				conn := int64(1)
				if n, err := db.Logs().RecordOutcomes(ctx, "w", []core.LogOutcome{{LogID: logs[0].ID, Status: core.StatusDelivered,
					Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn}}); err != nil || n != 1 {
					t.Fatalf("RecordOutcomes = %d, %v", n, err)
				}
				for _, at := range []time.Time{day.Add(30 * time.Minute), day.Add(40 * time.Hour)} {
					if _, err := db.Events().RecordLogEvent(ctx, &events.LogEvent{LogID: logs[0].ID, Provider: "ses", Event: events.EventOpened, At: at}, "", ""); err != nil {
						t.Fatal(err)
					}
				}
				got, err := db.Events().EventCounts(core.WithSiteScope(ctx, 2), day.Add(time.Hour), day.Add(3*24*time.Hour))
				if err != nil || len(got) != 1 || got[0].Events != 1 || got[0].Messages != 1 {
					t.Fatalf("the site's events after the upgrade: %+v, %v", got, err)
				}
			})
		}
	}
}
