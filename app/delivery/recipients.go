package delivery

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Per-recipient delivery. A message goes out in one Send when its driver
// has no recipient cap it exceeds and no earlier attempt left recipients
// deferred: the common case costs nothing more. Otherwise sendRecipients
// sends it as parts (core.SplitRecipients), the same content to each
// part's envelope, and merges the answers into one outcome per
// recipient, which the store keeps beside the log (RecipientOutcomes):
// delivered, deferred (sent again on the next attempt, alone) or refused.

// sent is what one attempt's sends made of a message.
type sent struct {
	receipt core.Receipt
	// ids are the provider message ids of every part, when the message
	// went out in several calls.
	ids []string
	// err is the error of the attempt when no part was accepted (for a
	// part-wise send, the last part's error).
	err error
}

// sendRecipients sends msg (l's message, sender applied) through tr: in
// one call, or in parts when caps or l's deferred recipients ask for it.
// It returns receipt.Recipients set whenever not every recipient got the
// message in one go.
func sendRecipients(ctx context.Context, tr core.Transport, msg *core.Message, l *core.Log, caps core.RecipientCaps) sent {
	var want map[string]bool
	if l.Recipients != nil {
		want = l.Recipients.Deferred()
	}
	if want == nil && withinCaps(msg, caps) {
		rc, err := tr.Send(ctx, msg)
		return sent{receipt: rc, err: err}
	}
	parts := core.SplitRecipients(msg, want, caps)
	if len(parts) > 1 {
		msg = withMessageID(l, msg)
	}
	outcomes := make(map[string]core.RecipientOutcome, len(msg.To)+len(msg.Cc)+len(msg.Bcc))
	for _, o := range l.Recipients {
		outcomes[strings.ToLower(o.Email)] = o
	}
	var res sent
	var replies []string
	accepted := false
	var stopped error
	for _, part := range parts {
		if stopped != nil {
			for _, a := range part {
				outcomes[strings.ToLower(a.Email)] = core.RecipientOutcome{Email: a.Email, Status: core.RecipientDeferred, Reply: stopped.Error()}
			}
			continue
		}
		m := *msg
		m.Envelope = part
		rc, err := tr.Send(ctx, &m)
		mergeOutcomes(outcomes, part, rc, err)
		if err != nil {
			res.err = err
			replies = append(replies, fmt.Sprintf("%d recipients: %v", len(part), err))
			if _, limited := core.AsRateLimited(err); limited || ctx.Err() != nil {
				// The provider asks to slow down, or the attempt's time is
				// up: the remaining parts wait for the next attempt.
				stopped = err
			}
			continue
		}
		accepted = true
		if res.receipt.MessageID == "" {
			res.receipt.MessageID = rc.MessageID
		}
		if rc.MessageID != "" {
			res.ids = append(res.ids, rc.MessageID)
		}
		reply := rc.Response
		if rc.MessageID != "" && !strings.Contains(reply, rc.MessageID) {
			reply = strings.TrimSpace(reply + " (id " + rc.MessageID + ")")
		}
		replies = append(replies, fmt.Sprintf("%d recipients: %s", len(part), reply))
	}
	if len(parts) > 1 {
		shown := replies
		if len(shown) > maxRepliesShown {
			shown = append(shown[:maxRepliesShown:maxRepliesShown], fmt.Sprintf("%d more", len(replies)-maxRepliesShown))
		}
		res.receipt.Response = fmt.Sprintf("%d calls: %s", len(parts), strings.Join(shown, "; "))
	} else if len(replies) > 0 {
		res.receipt.Response = strings.TrimPrefix(replies[0], fmt.Sprintf("%d recipients: ", len(parts[0])))
	}
	if len(res.ids) <= 1 {
		res.ids = nil
	}
	res.receipt.Recipients = orderedOutcomes(msg, outcomes)
	switch {
	case accepted:
		// A part was accepted: the attempt is not a failure of the whole
		// message, whatever another part answered.
		res.err = nil
	case res.err == nil:
		res.err = core.Permanent(errors.New("no recipient left to send to"))
	}
	return res
}

// maxRepliesShown bounds the calls' replies an attempt's response lists
// (a Bcc-only message may take one call per recipient).
const maxRepliesShown = 10

