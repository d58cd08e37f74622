package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/core"
)

// counterProbe is what the probe counter does for a context carrying it:
// it keeps the outcomes it is given, or fails.
type counterProbe struct {
	mu   sync.Mutex
	seen []store.OutcomeCount
	fail bool
}

type probeKey struct{}

var errProbe = errors.New("the probe counter failed")

func init() {
	store.RegisterOutcomeCounter(func(ctx context.Context, db *store.DB, tx *sql.Tx, outcomes []store.OutcomeCount) error {
		p, _ := ctx.Value(probeKey{}).(*counterProbe)
		if p == nil {
			return nil
		}
		if db == nil || tx == nil || len(outcomes) == 0 {
			return fmt.Errorf("probe counter called with db %v, tx %v, %d outcomes", db, tx, len(outcomes))
		}
		if p.fail {
			return errProbe
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.seen = append(p.seen, outcomes...)
		return nil
	})
}

// TestOutcomeCounter records and imports outcomes with a module's
// outcome counter registered: it is given each final outcome (not a
// retry) with its time, site, connection, source and status, an import's
// at the log's outcome time as the main site's, and an error it returns
// rolls the outcomes back.
func TestOutcomeCounter(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var logs []*core.Log
		for i, site := range []int64{1, 2, 3} {
			l := &core.Log{SiteID: site, Source: fmt.Sprint("plugin-", i), Message: core.Message{From: core.Address{Email: "a@example.com"},
				To: []core.Address{{Email: fmt.Sprintf("b%d@example.com", i)}, {Email: fmt.Sprintf("c%d@example.com", i)}}, Subject: "s", Text: "t"}}
			if err := db.Logs().EnqueueLog(ctx, l); err != nil {
				t.Fatal(err)
			}
			logs = append(logs, l)
		}
		if got, err := db.Logs().ClaimLogs(ctx, "w", 10, time.Minute); err != nil || len(got) != 3 {
			t.Fatalf("claimed %d, %v", len(got), err)
		}
		conn := int64(4)
		partial := core.LogOutcome{LogID: logs[1].ID, Status: core.StatusDelivered, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn,
			Recipients: core.RecipientOutcomes{{Email: fmt.Sprintf("b%d@example.com", 1), Status: core.RecipientDelivered},
				{Email: fmt.Sprintf("c%d@example.com", 1), Status: core.RecipientRefused}}}
		outs := []core.LogOutcome{
			{LogID: logs[0].ID, Status: core.StatusFailed, Attempts: 1, PhaseAttempts: 1},
			partial,
			{LogID: logs[2].ID, Status: core.StatusQueued, Attempts: 1, PhaseAttempts: 1, NextAttemptAt: time.Now().Add(time.Hour)},
		}
		failing := &counterProbe{fail: true}
		if _, err := db.Logs().RecordOutcomes(context.WithValue(ctx, probeKey{}, failing), "w", outs); !errors.Is(err, errProbe) {
			t.Fatalf("RecordOutcomes with a failing counter: %v, want %v", err, errProbe)
		}
		from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		if b, err := db.Logs().OutcomeBuckets(ctx, from, to); err != nil || len(b) != 0 {
			t.Fatalf("outcome roll-ups after the rolled back outcomes: %+v, %v", b, err)
		}
		if l, _ := db.Logs().FindLogByID(ctx, logs[0].ID); l.Status != core.StatusSending {
			t.Fatalf("log %d after the rolled back outcomes: %s, want sending", l.ID, l.Status)
		}

		probe := &counterProbe{}
		before := time.Now().UTC()
		if n, err := db.Logs().RecordOutcomes(context.WithValue(ctx, probeKey{}, probe), "w", outs); err != nil || n != 3 {
			t.Fatalf("RecordOutcomes = %d, %v", n, err)
		}
		if len(probe.seen) != 2 {
			t.Fatalf("the counter saw %+v, want the 2 final outcomes", probe.seen)
		}
		at := probe.seen[0].At
		if at.Location() != time.UTC || at.Before(before.Add(-time.Second)) || at.After(time.Now().Add(time.Second)) || !probe.seen[1].At.Equal(at) {
			t.Errorf("outcome times %v and %v, want the time of recording (about %v)", at, probe.seen[1].At, before)
		}
		want := []store.OutcomeCount{
			{At: at, SiteID: 1, Source: "plugin-0", Status: core.StatusFailed},
			{At: at, SiteID: 2, ConnectionID: &conn, Source: "plugin-1", Status: core.StatusDelivered, Partial: true},
		}
		for i, w := range want {
			g := probe.seen[i]
			gc, wc := int64(-1), int64(-1)
			if g.ConnectionID != nil {
				gc = *g.ConnectionID
			}
			if w.ConnectionID != nil {
				wc = *w.ConnectionID
			}
			if !g.At.Equal(w.At) || g.SiteID != w.SiteID || gc != wc || g.Source != w.Source || g.Status != w.Status || g.Partial != w.Partial {
				t.Errorf("outcome %d: %+v (connection %d), want %+v (connection %d)", i, g, gc, w, wc)
			}
		}

		imported := &counterProbe{}
		day := time.Date(2025, 3, 2, 10, 0, 0, 0, time.UTC)
		delivered := day.Add(7 * time.Minute)
		if err := db.Logs().ImportLogs(context.WithValue(ctx, probeKey{}, imported), []*core.Log{
			{Status: core.StatusDelivered, Source: "shop", SentConnectionID: &conn, CreatedAt: day, UpdatedAt: day.Add(time.Hour), DeliveredAt: &delivered,
				Message: core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "x@example.com"}}}},
			{Status: core.StatusFailed, Source: "", CreatedAt: day, UpdatedAt: day.Add(time.Minute),
				Message: core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "y@example.com"}}}},
		}); err != nil {
			t.Fatal(err)
		}
		if len(imported.seen) != 2 {
			t.Fatalf("the counter saw %+v on import, want 2 outcomes", imported.seen)
		}
		if g := imported.seen[0]; !g.At.Equal(delivered) || g.SiteID != core.MainSiteID || g.ConnectionID == nil || *g.ConnectionID != conn ||
			g.Source != "shop" || g.Status != core.StatusDelivered {
			t.Errorf("imported delivered log counted as %+v", g)
		}
		if g := imported.seen[1]; !g.At.Equal(day.Add(time.Minute)) || g.SiteID != core.MainSiteID || g.ConnectionID != nil ||
			g.Source != "" || g.Status != core.StatusFailed {
			t.Errorf("imported failed log counted as %+v", g)
		}
		if err := db.Logs().ImportLogs(context.WithValue(ctx, probeKey{}, failing), []*core.Log{{Status: core.StatusFailed, CreatedAt: day,
			Message: core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "z@example.com"}}}}}); !errors.Is(err, errProbe) {
			t.Fatalf("ImportLogs with a failing counter: %v, want %v", err, errProbe)
		}
		if _, total, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "z@example.com"}); err != nil || total != 0 {
			t.Fatalf("the rolled back import left %d logs, %v", total, err)
		}
	})
}
