package delivery

import (
	"context"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// CaptureGuard is the staging guard (app/capture): it decides whether a
// message is held rather than sent, because the running site looks like
// a copy of the live one or its environment is not production.
type CaptureGuard interface {
	// Holds reports whether msg is captured now and, when it is, the
	// sentence that says why. It must answer fast (a cached state): it
	// is asked once per message. When the state cannot be worked out it
	// answers with the last known state; with none known yet it returns
	// an error, and the message is neither sent nor captured: it waits
	// in the queue, untried, for Options.CaptureRetry.
	Holds(ctx context.Context, msg *core.Message) (why string, hold bool, err error)
}

// captureUnknownResponse is the last error of a message that waits
// because the staging guard does not know yet whether mail is captured.
const captureUnknownResponse = "Waiting for the staging guard: it cannot tell yet whether mail is held on this site, so the message was neither sent nor captured."

// simulationResponse is the attempt of a message captured by simulation
// mode.
const simulationResponse = "Simulation mode: the message was not sent."

// captureOutcome returns the outcome that captures l, and true, when
// simulation mode is on or the guard holds it; a released log is never
// captured again. Nothing is sent and no attempt is counted: the history
// gets one record (outcome simulated or captured) that says why. When
// the guard cannot tell (no state known yet, and reading it fails), the
// outcome, also decided, hands l back to the queue untried, due again
// after CaptureRetry: no attempt, no history record, no alert.
func (s *engine) captureOutcome(ctx context.Context, l *core.Log, st settings) (core.LogOutcome, bool) {
	if l.CaptureReleased {
		return core.LogOutcome{}, false
	}
	a := core.Attempt{LogID: l.ID, At: time.Now().UTC()}
	simulated := false
	switch {
	case st.simulate:
		a.Outcome, a.Response, simulated = core.OutcomeSimulated, simulationResponse, true
	case s.o.Capture != nil:
		why, hold, err := s.o.Capture.Holds(ctx, &l.Message)
		if err != nil {
			// On a copy of a live site, sending would mail its
			// customers; capturing would hold a live site's mail
			// because its database blinked at start. The guard warns
			// once; the message is asked about again shortly.
			out := deferred(l, time.Now().UTC().Add(s.o.CaptureRetry))
			out.LastError = captureUnknownResponse
			return out, true
		}
		if !hold {
			return core.LogOutcome{}, false
		}
		a.Outcome, a.Response = core.OutcomeCaptured, "Captured, not sent: "+why
	default:
		return core.LogOutcome{}, false
	}
	return core.LogOutcome{
		LogID:             l.ID,
		Status:            core.StatusCaptured,
		Attempts:          l.Attempts,
		PhaseAttempts:     l.PhaseAttempts,
		UsedFallback:      l.UsedFallback,
		Simulated:         simulated,
		SentConnectionID:  l.SentConnectionID,
		ProviderMessageID: l.ProviderMessageID,
		LastError:         l.LastError,
		History:           []core.Attempt{a},
	}, true
}