// withinCaps reports whether msg goes out in one call under caps (a
// message without a To recipient never does where the provider needs
// one: its recipients go one per call, each as its To).
func withinCaps(msg *core.Message, caps core.RecipientCaps) bool {
	if caps.NeedsTo && len(msg.To) == 0 {
		return false
	}
	if caps.Zero() {
		return true
	}
	over := func(n, limit int) bool { return limit > 0 && n > limit }
	return !over(len(msg.To)+len(msg.Cc)+len(msg.Bcc), caps.PerMessage) &&
		!over(len(msg.To), caps.To) && !over(len(msg.Cc), caps.Cc) && !over(len(msg.Bcc), caps.Bcc)
}

// mergeOutcomes records in outcomes what one call answered for the
// recipients of part: the transport's own per-recipient outcomes when it
// gave them, else all delivered (nil err), deferred (temporary) or
// refused (permanent).
func mergeOutcomes(outcomes map[string]core.RecipientOutcome, part []core.Address, rc core.Receipt, err error) {
	if rc.Recipients != nil {
		for _, o := range rc.Recipients {
			outcomes[strings.ToLower(o.Email)] = o
		}
		return
	}
	o := core.RecipientOutcome{Status: core.RecipientDelivered}
	if err != nil {
		o.Status, o.Reply = core.RecipientRefused, err.Error()
		if core.IsTemporary(err) {
			o.Status = core.RecipientDeferred
		}
	}
	for _, a := range part {
		o.Email = a.Email
		outcomes[strings.ToLower(a.Email)] = o
	}
}

// orderedOutcomes lists outcomes in msg's recipient order, each address
// once.
func orderedOutcomes(msg *core.Message, outcomes map[string]core.RecipientOutcome) core.RecipientOutcomes {
	out := make(core.RecipientOutcomes, 0, len(outcomes))
	seen := make(map[string]bool, len(outcomes))
	for _, a := range msg.Recipients() {
		k := strings.ToLower(a.Email)
		if o, ok := outcomes[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, o)
		}
	}
	return out
}

// recipientsOutcome classifies an attempt that has per-recipient
// outcomes: temporary while some are deferred, delivered once none is and
// some got it, permanent when all were refused. It also returns the
// summary kept as the log's last error (refusals and deferrals), or "".
func recipientsOutcome(rs core.RecipientOutcomes) (outcome, summary string) {
	delivered, deferred, refused := rs.Count(core.RecipientDelivered), rs.Count(core.RecipientDeferred), rs.Count(core.RecipientRefused)
	switch {
	case deferred > 0:
		outcome = core.OutcomeTemporary
	case delivered > 0:
		outcome = core.OutcomeDelivered
	default:
		outcome = core.OutcomePermanent
	}
	if deferred+refused == 0 {
		return outcome, ""
	}
	var first string
	for _, o := range rs {
		if o.Status != core.RecipientDelivered {
			first = o.Email + ": " + o.Reply
			break
		}
	}
	return outcome, fmt.Sprintf("%d of %d recipients delivered, %d deferred, %d refused (first: %s)",
		delivered, len(rs), deferred, refused, first)
}

// settlePartial ends a log whose retries ran out but that some recipients
// got: it is delivered (partial), its deferred recipients refused. It
// reports false, changing nothing, when nobody got the message.
func settlePartial(out *core.LogOutcome) bool {
	if out.Recipients.Count(core.RecipientDelivered) == 0 {
		return false
	}
	rs := make(core.RecipientOutcomes, len(out.Recipients))
	for i, o := range out.Recipients {
		if o.Status == core.RecipientDeferred {
			o.Status, o.Reply = core.RecipientRefused, "retries ran out: "+o.Reply
		}
		rs[i] = o
	}
	out.Recipients = rs
	_, out.LastError = recipientsOutcome(rs)
	out.Status = core.StatusDelivered
	return true
}

// driverCaps returns the recipient caps of the driver slug (none for an
// unknown driver).
func driverCaps(slug string) core.RecipientCaps {
	if d, ok := core.LookupDriver(slug); ok {
		return d.RecipientCaps
	}
	return core.RecipientCaps{}
}
