package core

import "strings"

// Recipient outcomes: what became of one recipient of a message.
const (
	// RecipientDelivered: the provider accepted the message for it.
	RecipientDelivered = "delivered"
	// RecipientDeferred: the provider answered temporarily (an SMTP 4xx
	// such as 452 "too many recipients", or the failed call of a part);
	// the next attempt sends to it again.
	RecipientDeferred = "deferred"
	// RecipientRefused: the provider refused it for good (an SMTP 5xx),
	// or its retries ran out; it is not sent again.
	RecipientRefused = "refused"
)

// RecipientOutcome is the outcome of one recipient of a message whose
// recipients did not all get it in one go.
type RecipientOutcome struct {
	Email  string `json:"email"`
	Status string `json:"status"`
	// Reply is the provider's answer for this recipient (an SMTP reply
	// line, or the error of the call that carried it); "" when delivered
	// in the same call as the rest.
	Reply string `json:"reply,omitempty"`
}

// RecipientOutcomes is the per-recipient record of a log, stored only
// when not every recipient was delivered in one go.
type RecipientOutcomes []RecipientOutcome

// Count returns how many of the outcomes have status.
func (r RecipientOutcomes) Count(status string) int {
	n := 0
	for _, o := range r {
		if o.Status == status {
			n++
		}
	}
	return n
}

// Deferred returns the addresses still to be sent to.
func (r RecipientOutcomes) Deferred() map[string]bool {
	out := map[string]bool{}
	for _, o := range r {
		if o.Status == RecipientDeferred {
			out[strings.ToLower(o.Email)] = true
		}
	}
	return out
}

// RecipientCaps are the most recipients a provider takes in one call
// (one message, one SMTP transaction): 0 means no cap. PerMessage counts
// To, Cc and Bcc together; To, Cc and Bcc cap each list on its own. The
// delivery engine sends a message over a cap as several calls with the
// same content (SplitRecipients).
type RecipientCaps struct {
	PerMessage int `json:"per_message,omitempty"`
	To         int `json:"to,omitempty"`
	Cc         int `json:"cc,omitempty"`
	Bcc        int `json:"bcc,omitempty"`
	// NeedsTo: the provider refuses a call without a To recipient. A
	// part of a split message with none is sent as one call per
	// recipient, each shown as the To of its own call (ForEnvelope), so
	// that no Cc or Bcc recipient sees another.
	NeedsTo bool `json:"needs_to,omitempty"`
}

// Zero reports whether no cap is set.
func (c RecipientCaps) Zero() bool {
	return c.PerMessage == 0 && c.To == 0 && c.Cc == 0 && c.Bcc == 0
}

// SplitRecipients divides the recipients of m that want lists (all of
// them when want is nil; keys are lower-cased addresses) into parts that
// each respect caps, in order: To first, then Cc, then Bcc, each part
// filled as far as the caps allow; with caps.NeedsTo a part without a To
// recipient is divided into parts of one. It returns nil when nothing is to be
// sent.
func SplitRecipients(m *Message, want map[string]bool, caps RecipientCaps) [][]Address {
	type list struct {
		addrs []Address
		cap   int
	}
	lists := [3]list{{m.To, caps.To}, {m.Cc, caps.Cc}, {m.Bcc, caps.Bcc}}
	var remaining [3][]Address
	total := 0
	for i, l := range lists {
		for _, a := range l.addrs {
			if want == nil || want[strings.ToLower(a.Email)] {
				remaining[i] = append(remaining[i], a)
			}
		}
		total += len(remaining[i])
	}
	if total == 0 {
		return nil
	}
	var parts [][]Address
	for total > 0 {
		var part []Address
		room := caps.PerMessage
		if room <= 0 {
			room = total
		}
		for i := range remaining {
			n := len(remaining[i])
			if c := lists[i].cap; c > 0 {
				n = min(n, c)
			}
			n = min(n, room)
			part = append(part, remaining[i][:n]...)
			remaining[i] = remaining[i][n:]
			room -= n
			total -= n
		}
		if caps.NeedsTo && len(part) > 1 && !hasTo(part, lists[0].addrs) {
			for _, a := range part {
				parts = append(parts, []Address{a})
			}
			continue
		}
		parts = append(parts, part)
	}
	return parts
}

// hasTo reports whether part holds an address of the To list.
func hasTo(part []Address, to []Address) bool {
	in := make(map[string]bool, len(to))
	for _, a := range to {
		in[strings.ToLower(a.Email)] = true
	}
	for _, a := range part {
		if in[strings.ToLower(a.Email)] {
			return true
		}
	}
	return false
}

// EnvelopeRecipients returns the addresses a send of m delivers to: its
// Envelope when set, else To, Cc and Bcc.
func (m *Message) EnvelopeRecipients() []Address {
	if len(m.Envelope) > 0 {
		return m.Envelope
	}
	return m.Recipients()
}

// ForEnvelope returns m with To, Cc and Bcc reduced to the addresses of
// its Envelope (m itself when Envelope is empty), for providers whose API
// takes the recipients only as the header fields: a part of a split
// message then shows the part's To and Cc recipients, and a part of one
// Cc or Bcc recipient shows it as To.
func (m *Message) ForEnvelope() *Message {
	if len(m.Envelope) == 0 {
		return m
	}
	in := make(map[string]bool, len(m.Envelope))
	for _, a := range m.Envelope {
		in[strings.ToLower(a.Email)] = true
	}
	keep := func(list []Address) []Address {
		var out []Address
		for _, a := range list {
			if in[strings.ToLower(a.Email)] {
				out = append(out, a)
			}
		}
		return out
	}
	c := *m
	c.To, c.Cc, c.Bcc, c.Envelope = keep(m.To), keep(m.Cc), keep(m.Bcc), nil
	if len(c.To) == 0 && len(m.Envelope) == 1 {
		// A part of one Cc or Bcc recipient: shown as its To.
		c.To, c.Cc, c.Bcc = m.Envelope, nil, nil
	}
	return &c
}

// SetRecipients records rs as l's per-recipient outcomes, with the
// counts derived from them; l.Status is set first.
func (l *Log) SetRecipients(rs RecipientOutcomes) {
	l.Recipients = rs
	l.RecipientsRefused = rs.Count(RecipientRefused)
	l.Partial = l.Status == StatusDelivered && l.RecipientsRefused > 0
}
