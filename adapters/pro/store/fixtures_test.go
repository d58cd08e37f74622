package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/core"
)

// eachDialect runs fn as a subtest of t on a fresh database of each SQL
// dialect, "mysql" then "sqlite" (storetest.OpenDialect), with the Pro
// tables.
func eachDialect(t *testing.T, fn func(t *testing.T, db *proDB)) {
	for _, dialect := range []string{"mysql", "sqlite"} {
		t.Run(dialect, func(t *testing.T) { fn(t, newProDB(storetest.OpenDialect(t, dialect))) })
	}
}

// sitePlan is how many messages each site of a network (1, 2 and 3)
// sent that were delivered and that failed.
var sitePlan = map[int64][2]int{1: {2, 1}, 2: {3, 0}, 3: {1, 2}}

// recordSitePlan queues the messages of sitePlan, each site's from the
// source "plugin-<site>", claims them and records their outcomes on the
// connection conn; it returns each site's logs, the delivered first.
func recordSitePlan(t *testing.T, db *proDB, conn int64) map[int64][]*core.Log {
	t.Helper()
	ctx := context.Background()
	logs := map[int64][]*core.Log{}
	i := 0
	for site, n := range sitePlan {
		for range n[0] + n[1] {
			i++
			l := &core.Log{SiteID: site, Source: fmt.Sprintf("plugin-%d", site), Message: core.Message{From: core.Address{Email: "a@example.com"},
				To: []core.Address{{Email: fmt.Sprintf("b%d@example.com", i)}}, Subject: "s", Text: "t"}}
			if err := db.Logs().EnqueueLog(ctx, l); err != nil {
				t.Fatal(err)
			}
			logs[site] = append(logs[site], l)
		}
	}
	if got, err := db.Logs().ClaimLogs(ctx, "w1", 20, time.Minute); err != nil || len(got) != i {
		t.Fatalf("claimed %d, %v", len(got), err)
	}
	var outs []core.LogOutcome
	for site, n := range sitePlan {
		for j, l := range logs[site] {
			status := core.StatusDelivered
			if j >= n[0] {
				status = core.StatusFailed
			}
			outs = append(outs, core.LogOutcome{LogID: l.ID, Status: status, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn})
		}
	}
	if n, err := db.Logs().RecordOutcomes(ctx, "w1", outs); err != nil || n != i {
		t.Fatalf("RecordOutcomes = %d, %v", n, err)
	}
	return logs
}

// importRandomLogs imports 240 final logs of four sources (one of them
// none) and three connections (or none) at random times of
// [day - 1 day, day + 5 days), a fifth of them failed and a fifth with a
// delivery time. It returns them and the random time it drew them with,
// which goes on drawing from rng.
func importRandomLogs(t *testing.T, db *proDB, day time.Time, rng *rand.Rand) ([]*core.Log, func() time.Time) {
	t.Helper()
	// A random time in [day - 1 day, day + 5 days), to the microsecond.
	randomAt := func() time.Time {
		return day.Add(-24*time.Hour + time.Duration(rng.Int64N(int64(6*24*time.Hour)/1000))*time.Microsecond)
	}
	sources := []string{"woocommerce", "wpforms", "", "sendmail"}
	var logs []*core.Log
	for i := range 240 {
		at := randomAt()
		l := &core.Log{Status: core.StatusDelivered, Source: sources[i%len(sources)], Message: storetest.Message(i), CreatedAt: at.Add(-time.Minute), UpdatedAt: at}
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
	if err := db.Logs().ImportLogs(context.Background(), logs); err != nil {
		t.Fatalf("ImportLogs: %v", err)
	}
	return logs, randomAt
}

// raggedRange is a named range of the range sums checks.
type raggedRange struct {
	name     string
	from, to time.Time
}

// raggedRanges are ranges around day with ragged edges (and whole days,
// one hour, one quarter hour, none) for the checks that the range sums
// of the roll-ups answer what counting directly answers.
func raggedRanges(day time.Time) []raggedRange {
	h := func(hours, minutes int) time.Time {
		return day.Add(time.Duration(hours)*time.Hour + time.Duration(minutes)*time.Minute)
	}
	return []raggedRange{
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
}

// proStore is the Pro DB under a name of its own, to embed next to the
// handle it is on.
type proStore = prostore.DB

// proDB is the Pro tables with the handle they are on: the Pro services
// and the service's own taken from one value, as the tests use both.
type proDB struct {
	*store.DB
	*proStore
}

// newProDB returns the Pro tables on db with db.
func newProDB(db *store.DB) *proDB { return &proDB{DB: db, proStore: prostore.New(db)} }
