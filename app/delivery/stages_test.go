package delivery

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// passStage decides nothing.
type passStage struct{}

func (passStage) Decide(*Turn) bool { return false }

// TestStageOrder: the decision's stages in their order, with the stages
// a module adds each before the one it names (before send when it names
// none or an unknown one).
func TestStageOrder(t *testing.T) {
	builtIn := []string{StageCapture, StageUncertain, StageSuppression, StageSite, StageSiteQuota, StageChooser, StageSend}
	for _, tc := range []struct {
		name  string
		added []AddedStage
		want  []string
	}{
		{"built-in", nil, builtIn},
		{"before suppression", []AddedStage{{Name: "blocklist", Before: StageSuppression, Stage: passStage{}}},
			[]string{StageCapture, StageUncertain, "blocklist", StageSuppression, StageSite, StageSiteQuota, StageChooser, StageSend}},
		{"the flood guard", []AddedStage{FloodStage(holdAll{})},
			[]string{StageCapture, StageFlood, StageUncertain, StageSuppression, StageSite, StageSiteQuota, StageChooser, StageSend}},
		{"first", []AddedStage{{Name: "early", Before: StageCapture, Stage: passStage{}}},
			append([]string{"early"}, builtIn...)},
		{"none named, and unknown", []AddedStage{{Name: "a", Stage: passStage{}}, {Name: "b", Before: "nowhere", Stage: passStage{}}},
			[]string{StageCapture, StageUncertain, StageSuppression, StageSite, StageSiteQuota, StageChooser, "a", "b", StageSend}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := New(Options{Stages: tc.added})
			if got := svc.StageNames(); !slices.Equal(got, tc.want) {
				t.Errorf("stages %v, want %v", got, tc.want)
			}
		})
	}
}

// holdAll is a flood guard that holds every message, or none when pass.
type holdAll struct{ pass bool }

func (h holdAll) Holds(context.Context, *core.Log) (string, bool) { return "a flood", !h.pass }

// fakeQuotas admits or refuses every message of a site, counting the
// places given back.
type fakeQuotas struct {
	admission core.SiteAdmission
	released  int
}

func (f *fakeQuotas) AdmitSite(context.Context, int64) (core.SiteAdmission, error) {
	return f.admission, nil
}

func (f *fakeQuotas) ReleaseSite(context.Context, int64) { f.released++ }

// TestStageAlone runs one stage on one message: it decides (with the
// status it gives) or passes the message on.
func TestStageAlone(t *testing.T) {
	until := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	to := func(email string) *core.Log {
		return &core.Log{ID: 7, Message: core.Message{To: []core.Address{{Email: email}}, Subject: "s", Text: "b"}}
	}
	for _, tc := range []struct {
		name        string
		opts        Options
		stage       func(e *engine) Stage
		log         *core.Log
		st          settings
		listed      suppressed
		wantDecided bool
		wantStatus  string
		wantAdmit   bool
	}{
		{name: "capture: simulation mode", stage: func(e *engine) Stage { return captureStage{e} },
			log: to("a@example.com"), st: settings{simulate: true}, wantDecided: true, wantStatus: core.StatusCaptured},
		{name: "capture: released", stage: func(e *engine) Stage { return captureStage{e} },
			log: &core.Log{ID: 7, CaptureReleased: true}, st: settings{simulate: true}},
		{name: "capture: sent", stage: func(e *engine) Stage { return captureStage{e} }, log: to("a@example.com")},
		{name: "capture: the guard knows no state, waits", opts: Options{Capture: blindGuard()},
			stage: func(e *engine) Stage { return captureStage{e} }, log: to("a@example.com"), wantDecided: true, wantStatus: core.StatusQueued},
		{name: "flood: held", stage: func(*engine) Stage { return FloodStage(holdAll{}).Stage },
			log: to("a@example.com"), wantDecided: true, wantStatus: core.StatusHeld},
		{name: "flood: passes on", stage: func(*engine) Stage { return FloodStage(holdAll{pass: true}).Stage }, log: to("a@example.com")},
		{name: "uncertain: none pending", stage: func(e *engine) Stage { return uncertainStage{e} }, log: to("a@example.com")},
		{name: "suppression: listed", stage: func(e *engine) Stage { return suppressionStage{e} },
			log: to("Gone@Example.com"), listed: suppressed{"gone@example.com": true}, wantDecided: true, wantStatus: core.StatusFailed},
		{name: "suppression: not listed", stage: func(e *engine) Stage { return suppressionStage{e} },
			log: to("a@example.com"), listed: suppressed{"gone@example.com": true}},
		{name: "site: passes on", stage: func(e *engine) Stage { return siteStage{e} }, log: to("a@example.com")},
		{name: "site quota: single site", stage: func(e *engine) Stage { return siteQuotaStage{e} }, log: to("a@example.com")},
		{name: "site quota: within", opts: Options{SiteQuotas: &fakeQuotas{admission: core.SiteAdmission{Allowed: true}}},
			stage: func(e *engine) Stage { return siteQuotaStage{e} }, log: to("a@example.com"), wantAdmit: true},
		{name: "site quota: spent, waits", opts: Options{SiteQuotas: &fakeQuotas{admission: core.SiteAdmission{Until: until, Reason: "quota spent"}}},
			stage: func(e *engine) Stage { return siteQuotaStage{e} }, log: to("a@example.com"), wantDecided: true, wantStatus: core.StatusQueued},
		{name: "site quota: spent, fails", opts: Options{SiteQuotas: &fakeQuotas{admission: core.SiteAdmission{Fail: true, Reason: "quota spent"}}},
			stage: func(e *engine) Stage { return siteQuotaStage{e} }, log: to("a@example.com"), wantDecided: true, wantStatus: core.StatusFailed},
		{name: "chooser: none", stage: func(e *engine) Stage { return chooserStage{e} }, log: to("a@example.com")},
		{name: "send: no connection", stage: func(e *engine) Stage { return sendStage{e} },
			log: to("a@example.com"), st: settings{}, wantDecided: true, wantStatus: core.StatusFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(tc.opts.withDefaults())
			ctx := context.Background()
			turn := &Turn{Log: tc.log, ctx: ctx, stop: ctx, st: tc.st, listed: tc.listed,
				conns: &connLookup{s: e, ctx: ctx, m: map[int64]*core.Connection{}, err: map[int64]error{}}}
			decided := tc.stage(e).Decide(turn)
			if decided != tc.wantDecided {
				t.Fatalf("decided %v, want %v (outcome %+v)", decided, tc.wantDecided, turn.Outcome)
			}
			if decided && turn.Outcome.Status != tc.wantStatus {
				t.Errorf("status %q, want %q", turn.Outcome.Status, tc.wantStatus)
			}
			if decided && turn.Outcome.LogID != tc.log.ID {
				t.Errorf("outcome of log %d, want %d", turn.Outcome.LogID, tc.log.ID)
			}
			if !decided && turn.Outcome.Status != "" {
				t.Errorf("passed on with an outcome: %+v", turn.Outcome)
			}
			if turn.admitted != tc.wantAdmit {
				t.Errorf("admitted %v, want %v", turn.admitted, tc.wantAdmit)
			}
			if tc.wantStatus == core.StatusQueued && tc.opts.SiteQuotas != nil && !turn.Outcome.NextAttemptAt.Equal(until) {
				t.Errorf("due at %v, want %v", turn.Outcome.NextAttemptAt, until)
			}
			if tc.wantStatus == core.StatusQueued && tc.opts.Capture != nil {
				if wait := time.Until(turn.Outcome.NextAttemptAt); wait <= 0 || wait > DefaultCaptureRetry {
					t.Errorf("due in %v, want within %v", wait, DefaultCaptureRetry)
				}
				if turn.Outcome.Attempts != 0 || len(turn.Outcome.History) != 0 {
					t.Errorf("an untried message with attempts %d, history %+v", turn.Outcome.Attempts, turn.Outcome.History)
				}
			}
		})
	}
}

