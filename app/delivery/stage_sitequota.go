package delivery

// siteQuotaStage counts a network site's message against its quota
// before its first attempt (siteQuotaOutcome): past the quota it waits in
// the queue for the next period or fails, as the network chose; within
// it, it passes on, admitted (the send stage gives the place back when
// the message is not tried after all).
type siteQuotaStage struct{ e *engine }

// Decide implements Stage.
func (q siteQuotaStage) Decide(t *Turn) bool {
	out, held, admitted := q.e.siteQuotaOutcome(t.ctx, t.Log)
	if held {
		t.Outcome = out
		return true
	}
	t.admitted = admitted
	return false
}
