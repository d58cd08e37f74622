package delivery

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// The delivery decision is a list of named stages, assembled in one place
// (newStages, called by New): each claimed message goes through them in
// order until one decides it. A stage decides the message (sets the
// turn's Outcome: delivered, failed, captured, or back to the queue for
// later) and returns true, or passes it on to the next stage and returns
// false. The last stage, send, always decides.
//
//	capture      the staging guard and simulation mode hold it (stage_capture.go)
//	uncertain    an uncertain attempt's lookup, or its spent retries (stage_uncertain.go)
//	suppression  a recipient on the suppression list fails it (stage_suppression.go)
//	site         the site's own settings and the connections it may use (stage_site.go)
//	site_quota   the network site's quota holds or fails it (stage_sitequota.go)
//	chooser      an add-on's list of connections sends it (stage_chooser.go)
//	send         its connection, the default, then the fallback (stage_send.go)
//
// A module adds a stage by registration (Options.Stages) before a
// built-in one. Each stage's time and how many messages it saw and
// decided are counted (Service.StageCosts).

// Names of the built-in stages, in their order.
const (
	StageCapture     = "capture"
	StageUncertain   = "uncertain"
	StageSuppression = "suppression"
	StageSite        = "site"
	StageSiteQuota   = "site_quota"
	StageChooser     = "chooser"
	StageSend        = "send"
)

// Stage is one step of the delivery decision.
type Stage interface {
	// Decide decides t's message (sets t.Outcome) and returns true, or
	// leaves it to the next stage and returns false. It runs on the
	// delivery path, once per message: it must answer fast.
	Decide(t *Turn) bool
}

// AddedStage is a stage a module adds to the decision (Options.Stages).
type AddedStage struct {
	// Name names the stage in StageCosts.
	Name string
	// Before is the built-in stage it runs before (one of the Stage*
	// names); empty or unknown means before StageSend, the last.
	Before string
	Stage  Stage
}

// Turn is one claimed message's way through the stages: the log, the
// outcome once a stage decided it, and what the engine's stages share
// (the batch's settings and connections, the suppression list's answer,
// the site quota's admission).
type Turn struct {
	// Log is the claimed message (read only).
	Log *core.Log
	// Outcome is the message's outcome, set by the stage that decides it.
	Outcome core.LogOutcome

	// ctx is the work's context, stop the one whose end hands messages
	// not yet sending back to the queue.
	ctx, stop context.Context
	st        settings
	conns     *connLookup
	listed    suppressed
	// admitted: the site quota counted this message (given back when it
	// is not tried after all).
	admitted bool
	// held is the send slot the message's lane granted before the
	// decision (heldslot.go), or nil.
	held *heldSlot
}

// Context returns the context the turn's work runs under.
func (t *Turn) Context() context.Context { return t.ctx }

// StageCost is what one stage cost since the service started: the
// messages it saw, those it decided, and the time it took on them (for
// send, the attempt with its wait for a send slot).
type StageCost struct {
	Name     string
	Messages int64
	Decided  int64
	Time     time.Duration
}

// namedStage is a stage of the list with its counters.
type namedStage struct {
	name                       string
	stage                      Stage
	messages, decided, elapsed atomic.Int64
}

// stages is the decision's list of stages, in order.
type stages []*namedStage

// newStages assembles the decision: the built-in stages in their order,
// with the stages added in o.Stages each before the one it names.
func newStages(e *engine, added []AddedStage) stages {
	list := stages{
		{name: StageCapture, stage: captureStage{e}},
		{name: StageUncertain, stage: uncertainStage{e}},
		{name: StageSuppression, stage: suppressionStage{e}},
		{name: StageSite, stage: siteStage{e}},
		{name: StageSiteQuota, stage: siteQuotaStage{e}},
		{name: StageChooser, stage: chooserStage{e}},
		{name: StageSend, stage: sendStage{e}},
	}
	for _, a := range added {
		at := len(list) - 1 // before send
		for i, s := range list[:len(list)-1] {
			if s.name == a.Before {
				at = i
				break
			}
		}
		list = append(list[:at], append(stages{{name: a.Name, stage: a.Stage}}, list[at:]...)...)
	}
	return list
}

// decide runs t through the stages until one decides it, and returns
// its outcome.
func (list stages) decide(t *Turn) core.LogOutcome {
	start := time.Now()
	for _, s := range list {
		done := s.stage.Decide(t)
		end := time.Now()
		s.messages.Add(1)
		s.elapsed.Add(int64(end.Sub(start)))
		start = end
		if done {
			s.decided.Add(1)
			return t.Outcome
		}
	}
	// Not reached: send decides every message it gets.
	return t.Outcome
}

// costs returns each stage's counters, in order.
func (list stages) costs() []StageCost {
	out := make([]StageCost, len(list))
	for i, s := range list {
		out[i] = StageCost{Name: s.name, Messages: s.messages.Load(), Decided: s.decided.Load(), Time: time.Duration(s.elapsed.Load())}
	}
	return out
}

// StageCosts returns what each stage of the delivery decision cost
// since the service started, in the stages' order.
func (s *Service) StageCosts() []StageCost { return s.stages.costs() }

// StageNames returns the names of the decision's stages, in order.
func (s *Service) StageNames() []string {
	names := make([]string, len(s.stages))
	for i, st := range s.stages {
		names[i] = st.name
	}
	return names
}
