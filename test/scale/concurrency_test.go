package scale

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// The tests in this file check the adaptive concurrency through the
// built binary (docs/delivery.md "Concurrency that adapts"): they count
// what the sink saw, never how long it took.

// TestConcurrencyClimbsUnderLatency: with the default settings (no
// max_concurrency set) and a server that takes 100 ms per message, the
// sends in flight at once climb past the level a connection starts at
// (10, the old fixed default) and never pass the SMTP ceiling.
func TestConcurrencyClimbsUnderLatency(t *testing.T) {
	const n = 800
	e := newLimitsEnv(t)
	sink := smtpsink.Start(t, smtpsink.WithLatency(100*time.Millisecond))
	id := e.connection(t, "slow", "smtp", sinkSettings(sink, nil))
	e.enqueueTo(t, id, "l", n)
	st := e.waitStats(t, "every message delivered", func(st core.QueueStats) bool { return st.Delivered+st.Failed == n })
	if st.Failed > 0 {
		t.Fatalf("%d messages failed", st.Failed)
	}
	peak := sink.PeakTransactions()
	t.Logf("peak %d sends in flight over %d sessions", peak, sink.Connections())
	if peak <= delivery.StartConcurrency {
		t.Fatalf("peak %d sends in flight at the sink, want more than the starting level %d: the level did not climb", peak, delivery.StartConcurrency)
	}
	if peak > 100 {
		t.Fatalf("peak %d sends in flight, above the SMTP ceiling 100", peak)
	}
}

// TestConcurrencySettlesUnderSessionLimit: a server takes 5 sessions and
// greets the sixth "421 4.7.0 Too many sessions". The connection, default
// settings, delivers every message with none failed; after the first 300
// are in, fewer than 1 % of the attempts are turned away; the level the
// process remembers when it stops is at most 5; and a process started
// afterwards on the same database starts at that level: its 200 messages
// meet no refused session.
func TestConcurrencySettlesUnderSessionLimit(t *testing.T) {
	const (
		n      = 1500
		settle = 300
		again  = 200
	)
	e := newLimitsEnv(t)
	sink := smtpsink.Start(t, smtpsink.WithMaxSessions(5), smtpsink.WithLatency(20*time.Millisecond))
	id := e.connection(t, "limited", "smtp", sinkSettings(sink, nil))
	e.enqueueTo(t, id, "s", n)
	if _, err := sink.WaitFor(settle, 90*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, tailOf(e.svc.Stderr.String(), 3000))
	}
	refused0, got0 := sink.RefusedSessions(), len(sink.Messages())
	st := e.waitStats(t, "every message delivered", func(st core.QueueStats) bool { return st.Delivered+st.Failed == n })
	if st.Failed > 0 {
		t.Fatalf("%d messages failed", st.Failed)
	}
	refused, got := sink.RefusedSessions()-refused0, len(sink.Messages())-got0
	t.Logf("%d sessions refused before settling, %d after, for %d messages", refused0, refused, got)
	if frac := float64(refused) / float64(refused+got); frac >= 0.01 {
		t.Errorf("after settling %d of %d attempts were turned away (%.2f %%), want under 1 %%", refused, refused+got, 100*frac)
	}
	if refused0 == 0 {
		t.Errorf("no session refused: the level never went past the server's 5 (the test proves nothing)")
	}

	e.svc.Stop(t)
	levels, err := e.db.Settings().LoadSettings(context.Background(), delivery.LevelScope)
	if err != nil {
		t.Fatal(err)
	}
	level, ok := core.AsInt(levels[strconv.FormatInt(id, 10)])
	if !ok || level < 1 || level > 5 {
		t.Fatalf("remembered level %v (%v), want 1 to 5", levels[strconv.FormatInt(id, 10)], levels)
	}

	svc := startLimits(t, e.dsn)
	refusedBefore := sink.RefusedSessions()
	e.enqueueTo(t, id, "r", again)
	st = e.waitStats(t, "the messages after the restart delivered", func(st core.QueueStats) bool { return st.Delivered+st.Failed == n+again })
	if st.Failed > 0 {
		t.Fatalf("%d messages failed after the restart", st.Failed)
	}
	if r := sink.RefusedSessions() - refusedBefore; r > 0 {
		t.Errorf("%d sessions refused after the restart, want none: the process did not start at the remembered level %d\n%s", r, level, tailOf(svc.Stderr.String(), 2000))
	}
}
