package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// LogEnqueuer queues a new message and wakes the workers
// (delivery.Service.Enqueue).
type LogEnqueuer interface {
	Enqueue(ctx context.Context, l *core.Log) (int64, error)
}

// MaxResendRecipients bounds the recipients of a resend to others.
const MaxResendRecipients = 100

// ResendRecipients are the recipients a resend sends to in place of the
// original ones. A nil list was not given; Given reports whether any was.
type ResendRecipients struct {
	To  []string
	Cc  []string
	Bcc []string
}

// Given reports whether the resend names recipients of its own: then the
// lists replace the original To, Cc and Bcc together (a list not given is
// empty), and the message goes out as a new log.
func (r ResendRecipients) Given() bool { return r.To != nil || r.Cc != nil || r.Bcc != nil }

// parse validates the lists (each entry "user@example.com" or
// "Name <user@example.com>"), with one message per bad field, and
// returns them as addresses, repeats within a list dropped.
func (r ResendRecipients) parse() (to, cc, bcc []core.Address, err error) {
	fields := map[string]string{}
	one := func(key string, list []string) []core.Address {
		out := []core.Address{}
		for _, s := range list {
			a, perr := core.ParseAddress(s)
			if perr != nil || !core.ValidEmail(a.Email) {
				fields[key] = fmt.Sprintf("%q is not an email address.", s)
				return nil
			}
			if !slices.ContainsFunc(out, func(b core.Address) bool { return strings.EqualFold(a.Email, b.Email) }) {
				out = append(out, a)
			}
		}
		return out
	}
	to, cc, bcc = one("to", r.To), one("cc", r.Cc), one("bcc", r.Bcc)
	total := len(to) + len(cc) + len(bcc)
	switch {
	case len(fields) > 0:
	case total == 0:
		fields["to"] = "At least one recipient is required in to, cc or bcc."
	case total > MaxResendRecipients:
		fields["to"] = fmt.Sprintf("At most %d recipients in to, cc and bcc together.", MaxResendRecipients)
	}
	return to, cc, bcc, core.Invalid(fields)
}

// droppedOnResend are the fields of a raw header block that do not go
// with a message resent to other recipients: the recipients and the
// message's identity (new ones are written), the trace and signatures of
// the first sending (a DKIM signature covers To and would fail), and
// what the message's own fields say or the MIME writer rebuilds.
var droppedOnResend = map[string]bool{
	"to": true, "cc": true, "bcc": true, "message-id": true, "date": true,
	"received": true, "return-path": true, "delivered-to": true, "x-original-to": true,
	"dkim-signature": true, "arc-seal": true, "arc-message-signature": true,
	"arc-authentication-results": true, "authentication-results": true,
	"from": true, "reply-to": true, "subject": true, "mime-version": true,
	"content-type": true, "content-transfer-encoding": true, "content-disposition": true, "content-id": true,
}

// forOthers returns a copy of msg addressed to new recipients: To, Cc and
// Bcc replaced, so the To and Cc fields written name the new recipients
// (Bcc never goes in the header), and no Message-ID (the new message gets
// its own). A message received whole keeps the other fields of its raw
// header block as custom headers and is then built from its fields.
func forOthers(msg core.Message, to, cc, bcc []core.Address) core.Message {
	out := msg
	out.To, out.Cc, out.Bcc = to, cc, bcc
	out.Envelope = nil
	out.Headers = nil
	for _, h := range msg.Headers {
		if !droppedOnResend[strings.ToLower(strings.TrimSpace(h.Name))] {
			out.Headers = append(out.Headers, h)
		}
	}
	if msg.RawHeader != "" {
		given := map[string]bool{} // custom headers set since win over raw fields
		for _, h := range out.Headers {
			given[strings.ToLower(h.Name)] = true
		}
		for _, f := range rawHeaderFields(msg.RawHeader) {
			if lower := strings.ToLower(f.Name); !droppedOnResend[lower] && !given[lower] {
				out.Headers = append(out.Headers, f)
			}
		}
		out.RawHeader = ""
	}
	return out
}

