package delivery

import (
	"context"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// StageFlood names the flood guard's stage (app/floodguard), which
// FloodStage adds right after the staging guard's.
const StageFlood = "flood"

// FloodGuard is the flood guard (app/floodguard): it counts each message
// of a source and decides whether it is held because the source floods.
type FloodGuard interface {
	// Holds reports whether l's message is held now and, when it is,
	// the sentence that says why. It must answer fast (in memory): it
	// is asked once per message.
	Holds(ctx context.Context, l *core.Log) (why string, hold bool)
}

// FloodStage returns the flood guard's stage, for Options.Stages: it
// runs after capture and before every other built-in stage, so a held
// message is never tried.
func FloodStage(g FloodGuard) AddedStage {
	return AddedStage{Name: StageFlood, Before: StageUncertain, Stage: floodStage{g}}
}

// floodStage holds the message the flood guard holds: nothing is sent
// and no attempt is counted; the history gets one record (outcome held)
// that says why.
type floodStage struct{ g FloodGuard }

// Decide implements Stage.
func (f floodStage) Decide(t *Turn) bool {
	why, hold := f.g.Holds(t.ctx, t.Log)
	if !hold {
		return false
	}
	l := t.Log
	t.Outcome = core.LogOutcome{
		LogID:             l.ID,
		Status:            core.StatusHeld,
		Attempts:          l.Attempts,
		PhaseAttempts:     l.PhaseAttempts,
		UsedFallback:      l.UsedFallback,
		SentConnectionID:  l.SentConnectionID,
		ProviderMessageID: l.ProviderMessageID,
		LastError:         l.LastError,
		History: []core.Attempt{{LogID: l.ID, At: time.Now().UTC(), Outcome: core.OutcomeHeld,
			Response: "Held by the flood guard, not sent: " + why}},
	}
	return true
}
