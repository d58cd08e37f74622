package analytics

import (
	"math"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// Figures are the delivery figures of one period (of everything, one
// connection or one source). Sent counts the messages that reached a
// final outcome (delivered + failed); Bounced and Complained count the
// messages a provider reported as bounced or complained about (by the
// event's time). Rates are percentages of Sent rounded to two decimals,
// null when nothing was sent.
type Figures struct {
	Sent          int64    `json:"sent"`
	Delivered     int64    `json:"delivered"`
	Failed        int64    `json:"failed"`
	Bounced       int64    `json:"bounced"`
	Complained    int64    `json:"complained"`
	DeliveryRate  *float64 `json:"delivery_rate"`
	FailureRate   *float64 `json:"failure_rate"`
	BounceRate    *float64 `json:"bounce_rate"`
	ComplaintRate *float64 `json:"complaint_rate"`
}

// addOutcome counts count messages that reached status.
func (f *Figures) addOutcome(status string, count int64) {
	switch status {
	case core.StatusDelivered:
		f.Delivered += count
	case core.StatusFailed:
		f.Failed += count
	}
}

// addEvent counts messages that received a bounce or complaint.
func (f *Figures) addEvent(event string, messages int64) {
	switch event {
	case events.EventBounced:
		f.Bounced += messages
	case events.EventComplained:
		f.Complained += messages
	}
}

// rated returns f with Sent and the rates filled in.
func (f Figures) rated() Figures {
	f.Sent = f.Delivered + f.Failed
	f.DeliveryRate = percent(f.Delivered, f.Sent)
	f.FailureRate = percent(f.Failed, f.Sent)
	f.BounceRate = percent(f.Bounced, f.Sent)
	f.ComplaintRate = percent(f.Complained, f.Sent)
	return f
}

// percent returns part/whole in percent rounded to two decimals, nil when
// whole is 0.
func percent(part, whole int64) *float64 {
	if whole == 0 {
		return nil
	}
	r := math.Round(float64(part)*10000/float64(whole)) / 100
	return &r
}

// Change compares a period with the previous one: counts as differences
// (current − previous), SentPercent as the relative change of Sent in
// percent (null when the previous period sent nothing), and rates as
// differences in percentage points (null when either rate is).
type Change struct {
	Sent          int64    `json:"sent"`
	SentPercent   *float64 `json:"sent_percent"`
	Delivered     int64    `json:"delivered"`
	Failed        int64    `json:"failed"`
	Bounced       int64    `json:"bounced"`
	Complained    int64    `json:"complained"`
	DeliveryRate  *float64 `json:"delivery_rate"`
	FailureRate   *float64 `json:"failure_rate"`
	BounceRate    *float64 `json:"bounce_rate"`
	ComplaintRate *float64 `json:"complaint_rate"`
}

// change compares cur with prev (both rated).
func change(cur, prev Figures) Change {
	c := Change{
		Sent: cur.Sent - prev.Sent, Delivered: cur.Delivered - prev.Delivered, Failed: cur.Failed - prev.Failed,
		Bounced: cur.Bounced - prev.Bounced, Complained: cur.Complained - prev.Complained,
		DeliveryRate: points(cur.DeliveryRate, prev.DeliveryRate), FailureRate: points(cur.FailureRate, prev.FailureRate),
		BounceRate: points(cur.BounceRate, prev.BounceRate), ComplaintRate: points(cur.ComplaintRate, prev.ComplaintRate),
	}
	if prev.Sent > 0 {
		r := math.Round(float64(cur.Sent-prev.Sent)*10000/float64(prev.Sent)) / 100
		c.SentPercent = &r
	}
	return c
}

// points returns a − b rounded to two decimals, nil when either is nil.
func points(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	r := math.Round((*a-*b)*100) / 100
	return &r
}

// Comparison is one row's figures in the chosen period, the previous one
// and the change between them.
type Comparison struct {
	Current  Figures `json:"current"`
	Previous Figures `json:"previous"`
	Change   Change  `json:"change"`
}

// compare rates cur and prev and compares them.
func compare(cur, prev Figures) Comparison {
	cur, prev = cur.rated(), prev.rated()
	return Comparison{Current: cur, Previous: prev, Change: change(cur, prev)}
}
