package delivery

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// holdingGuard holds every message unless every recipient is in allow;
// held counts its holds. While blind it knows no state (it never read
// one and cannot now), as the staging guard when its first reads fail;
// asked counts the questions it was asked.
type holdingGuard struct {
	on    atomic.Bool
	blind atomic.Bool
	allow []string
	held  atomic.Int64
	asked atomic.Int64
}

// blindGuard returns a holdingGuard that knows no state.
func blindGuard() *holdingGuard {
	g := &holdingGuard{}
	g.blind.Store(true)
	return g
}

func (g *holdingGuard) Holds(_ context.Context, m *core.Message) (string, bool, error) {
	g.asked.Add(1)
	if g.blind.Load() {
		return "", false, errors.New("staging guard: the state is not known yet: read the live site's fingerprint: connection refused")
	}
	if !g.on.Load() {
		return "", false, nil
	}
	st := core.CaptureState{Mode: core.CaptureModeCapture, Reason: core.CaptureReasonCopy, AllowList: g.allow}
	if st.Holds(m.Recipients()) {
		g.held.Add(1)
		return "This looks like a copy of https://live.example. Mail is being held.", true, nil
	}
	return "", false, nil
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

// TestCaptureUnknownStateDefers: while the staging guard knows no state
// (its first reads fail), the capture stage neither sends nor captures a
// message: it goes back to the queue untried, due again after
// CaptureRetry, however often that happens, with no attempt counted, no
// retry used up and no alert; once the guard can read, the message is
// sent or captured as it decides. Simulation mode captures without
// asking the guard.
func TestCaptureUnknownStateDefers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings fakeSettings
		captures bool // the guard's decision once it can read
		// wantDeferred: the unknown state defers the message (simulation
		// mode decides before the guard is asked).
		wantDeferred bool
		wantStatus   string
		wantHistory  []string
		wantAttempts int
		wantSends    int
	}{
		{name: "the state turns out to send", wantDeferred: true,
			wantStatus: core.StatusDelivered, wantHistory: []string{core.OutcomeDelivered}, wantAttempts: 1, wantSends: 1},
		{name: "the state turns out to capture", captures: true, wantDeferred: true,
			wantStatus: core.StatusCaptured, wantHistory: []string{core.OutcomeCaptured}},
		{name: "simulation mode", settings: fakeSettings{"simulation_enabled": true},
			wantStatus: core.StatusCaptured, wantHistory: []string{core.OutcomeSimulated}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.settings, nil)
			e.svc.o.MaxRetries = 1
			alerts := &recordingAlerter{}
			e.svc.o.Alerts = alerts
			g := blindGuard()
			g.on.Store(tc.captures)
			e.svc.o.Capture = g
			ctx := context.Background()
			id := e.enqueue(t, &core.Log{Message: msg(tc.name)})
			// More rounds than the message's attempts allow: a deferral
			// uses none of them.
			for round := range e.svc.o.MaxRetries + 3 {
				if !tc.wantDeferred {
					break
				}
				e.logs.MakeDue(id)
				logs, err := e.logs.ClaimLogs(ctx, "test", e.svc.o.BatchSize, e.svc.o.Lease)
				if err != nil || len(logs) != 1 {
					t.Fatalf("round %d: claimed %d, %v", round, len(logs), err)
				}
				before := time.Now()
				e.svc.processBatch(ctx, "test", logs)
				got, err := e.logs.FindLogByID(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != core.StatusQueued || got.Attempts != 0 || len(got.History) != 0 || got.LastError != captureUnknownResponse {
					t.Fatalf("round %d: status %s attempts %d history %v last error %q; want queued, untried, waiting for the guard",
						round, got.Status, got.Attempts, outcomes(got), got.LastError)
				}
				if due := got.NextAttemptAt.Sub(before); due < e.svc.o.CaptureRetry-time.Second || due > e.svc.o.CaptureRetry+time.Second {
					t.Fatalf("round %d: due again in %v, want about %v", round, due, e.svc.o.CaptureRetry)
				}
			}
			if calls, _ := e.tr[1].stats(); calls != 0 {
				t.Fatalf("%d sends while the guard knew no state", calls)
			}
			g.blind.Store(false)
			e.drain(t)
			got, err := e.logs.FindLogByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tc.wantStatus || !slices.Equal(outcomes(got), tc.wantHistory) || got.Attempts != tc.wantAttempts {
				t.Fatalf("once the guard can read: status %s history %v attempts %d; want %s %v, %d attempts",
					got.Status, outcomes(got), got.Attempts, tc.wantStatus, tc.wantHistory, tc.wantAttempts)
			}
			if !tc.wantDeferred && g.asked.Load() != 0 {
				t.Fatalf("the guard was asked %d times in simulation mode", g.asked.Load())
			}
			if calls, _ := e.tr[1].stats(); calls != tc.wantSends {
				t.Fatalf("%d sends, want %d", calls, tc.wantSends)
			}
			if a := alerts.all(); len(a) != 0 {
				t.Fatalf("alerts %+v for a message that never failed", a)
			}
		})
	}
}

// TestCaptureUnknownStateRun: with the workers running, a message the
// guard cannot decide on waits in the queue and comes back every
// CaptureRetry, untried; it is delivered once the guard can read. A test
// email (SendNow) meanwhile is left queued for the workers, not sent.
func TestCaptureUnknownStateRun(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.svc.o.CaptureRetry = 20 * time.Millisecond
	g := blindGuard()
	e.svc.o.Capture = g
	ctx := context.Background()
	id := e.enqueue(t, &core.Log{Message: msg("queued while the guard is blind")})
	m := msg("test email while the guard is blind")
	test, err := e.svc.SendNow(ctx, e.svc.mustBase(t, e), &m, "test", nil)
	if err != nil || test.Status != core.StatusQueued || len(test.History) != 0 || test.SentConnectionID != nil {
		t.Fatalf("SendNow while the guard knows no state = %+v, %v; want it left queued, untried", test, err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { e.svc.Run(runCtx); close(done) }()
	defer func() { stop(); <-done }()

	await := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("after 10s: %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// Both messages asked about, deferred and asked about again.
	await("the guard was not asked again after the first deferrals", func() bool { return g.asked.Load() >= 6 })
	for _, l := range []int64{id, test.ID} {
		got, _ := e.logs.FindLogByID(ctx, l)
		if got.Attempts != 0 || len(got.History) != 0 || got.Status == core.StatusDelivered {
			t.Fatalf("log %d while the guard is blind: status %s attempts %d history %v", l, got.Status, got.Attempts, outcomes(got))
		}
	}
	if calls, _ := e.tr[1].stats(); calls != 0 {
		t.Fatalf("%d sends while the guard knew no state", calls)
	}
	g.blind.Store(false)
	await("the messages were not delivered once the guard could read", func() bool {
		st, _ := e.logs.QueueStats(ctx)
		return st.Delivered == 2
	})
	for _, l := range []int64{id, test.ID} {
		if got, _ := e.logs.FindLogByID(ctx, l); got.Attempts != 1 || !slices.Equal(outcomes(got), []string{core.OutcomeDelivered}) {
			t.Fatalf("log %d: attempts %d history %v, want one delivered attempt", l, got.Attempts, outcomes(got))
		}
	}
	if calls, _ := e.tr[1].stats(); calls != 2 {
		t.Fatalf("%d sends, want 2", calls)
	}
}
