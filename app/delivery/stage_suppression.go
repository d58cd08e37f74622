package delivery

// suppressionStage fails a message one of whose recipients the batch's
// check found on the suppression list (suppressedOutcome).
type suppressionStage struct{ e *engine }

// Decide implements Stage.
func (s suppressionStage) Decide(t *Turn) bool {
	out, ok := s.e.suppressedOutcome(t.Log, t.listed)
	if ok {
		t.Outcome = out
	}
	return ok
}
