package dashboard

import (
	"math"

	"github.com/mailsvc/mailsvc/core"
)

// Counts are the final outcomes of a period.
type Counts struct {
	Delivered int64 `json:"delivered"`
	Failed    int64 `json:"failed"`
	// Partial counts the delivered messages some recipients of which
	// were refused (a part of Delivered).
	Partial int64 `json:"partial"`
}

// add counts one roll-up bucket.
func (c *Counts) add(b core.OutcomeBucket) {
	switch b.Status {
	case core.StatusDelivered:
		c.Delivered += b.Count
	case core.StatusFailed:
		c.Failed += b.Count
	case core.OutcomeCountPartial:
		c.Partial += b.Count
	}
}

// SuccessRate returns delivered / (delivered + failed) as a percentage
// rounded to two decimals, or nil when there is no outcome to rate.
func (c Counts) SuccessRate() *float64 { return rate(c.Delivered, c.Failed) }

// rate returns ok / (ok + notYet) as a percentage rounded to two
// decimals, or nil when both are 0.
func rate(ok, notYet int64) *float64 {
	total := ok + notYet
	if total == 0 {
		return nil
	}
	r := math.Round(float64(ok)*10000/float64(total)) / 100
	return &r
}
