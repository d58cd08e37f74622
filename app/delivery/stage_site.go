package delivery

// siteStage applies what the message's network site set for itself and
// the connections it may use to the turn's settings (forSite), and
// passes the message on: it never decides.
type siteStage struct{ e *engine }

// Decide implements Stage.
func (s siteStage) Decide(t *Turn) bool {
	t.st = s.e.forSite(t.ctx, t.Log, t.st)
	return false
}
