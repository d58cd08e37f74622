package delivery

// captureStage holds a message the staging guard captures, or that
// simulation mode records as sent without sending it (captureOutcome);
// a released message passes on. While the guard knows no state and
// cannot read it, the message goes back to the queue untried, due again
// after Options.CaptureRetry.
type captureStage struct{ e *engine }

// Decide implements Stage.
func (c captureStage) Decide(t *Turn) bool {
	out, ok := c.e.captureOutcome(t.ctx, t.Log, t.st)
	if ok {
		t.Outcome = out
	}
	return ok
}
