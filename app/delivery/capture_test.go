package delivery

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// holdingGuard holds every message unless every recipient is in allow;
// held counts its holds.
type holdingGuard struct {
	on    atomic.Bool
	allow []string
	held  atomic.Int64
}

func (g *holdingGuard) Holds(_ context.Context, m *core.Message) (string, bool) {
	if !g.on.Load() {
		return "", false
	}
	st := core.CaptureState{Mode: core.CaptureModeCapture, Reason: core.CaptureReasonCopy, AllowList: g.allow}
	if st.Holds(m.Recipients()) {
		g.held.Add(1)
		return "This looks like a copy of https://live.example. Mail is being held.", true
	}
	return "", false
}

// TestCaptureHoldsAndReleaseSendsOnce: a held message is captured, not
// sent, with no attempt counted; an allow-listed one is sent; a release
// (twice, as two replicas would) sends the captured one exactly once even
// while the guard still captures.
func TestCaptureHoldsAndReleaseSendsOnce(t *testing.T) {
	e := newEnv(t, nil, nil)
	g := &holdingGuard{allow: []string{"team.example"}}
	g.on.Store(true)
	e.svc.o.Capture = g
	ctx := context.Background()
	held := e.enqueue(t, &core.Log{Message: msg("to a customer")})
	mixed := e.enqueue(t, &core.Log{Message: core.Message{To: []core.Address{{Email: "qa@team.example"}}, Cc: []core.Address{{Email: "c@customer.example"}}, Subject: "mixed", Text: "b"}})
	allowed := e.enqueue(t, &core.Log{Message: core.Message{To: []core.Address{{Email: "qa@Team.Example"}}, Subject: "team test", Text: "b"}})
	e.drain(t)
	for _, c := range []struct {
		id     int64
		status string
	}{{held, core.StatusCaptured}, {mixed, core.StatusCaptured}, {allowed, core.StatusDelivered}} {
		got, err := e.logs.FindLogByID(ctx, c.id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != c.status {
			t.Fatalf("log %d (%s): status %s, want %s", c.id, got.Message.Subject, got.Status, c.status)
		}
		if c.status == core.StatusCaptured && (got.Attempts != 0 || !slices.Equal(outcomes(got), []string{core.OutcomeCaptured})) {
			t.Errorf("captured log: attempts %d history %v, want 0 and [captured]", got.Attempts, outcomes(got))
		}
	}
	if calls, _ := e.tr[1].stats(); calls != 1 {
		t.Fatalf("%d sends, want 1 (the allow-listed message only)", calls)
	}
	// Two releases of the same log: one moves it.
	n1, _ := e.logs.ReleaseCaptured(ctx, []int64{held}, false)
	n2, _ := e.logs.ReleaseCaptured(ctx, []int64{held}, false)
	if n1+n2 != 1 {
		t.Fatalf("two releases moved %d logs, want 1", n1+n2)
	}
	e.drain(t)
	got, _ := e.logs.FindLogByID(ctx, held)
	if got.Status != core.StatusDelivered {
		t.Fatalf("released log: %s, want delivered (the guard still captures, but it was released)", got.Status)
	}
	e.drain(t)
	if calls, _ := e.tr[1].stats(); calls != 2 {
		t.Fatalf("%d sends after the release, want 2", calls)
	}
	if m, _ := e.logs.FindLogByID(ctx, mixed); m.Status != core.StatusCaptured {
		t.Fatalf("the unreleased log: %s, want still captured", m.Status)
	}
}

// TestSimulationCaptures: simulation mode captures every message (the
// allow-list does not apply) with a simulated record, and a released one
// is sent for real.
func TestSimulationCaptures(t *testing.T) {
	e := newEnv(t, fakeSettings{"simulation_enabled": true}, nil)
	ctx := context.Background()
	id := e.enqueue(t, &core.Log{Message: msg("simulated")})
	e.drain(t)
	got, _ := e.logs.FindLogByID(ctx, id)
	if got.Status != core.StatusCaptured || !got.Simulated || !slices.Equal(outcomes(got), []string{core.OutcomeSimulated}) {
		t.Fatalf("simulated log: status %s simulated %v history %v", got.Status, got.Simulated, outcomes(got))
	}
	if calls, _ := e.tr[1].stats(); calls != 0 {
		t.Fatalf("simulation sent %d messages", calls)
	}
	base := e.svc.mustBase(t, e) - 1
	m := msg("test email")
	l, err := e.svc.SendNow(ctx, base+3, &m, "test", nil)
	if err != nil || l.Status != core.StatusCaptured || !l.Simulated {
		t.Fatalf("SendNow in simulation: %+v, %v", l, err)
	}
	if n, _ := e.logs.ReleaseCaptured(ctx, nil, true); n != 2 {
		t.Fatalf("release all moved %d, want 2", n)
	}
	e.drain(t)
	if calls, _ := e.tr[1].stats(); calls != 1 {
		t.Fatalf("%d sends through the default connection after release, want 1", calls)
	}
	if calls, _ := e.tr[3].stats(); calls != 1 {
		t.Fatalf("%d sends of the released test email, want 1", calls)
	}
}