// blockStage fails the messages whose subject begins with "blocked".
type blockStage struct{}

func (blockStage) Decide(t *Turn) bool {
	if !strings.HasPrefix(t.Log.Message.Subject, "blocked") {
		return false
	}
	t.Outcome = core.LogOutcome{LogID: t.Log.ID, Status: core.StatusFailed, Attempts: t.Log.Attempts + 1, LastError: "blocked",
		History: []core.Attempt{{LogID: t.Log.ID, At: time.Now().UTC(), Outcome: core.OutcomePermanent, Error: "blocked"}}}
	return true
}

// TestAddedStageDecides: a stage a module registers decides the messages
// it takes (never sent), passes the others on to be sent, and its costs
// are counted beside the built-in stages'.
func TestAddedStageDecides(t *testing.T) {
	e := newEnv(t, nil, nil)
	o := e.svc.o
	o.Stages = []AddedStage{{Name: "block", Before: StageSuppression, Stage: blockStage{}}}
	e.svc = New(o)
	blocked := e.enqueue(t, &core.Log{Message: msg("blocked one")})
	sent := e.enqueue(t, &core.Log{Message: msg("sent one")})
	e.drain(t)
	for _, tc := range []struct {
		id         int64
		wantStatus string
	}{{blocked, core.StatusFailed}, {sent, core.StatusDelivered}} {
		l, err := e.logs.FindLogByID(context.Background(), tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if l.Status != tc.wantStatus {
			t.Errorf("%q: status %q, want %q", l.Message.Subject, l.Status, tc.wantStatus)
		}
	}
	if _, accepted := e.tr[1].stats(); !slices.Equal(accepted, []string{"sent one"}) {
		t.Errorf("sent %v, want only the message the stage passed on", accepted)
	}
	costs := map[string]StageCost{}
	for _, c := range e.svc.StageCosts() {
		costs[c.Name] = c
	}
	for _, tc := range []struct {
		stage             string
		messages, decided int64
	}{{StageCapture, 2, 0}, {"block", 2, 1}, {StageSuppression, 1, 0}, {StageSend, 1, 1}} {
		if c := costs[tc.stage]; c.Messages != tc.messages || c.Decided != tc.decided {
			t.Errorf("stage %s saw %d messages and decided %d, want %d and %d", tc.stage, c.Messages, c.Decided, tc.messages, tc.decided)
		}
	}
}

// decideStage decides every message, allocating nothing.
type decideStage struct{}

func (decideStage) Decide(t *Turn) bool {
	t.Outcome.LogID, t.Outcome.Status = t.Log.ID, core.StatusDelivered
	return true
}

// TestStagesAllocateNothing: going through the stages (their timing and
// counters) allocates nothing per message.
func TestStagesAllocateNothing(t *testing.T) {
	list := stages{{name: "a", stage: passStage{}}, {name: "b", stage: passStage{}}, {name: "c", stage: passStage{}}, {name: "d", stage: decideStage{}}}
	turn := &Turn{Log: &core.Log{ID: 1}}
	if n := testing.AllocsPerRun(100, func() { list.decide(turn) }); n != 0 {
		t.Errorf("%v allocations per message, want 0", n)
	}
	if c := list.costs(); c[3].Messages != 101 || c[3].Decided != 101 || c[0].Decided != 0 {
		t.Errorf("costs %+v", c)
	}
}