// rawHeaderFields splits a header block into its fields, unfolded.
func rawHeaderFields(block string) []core.Header {
	var out []core.Header
	for _, line := range strings.Split(strings.ReplaceAll(block, "\r\n", "\n"), "\n") {
		if line == "" {
			continue
		}
		if (line[0] == ' ' || line[0] == '\t') && len(out) > 0 {
			out[len(out)-1].Value += " " + strings.TrimSpace(line)
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) == "" {
			continue
		}
		out = append(out, core.Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	return out
}

// resendTo queues a copy of log l to the given recipients as a new log
// pointing to l, and returns the new log's id.
func (s *Logs) resendTo(ctx context.Context, l *core.Log, to, cc, bcc []core.Address) (int64, error) {
	orig := l.ID
	nl := &core.Log{
		Message:      forOthers(l.Message, to, cc, bcc),
		ConnectionID: l.ConnectionID,
		Source:       l.Source,
		ResentFrom:   &orig,
	}
	if s.Enqueuer != nil {
		id, err := s.Enqueuer.Enqueue(ctx, nl)
		if err != nil {
			return 0, fmt.Errorf("resend log %d to other recipients: %w", orig, err)
		}
		return id, nil
	}
	if err := nl.Message.Validate(); err != nil {
		return 0, err
	}
	if err := s.Store.EnqueueLog(ctx, nl); err != nil {
		return 0, fmt.Errorf("resend log %d to other recipients: %w", orig, err)
	}
	return nl.ID, nil
}

// ResendOneTo queues one delivered or failed log again to other
// recipients, as a new log whose resent_from is id, and returns the new
// log's id. Errors are those of ResendOne, and a validation error per bad
// recipient list.
func (s *Logs) ResendOneTo(ctx context.Context, id int64, r ResendRecipients) (int64, error) {
	to, cc, bcc, err := r.parse()
	if err != nil {
		return 0, err
	}
	l, err := s.Store.FindLogByID(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("resend log %d: %w", id, err)
	}
	if l.Status != core.StatusDelivered && l.Status != core.StatusFailed {
		return 0, core.InvalidField("status", fmt.Sprintf("Log %d is %s; only delivered or failed messages can be resent.", id, l.Status))
	}
	if !l.Resendable() {
		return 0, core.Errorf(core.ECONFLICT, "Log %d cannot be resent: %s.", id, l.NotResendableReason())
	}
	if err := s.checkPinned(ctx, l); err != nil {
		return 0, err
	}
	if s.holdsOneTime(ctx, l) {
		return 0, errOneTimeResend(id)
	}
	return s.resendTo(ctx, l, to, cc, bcc)
}

// ResendTo queues each delivered or failed log among ids again to other
// recipients, each as a new log pointing to its original, and returns the
// new logs' ids in the order of ids. Unknown ids, queued or sending logs
// and logs that are not Resendable are skipped, as Resend skips them; so
// are logs pinned to a connection their site may not use (Use).
func (s *Logs) ResendTo(ctx context.Context, ids []int64, r ResendRecipients) ([]int64, error) {
	if err := checkIDs(ids); err != nil {
		return nil, err
	}
	to, cc, bcc, err := r.parse()
	if err != nil {
		return nil, err
	}
	out := []int64{}
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		l, err := s.Store.FindLogByID(ctx, id)
		if core.ErrorCode(err) == core.ENOTFOUND {
			continue
		} else if err != nil {
			return out, fmt.Errorf("resend log %d: %w", id, err)
		}
		if (l.Status != core.StatusDelivered && l.Status != core.StatusFailed) || !l.Resendable() || s.holdsOneTime(ctx, l) {
			continue
		}
		if err := s.checkPinned(ctx, l); core.ErrorCode(err) == core.EINVALID {
			continue
		} else if err != nil {
			return out, err
		}
		nid, err := s.resendTo(ctx, l, to, cc, bcc)
		if err != nil {
			return out, err
		}
		out = append(out, nid)
	}
	return out, nil
}
