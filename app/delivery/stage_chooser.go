package delivery

// chooserStage sends a message that names no connection through the
// list an add-on's chooser gives (decideChosen); with no chooser, or no
// opinion from it, the message passes on.
type chooserStage struct{ e *engine }

// Decide implements Stage.
func (c chooserStage) Decide(t *Turn) bool {
	out, ok := c.e.decideChosen(t.ctx, t.stop, t.Log, t.st, t.conns, t.held)
	if ok {
		c.e.logIfFailed(t.Log, &out, t.conns)
		t.Outcome = out
	}
	return ok
}
