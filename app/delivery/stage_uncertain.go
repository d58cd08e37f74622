package delivery

// uncertainStage decides a message whose last attempt was uncertain:
// delivered (or failed) when the lookup finds it (resolveUncertain),
// handed to the fallback or failed when it was not found and its
// retries are spent (uncertainSpent). Not found with retries left, it
// passes on to be sent again with the same Message-ID.
type uncertainStage struct{ e *engine }

// Decide implements Stage.
func (u uncertainStage) Decide(t *Turn) bool {
	if !uncertainPending(t.Log) {
		return false
	}
	if out, ok := u.e.resolveUncertain(t.ctx, t.Log, t.st, t.conns); ok {
		t.Outcome = out
		return true
	}
	if t.Log.PhaseAttempts > t.st.maxRetries {
		t.Outcome = u.e.uncertainSpent(t.Log, t.st, t.conns)
		u.e.logIfFailed(t.Log, &t.Outcome, t.conns)
		return true
	}
	return false
}
